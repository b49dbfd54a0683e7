"""Write real PDFs whose pages are only pictures (a "scanned" book): one RGB image per page,
no text at all. Each page has its own colour and a bar at a height that tells its number, so
a test can see which page is drawn."""

from __future__ import annotations

import zlib
from pathlib import Path

from tests.support.pdfgen import write_pdf

COLOURS = [(200, 60, 60), (60, 160, 60), (60, 80, 200), (200, 160, 40), (140, 60, 160)]
SIZE = 48


def page_colour(index: int) -> tuple[int, int, int]:
    return COLOURS[index % len(COLOURS)]


def _pixels(index: int) -> bytes:
    colour = bytes(page_colour(index))
    bar_row = (index * 5) % SIZE
    rows = []
    for y in range(SIZE):
        rows.append((b"\x20\x20\x20" if y == bar_row else colour) * SIZE)
    return b"".join(rows)


def make_image_pdf(path: Path, pages: int) -> Path:
    """``pages`` pages of A5 size, each a full-page picture and nothing else."""
    objects: list[bytes] = []
    kids = " ".join(f"{3 + 3 * i} 0 R" for i in range(pages))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode())
    for i in range(pages):
        page, content, image = 3 + 3 * i, 4 + 3 * i, 5 + 3 * i
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 420 595] "
            f"/Resources << /XObject << /Im{i} {image} 0 R >> >> /Contents {content} 0 R >>".encode()
        )
        stream = f"q 420 0 0 595 0 0 cm /Im{i} Do Q".encode()
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        data = zlib.compress(_pixels(i))
        objects.append(
            (
                f"<< /Type /XObject /Subtype /Image /Width {SIZE} /Height {SIZE} "
                f"/ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode "
                f"/Length {len(data)} >>\nstream\n"
            ).encode()
            + data
            + b"\nendstream"
        )
        del page
    return write_pdf(path, objects)


def scan_of(source: Path, path: Path, *, dpi: int = 150) -> Path:
    """A "scanned" copy of a text PDF: each page drawn in grey and stored as a picture only
    (no text layer), as a scanner makes them."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(source))
    images: list[tuple[int, int, bytes, float, float]] = []
    try:
        for page in doc:
            w_pt, h_pt = page.get_size()
            bitmap = page.render(scale=dpi / 72, grayscale=True)
            rows = bytes(bitmap.buffer)
            stride, width, height = bitmap.stride, bitmap.width, bitmap.height
            data = b"".join(rows[y * stride : y * stride + width] for y in range(height))
            images.append((width, height, data, w_pt, h_pt))
            bitmap.close()
            page.close()
    finally:
        doc.close()
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{3 + 3 * i} 0 R" for i in range(len(images)))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(images)} >>".encode())
    for i, (width, height, data, w_pt, h_pt) in enumerate(images):
        content, image = 4 + 3 * i, 5 + 3 * i
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {w_pt:.2f} {h_pt:.2f}] "
            f"/Resources << /XObject << /Im{i} {image} 0 R >> >> /Contents {content} 0 R >>".encode()
        )
        stream = f"q {w_pt:.2f} 0 0 {h_pt:.2f} 0 0 cm /Im{i} Do Q".encode()
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        packed = zlib.compress(data)
        objects.append(
            (
                f"<< /Type /XObject /Subtype /Image /Width {width} /Height {height} "
                f"/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode "
                f"/Length {len(packed)} >>\nstream\n"
            ).encode()
            + packed
            + b"\nendstream"
        )
    return write_pdf(path, objects)
