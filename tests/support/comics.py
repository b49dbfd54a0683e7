"""Write real comic books for tests and benchmarks: a CBZ (a zip of pictures, optionally with a
ComicInfo.xml) and a pre-paginated EPUB 3 whose pages are pictures (SVG-wrapped, as
fixed-layout comics are made). Each page is a PNG of its own colour with a dark bar at a
height that tells its number, so a test can see which page is drawn where."""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

COLOURS = [(220, 70, 70), (70, 170, 70), (70, 90, 220), (220, 170, 50), (150, 70, 170)]


def page_colour(index: int) -> tuple[int, int, int]:
    return COLOURS[index % len(COLOURS)]


def png(width: int, height: int, colour: tuple[int, int, int], bar: int = -1) -> bytes:
    """A PNG filled with ``colour``, with a dark bar ``height // 20`` rows tall at row
    ``bar`` (none when negative)."""
    plain = b"\x00" + bytes(colour) * width
    dark = b"\x00" + b"\x20\x20\x20" * width
    tall = max(1, height // 20)
    rows = [dark if 0 <= bar <= y < bar + tall else plain for y in range(height)]

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"".join(rows), 6))
        + chunk(b"IEND", b"")
    )


def page_png(index: int, width: int = 200, height: int = 300) -> bytes:
    return png(width, height, page_colour(index), bar=(index * height // 12) % height)


def make_cbz(
    path: Path,
    pages: int,
    *,
    manga: bool = False,
    title: str = "",
    size: tuple[int, int] = (200, 300),
) -> Path:
    """A CBZ of ``pages`` pictures named so that only a natural sort orders them
    (``page2.png`` before ``page10.png``)."""
    with zipfile.ZipFile(path, "w") as zf:
        for i in range(pages):
            zf.writestr(f"pages/page{i + 1}.png", page_png(i, *size))
        if manga or title:
            zf.writestr(
                "ComicInfo.xml",
                "<?xml version='1.0'?><ComicInfo>"
                + (f"<Title>{title}</Title>" if title else "")
                + "<Writer>Test Writer</Writer>"
                + ("<Manga>YesAndRightToLeft</Manga>" if manga else "<Manga>No</Manga>")
                + "</ComicInfo>",
            )
    return path


def make_fixed_layout_epub(
    path: Path, pages: int, *, rtl: bool = False, title: str = "A Comic"
) -> Path:
    """A pre-paginated EPUB 3: one XHTML page per picture, the picture in an SVG wrapper
    (``<svg><image xlink:href>``), ``page-progression-direction`` as asked."""
    items, refs = [], []
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        zf.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" '
            'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        for i in range(pages):
            zf.writestr(f"OEBPS/images/p{i + 1}.png", page_png(i))
            zf.writestr(
                f"OEBPS/p{i + 1}.xhtml",
                '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml" '
                'xmlns:epub="http://www.idpf.org/2007/ops"><head><title>Page</title>'
                '<meta name="viewport" content="width=200, height=300"/></head><body>'
                '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
                'version="1.1" width="100%" height="100%" viewBox="0 0 200 300">'
                f'<image width="200" height="300" xlink:href="images/p{i + 1}.png"/></svg>'
                "</body></html>",
            )
            items.append(
                f'<item id="p{i + 1}" href="p{i + 1}.xhtml" media-type="application/xhtml+xml"/>'
                f'<item id="i{i + 1}" href="images/p{i + 1}.png" media-type="image/png"/>'
            )
            refs.append(f'<itemref idref="p{i + 1}"/>')
        direction = ' page-progression-direction="rtl"' if rtl else ""
        zf.writestr(
            "OEBPS/content.opf",
            '<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" '
            'version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
            f'<dc:identifier id="id">urn:uuid:comic-test</dc:identifier><dc:title>{title}</dc:title>'
            "<dc:language>ja</dc:language><dc:creator>Test Artist</dc:creator>"
            '<meta property="dcterms:modified">2026-01-01T00:00:00Z</meta>'
            '<meta property="rendition:layout">pre-paginated</meta></metadata>'
            f"<manifest>{''.join(items)}</manifest><spine{direction}>{''.join(refs)}</spine>"
            "</package>",
        )
    return path
