"""Hostile files for the early-refusal tests, made fast in a temp folder."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

MiB = 1024 * 1024


def sparse_file(path: Path, size: int) -> Path:
    """A file of ``size`` bytes that takes no disk space and no time to make (all zeros)."""
    with path.open("wb") as fh:
        fh.truncate(size)
    return path


def deflate_bomb(unpacked: int, byte: bytes = b" ") -> bytes:
    """A zlib stream of ``unpacked`` bytes of ``byte`` that is about 1/1000 of that size.

    One MiB is compressed once after a full flush (which resets the compressor, so the block
    does not depend on what came before) and that block is repeated; the checksum is computed
    for the whole content so the stream is valid."""
    chunk = byte * MiB
    co = zlib.compressobj(9)
    head = co.compress(chunk) + co.flush(zlib.Z_FULL_FLUSH)  # with the 2-byte zlib header
    block = co.compress(chunk) + co.flush(zlib.Z_FULL_FLUSH)
    count = max(1, unpacked // MiB)
    adler = 1
    for _ in range(count):
        adler = zlib.adler32(chunk, adler)
    final = b"\x03\x00"  # an empty final block (fixed Huffman, end of block only)
    return head + block * (count - 1) + final + adler.to_bytes(4, "big")


def pdf_with_bomb(path: Path, unpacked: int) -> Path:
    """A one-page PDF whose content stream unpacks to ``unpacked`` bytes of spaces, followed
    by a little real text (so only the size makes it hostile)."""
    stream = deflate_bomb(unpacked)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    path.write_bytes(bytes(out))
    return path


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def pdf_with_picture_bomb(path: Path, side: int = 16384, page_pt: int = 612) -> Path:
    """A one-page PDF (about 1/1000 of the picture's size on disk) whose page is one
    ``side`` × ``side`` RGB picture of a single grey, whose pixels unpack to ``3 * side²``
    bytes (768 MiB for the default: drawing the page decodes all of them)."""
    unpacked = 3 * side * side
    assert unpacked % MiB == 0, "the picture's bytes must be whole MiB (the bomb's blocks)"
    data = deflate_bomb(unpacked, b"\x80")
    content = f"q {page_pt} 0 0 {page_pt} 0 0 cm /Im0 Do Q".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {page_pt} {page_pt}] "
        "/Resources << /XObject << /Im0 5 0 R >> >> /Contents 4 0 R >>".encode(),
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        (
            f"<< /Type /XObject /Subtype /Image /Width {side} /Height {side} "
            "/ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode "
            f"/Length {len(data)} >>\nstream\n"
        ).encode()
        + data
        + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    path.write_bytes(bytes(out))
    return path
