"""Render resources/icons/margin.svg to PNG sizes, and pack .ico (Windows) and .icns (macOS).

Run: .venv/bin/python packaging/make_icons.py   (Qt renders the SVG; no other tools needed)
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ICONS = ROOT / "resources" / "icons"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICNS_TYPES = {16: b"icp4", 32: b"icp5", 64: b"icp6", 128: b"ic07", 256: b"ic08", 512: b"ic09"}


def render_pngs() -> dict[int, bytes]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(ICONS / "margin.svg"))
    if not renderer.isValid():
        raise SystemExit("margin.svg could not be read")
    out: dict[int, bytes] = {}
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        image.save(buffer, "PNG")
        out[size] = bytes(data.data())
        (ICONS / f"margin-{size}.png").write_bytes(out[size])
    return out


def write_ico(pngs: dict[int, bytes], path: Path) -> None:
    """ICO with PNG-compressed entries (Windows Vista and later read them)."""
    sizes = [s for s in (16, 24, 32, 48, 64, 128, 256) if s in pngs]
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = 6 + 16 * len(sizes)
    entries = b""
    blobs = b""
    for size in sizes:
        data = pngs[size]
        dim = 0 if size >= 256 else size
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(data), offset + len(blobs))
        blobs += data
    path.write_bytes(header + entries + blobs)


def write_icns(pngs: dict[int, bytes], path: Path) -> None:
    """ICNS with PNG entries (macOS 10.7 and later)."""
    body = b""
    for size, kind in ICNS_TYPES.items():
        if size in pngs:
            data = pngs[size]
            body += kind + struct.pack(">I", len(data) + 8) + data
    path.write_bytes(b"icns" + struct.pack(">I", len(body) + 8) + body)


def main() -> None:
    pngs = render_pngs()
    write_ico(pngs, ICONS / "margin.ico")
    write_icns(pngs, ICONS / "margin.icns")
    print(f"wrote {len(pngs)} PNGs, margin.ico and margin.icns to {ICONS}")


if __name__ == "__main__":
    main()
