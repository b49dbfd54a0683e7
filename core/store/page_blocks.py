"""Pages stored in blocks (issue 41): a run of a book's consecutive pages, text and HTML,
compressed together, so that deflate finds the repeats between pages (a page alone, 1 to 4
KiB, packs about 2 : 1; a block of pages 2.5 : 1). Without peewee, like ``packing``.

A block (table ``page_block``, keyed by its book and first page) is b"K" and one deflate
stream, against the preset dictionary ``PAGE_DICT``, of its pages one after the other, each
page's text then its own HTML. The page's row keeps where its part is (``page.block`` names
the block, ``page.text`` holds a descriptor): b"B", what its HTML is (as in
``packing.pack_page``: none, the text's paragraphs, or its own), where its text starts in the
block, and how long its text and HTML are. SQL reads a page's text through the view
``page_plain`` (the function ``margin_page``); ``page_content`` gives text and HTML.

A block holds pages up to ``BLOCK_BYTES`` of text and HTML (a longer page is a block of its
own): deflate looks back 32 KiB at most, and a page read inflates one block (about 0.1 ms;
the last few are kept, decoded, for the reads that follow).
"""

from __future__ import annotations

import struct
import threading
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from core.store.packing import page_kind, page_text, plain_html
from core.store.page_dict import PAGE_DICT

BLOCK = b"K"
BLOCK_PAGE = b"B"
BLOCK_BYTES = 32768
# level 6 packs 7 % smaller in twice the time (the 16 MiB EPUB: 6.2 MB in 2.1 s, against
# 6.6 MB in 1.0 s; its pages one by one took 7.8 MB in 1.4 s)
_LEVEL = 3
_NO_HTML, _PLAIN, _OWN_HTML = 0, 1, 2  # packing.page_kind's kinds
_HEAD = 18  # mark, kind, start, text length, HTML length, CRC-32 of text and HTML
_REF = struct.Struct("<cBIIII")  # (one call where six bytes objects were joined: issue 41)
_CACHED = 16  # decoded blocks kept (a chapter's worth of pages read one after another)

# a block's text and HTML, whole (True) or as far as a read needed it (False)
_cache: OrderedDict[tuple[int, int, bytes], tuple[bytes, bool]] = OrderedDict()
_lock = threading.Lock()
# pages' text read by SQL (``margin_page``): the search index without positions reads a
# passage's two pages for each passage it ranks (about 30 µs a page without this)
_TEXTS = 256
_texts: OrderedDict[tuple[bytes, int, int], str] = OrderedDict()


def pack_blocks(
    pages: Sequence[tuple[int, str, str | None]], bodies: Sequence[bytes] | None = None
) -> tuple[list[tuple[int, bytes]], list[tuple[int, bytes]]]:
    """``pages``: (number, text, html) in order (``bodies``: their texts in UTF-8, when the
    caller has them). Returns the blocks, (first page, data), and for each page (the first
    page of its block, its descriptor)."""
    groups, refs = plan_blocks(pages, bodies)
    return [(first, deflate_block(parts)) for first, parts in groups], refs


def plan_blocks(
    pages: Sequence[tuple[int, str, str | None]], bodies: Sequence[bytes] | None = None
) -> tuple[list[tuple[int, list[bytes]]], list[tuple[int, bytes]]]:
    """``pack_blocks`` but for the deflating: the blocks as (first page, the parts that
    ``deflate_block`` makes its data of)."""
    groups: list[tuple[int, list[bytes]]] = []
    refs: list[tuple[int, bytes]] = []
    parts: list[bytes] = []
    size, first = 0, 0
    if bodies is None:
        bodies = [text.encode("utf-8") for _, text, _ in pages]
    for (number, text, html), body in zip(pages, bodies, strict=True):
        kind, extra = page_kind(text, html)
        if parts and size + len(body) + len(extra) > BLOCK_BYTES:
            groups.append((first, parts))
            parts, size = [], 0
        if not parts:
            first = number
        crc = zlib.crc32(extra, zlib.crc32(body))
        refs.append((first, _REF.pack(BLOCK_PAGE, kind, size, len(body), len(extra), crc)))
        parts += (body, extra)
        size += len(body) + len(extra)
    if parts:
        groups.append((first, parts))
    return groups, refs


def deflate_block(parts: list[bytes]) -> bytes:
    """A block's data: its pages' parts one after another, deflated."""
    return _packed(parts)


def _packed(parts: list[bytes]) -> bytes:
    packer = _deflate().compressobj(_LEVEL, zdict=PAGE_DICT)
    return BLOCK + packer.compress(b"".join(parts)) + packer.flush()


_deflater: Any = None


def _deflate() -> Any:
    """zlib-ng's deflate when it is installed, else zlib's: the same format, read by zlib,
    made in about half the time (a 3 MB text's pages: 29 ms against 54 at level 3, and 3 %
    smaller; issue 41). Loaded when the first block is packed (2 ms: never by a reader)."""
    global _deflater
    if _deflater is None:
        try:
            from zlib_ng import zlib_ng

            _deflater = zlib_ng
        except ImportError:
            _deflater = zlib
    return _deflater


def _decoded(data: Any) -> bytes:
    """A block's text and HTML, whole (``_inflated``)."""
    return _inflated(data, None)


def _keep(key: tuple[int, int, bytes], raw: bytes, whole: bool) -> None:
    with _lock:
        found = _cache.get(key)
        if found is None or (not found[1] and len(found[0]) < len(raw)):
            _cache[key] = (raw, whole)
        _cache.move_to_end(key)
        while len(_cache) > _CACHED:
            _cache.popitem(last=False)


