"""Ink of every illustration of an illustrated Standard Ebooks edition, as Margin draws it
against librsvg's ``rsvg-convert`` (issue 45, item 4), with QtSvg's default checks beside it.

    .venv/bin/python tests/bench/bench_svg_ink.py [FOLDER_OF_SVGS | --git-dir GIT_DIR] [--smoke]

``--git-dir`` reads ``src/epub/images/illustration-*.svg`` from a snapshot of a Standard Ebooks
repository (``standardebooks/lewis-carroll_alices-adventures-in-wonderland``: 42 Tenniel
drawings); ``--smoke`` uses the one drawing in tests/fixtures. Prints each drawing's ink as a
share of the reference's, and the smallest share.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import FIXTURES, machine


def drawings(argv: list[str]) -> list[tuple[str, bytes]]:
    if "--git-dir" in argv:
        git = argv[argv.index("--git-dir") + 1]
        names = subprocess.run(
            ["git", f"--git-dir={git}", "ls-tree", "-r", "--name-only", "HEAD", "src/epub/images"],
            check=True, capture_output=True, text=True,
        ).stdout.split()  # fmt: skip
        return [
            (Path(n).name, subprocess.run(["git", f"--git-dir={git}", "show", f"HEAD:{n}"],
                                          check=True, capture_output=True).stdout)
            for n in names if "illustration" in n
        ]  # fmt: skip
    folder = next((a for a in argv if not a.startswith("--")), None)
    if folder:
        return [(p.name, p.read_bytes()) for p in sorted(Path(folder).glob("*.svg"))]
    rabbit = FIXTURES / "images" / "tenniel_white_rabbit.svg.gz"
    return [(rabbit.name, gzip.decompress(rabbit.read_bytes()))]


def main(argv: list[str]) -> int:
    if shutil.which("rsvg-convert") is None:
        print("skipped: rsvg-convert (Debian's librsvg2-bin) is the reference")
        return 0
    from PySide6.QtCore import QByteArray, QRectF
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    from desktop.reader.book_images import decode_image
    from tests.desktop.reader.test_svg_line_art import ink

    app = QGuiApplication.instance() or QGuiApplication([])
    print(machine())
    shares, defaults = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name, data in drawings(argv):
            image = decode_image(data)
            assert image is not None, name
            path = Path(tmp) / "d.svg"
            path.write_bytes(data)
            size = ["-w", str(image.width()), "-h", str(image.height())]
            subprocess.run(["rsvg-convert", *size, "-o", f"{tmp}/r.png", str(path)], check=True)
            reference = ink(QImage(f"{tmp}/r.png"))
            checked = QImage(image.size(), QImage.Format.Format_ARGB32_Premultiplied)
            checked.fill(0)
            painter = QPainter(checked)
            QSvgRenderer(QByteArray(data)).render(painter, QRectF(checked.rect()))
            painter.end()
            shares.append(ink(image) / reference)
            defaults.append(ink(checked) / reference)
            print(f"{name:34} reference {reference:8d}  Margin {shares[-1]:6.1%}  "
                  f"QtSvg default {defaults[-1]:6.1%}")  # fmt: skip
    print(f"{len(shares)} drawings: Margin draws {min(shares):.1%}–{max(shares):.1%} of the "
          f"reference's ink (QtSvg's default checks: {min(defaults):.1%}–{max(defaults):.1%})")  # fmt: skip
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
