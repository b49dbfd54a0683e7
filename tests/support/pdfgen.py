"""Write real, valid text PDFs for tests and benchmarks (Helvetica, one text page per string).

pypdfium2 reads PDFs but does not lay out text, so this writes the PDF syntax directly:
objects, a content stream per page and a correct cross-reference table.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path


def _escape(line: str) -> bytes:
    raw = line.encode("cp1252", errors="replace")
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def write_pdf(path: Path, objects: Sequence[bytes], *, info: int | None = None) -> Path:
    """Write numbered ``objects`` (object 1 the catalog) as a PDF with a correct
    cross-reference table; ``info`` is the number of the document information object."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    trailer = (
        f"<< /Size {len(objects) + 1} /Root 1 0 R" + (f" /Info {info} 0 R" if info else "") + " >>"
    )
    out += f"trailer\n{trailer}\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))
    return path


def make_text_pdf(path: Path, pages: Sequence[str], *, title: str = "") -> Path:
    """Write ``pages`` (plain text, wrapped to ~90 columns) as a PDF at ``path``."""
    objects: list[bytes] = []
    page_count = len(pages)
    # 1: catalog, 2: pages, 3: font, then per page: page object + content stream
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(page_count))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {page_count} >>".encode())
    objects.append(
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    )
    for i, text in enumerate(pages):
        lines: list[str] = []
        for para in text.split("\n\n"):
            lines.extend(textwrap.wrap(" ".join(para.split()), 90) or [""])
            lines.append("")
        stream = (
            b"BT /F1 10 Tf 12 TL 50 800 Td "
            + b" ".join(b"(" + _escape(ln) + b") '" for ln in lines[:64])
            + b" ET"
        )
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    info = None
    if title:
        objects.append(b"<< /Title (" + _escape(title) + b") >>")
        info = len(objects)
    return write_pdf(path, objects, info=info)


def book_pages(count: int, source: Path, chars: int = 2500) -> list[str]:
    """``count`` pages of real prose cut from ``source`` (repeated when it runs out)."""
    text = " ".join(source.read_text(encoding="utf-8").split())
    pages = []
    pos = 0
    for _ in range(count):
        if pos + chars > len(text):
            pos = 0
        pages.append(text[pos : pos + chars])
        pos += chars
    return pages