def _inflated(data: Any, end: int | None) -> bytes:
    """A block's first ``end`` bytes (text and HTML) at least, or all of them (``None``):
    deflate is read from the block's start only as far as that (a passage's pages are on
    average half way into their block), or taken from the decoded blocks kept (``_cache``).
    A stream cut short before ``end`` is told; one damaged past it is not noticed here (each
    page's CRC-32 is checked by its reader: never a wrong page)."""
    if isinstance(data, memoryview):
        data = bytes(data)
    if not isinstance(data, bytes) or data[:1] != BLOCK:
        raise ValueError("not a stored block of pages")
    # keyed by the stored bytes' length and CRC, and the stream's own checksum of what it
    # holds (its last four bytes): a block replaced by a re-read is never served stale
    key = (len(data), zlib.crc32(data), data[-4:])
    with _lock:
        found = _cache.get(key)
        if found is not None and (found[1] or (end is not None and len(found[0]) >= end)):
            _cache.move_to_end(key)
            return found[0]
    unpacker = zlib.decompressobj(zdict=PAGE_DICT)
    if end is None:
        raw = unpacker.decompress(data[1:])
        short = not unpacker.eof
    else:
        raw = unpacker.decompress(data[1:], end) if end > 0 else b""
        short = len(raw) < end and not unpacker.eof
    if short:
        raise zlib.error("a stored block of pages is cut short")
    _keep(key, raw, unpacker.eof)
    return raw


def block_texts(data: Any, refs: Sequence[Any]) -> list[bytes]:
    """The texts (UTF-8) of pages of one block (their descriptors, ``refs``), in that
    order: the block inflated once, as far as the last of them (``_inflated``), each page
    checked against the CRC-32 its descriptor keeps (as ``margin_page`` reads one)."""
    parts = [_where(ref) for ref in refs]
    raw = _inflated(data, max((start + size + extra for start, size, extra, _ in parts), default=0))
    texts = []
    for start, size, extra, check in parts:
        part = raw[start : start + size + extra]
        if len(part) != size + extra or zlib.crc32(part) != check:
            raise ValueError("a stored page does not match its block")
        texts.append(part[:size])
    return texts


def _where(ref: Any) -> tuple[int, int, int, int]:
    """(start, text length, HTML length, CRC-32) of a page's descriptor."""
    ref = bytes(ref)
    if len(ref) != _HEAD or ref[:1] != BLOCK_PAGE or ref[1] > _OWN_HTML:
        raise ValueError("not a page of a stored block")
    # (int.from_bytes each: ``struct`` costs the read-only ``margin search --all`` its import)
    little = int.from_bytes
    return (
        little(ref[2:6], "little"),
        little(ref[6:10], "little"),
        little(ref[10:14], "little"),
        little(ref[14:18], "little"),
    )


def _part(ref: Any, data: Any) -> tuple[int, bytes, int]:
    """(kind, the page's text and HTML, length of the text), checked against the CRC its
    descriptor keeps (a damaged descriptor, or one that names the wrong block, is told)."""
    ref = bytes(ref)
    if len(ref) != _HEAD or ref[:1] != BLOCK_PAGE or ref[1] > _OWN_HTML:
        raise ValueError("not a page of a stored block")
    start, size, extra = (int.from_bytes(ref[i : i + 4], "little") for i in (2, 6, 10))
    part = _decoded(data)[start : start + size + extra]
    if len(part) != size + extra or zlib.crc32(part) != int.from_bytes(ref[14:], "little"):
        raise ValueError("a stored page does not match its block")
    return ref[1], part, size


def block_page(ref: Any, data: Any) -> tuple[str, str | None]:
    """A page's text and HTML from its descriptor and its block (as ``unpack_page``)."""
    kind, part, size = _part(ref, data)
    text = part[:size].decode("utf-8")
    if kind == _NO_HTML:
        return text, None
    if kind == _PLAIN:
        return text, plain_html(text)
    return text, part[size:].decode("utf-8")


def is_block_page(value: Any) -> bool:
    return isinstance(value, bytes | memoryview) and bytes(value[:1]) == BLOCK_PAGE


def page_content(value: Any, data: Any) -> tuple[str, str | None]:
    """A stored page's text and HTML: from its block when it has one (``data``), else from
    its own blob (``packing.unpack_page``)."""
    if data is None:
        if is_block_page(value):
            raise ValueError("a stored page's block is missing")
        from core.store.packing import unpack_page

        return unpack_page(value)
    return block_page(value, data)


def margin_page(value: Any, data: Any) -> str:
    """A stored page's text, in or out of a block. Registered on every connection as the SQL
    function ``margin_page`` (the view ``page_plain`` reads pages with it)."""
    if data is None:
        if is_block_page(value):
            raise ValueError("a stored page's block is missing")
        return page_text(value)
    # keyed by the page's descriptor (its place, lengths and CRC-32 of its text and HTML)
    # and its block's length and CRC-32 (a damaged block is never served from here)
    key = (bytes(value), len(data), zlib.crc32(data))
    with _lock:
        found = _texts.get(key)
        if found is not None:
            _texts.move_to_end(key)
            return found
    _, part, size = _part(value, data)
    text = part[:size].decode("utf-8")
    with _lock:
        _texts[key] = text
        while len(_texts) > _TEXTS:
            _texts.popitem(last=False)
    return text
