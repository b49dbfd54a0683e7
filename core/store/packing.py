"""How page and passage text is stored: compressed pages, passages as slices of their pages
(schema v8). Without peewee, so that a read-only command (``margin search --all``) can unpack
what it reads with the standard ``sqlite3`` module alone; ``core.store.models`` re-exports
these."""

from __future__ import annotations

import struct
import zlib
from typing import Any

from core.domain.markup import escape_text
from core.store.page_dict import PAGE_DICT

PLAIN_HTML = b""  # stored for page HTML that is just the text's paragraphs (see plain_html)


def plain_html(text: str) -> str:
    """The HTML of a page that is nothing but its text's paragraphs, as the text parser
    writes it (one line each, quotes as they are: issue 41, the form before, quotes escaped
    and no line breaks, never matched a text book's page, whose HTML was then stored too)."""
    # (each paragraph escaped and wrapped, made in three passes over the whole text: a page
    # of a text book is compared with it when stored)
    return "<p>" + escape_text(text).replace("\n\n", "</p>\n<p>") + "</p>"


def pack_text(value: str | None, text: str | None = None) -> bytes | None:
    """Page HTML as stored (schema v7): compressed, or ``PLAIN_HTML`` when it is exactly
    ``plain_html(text)`` (plain-text books) so it is not kept twice."""
    if value is None:
        return None
    if text is not None and value and value == plain_html(text):
        return PLAIN_HTML
    return zlib.compress(value.encode("utf-8"), 6)


def unpack_text(value: bytes | str | None) -> str | None:
    """Stored HTML back ("" for ``PLAIN_HTML``: the caller rebuilds it from the text); rows
    written before v6 hold plain text."""
    if value is None or isinstance(value, str):
        return value
    if value == PLAIN_HTML:
        return ""
    return zlib.decompress(value).decode("utf-8")


# A chunk (schema v8) is stored as b"C", where in its pages' text its preset dictionary
# starts and how long it is, and its text compressed against that dictionary (zlib's zdict):
# a chunk is cut from its first and last page, so the dictionary is the stretch of those pages
# it was cut from, and what is stored is little more than "copy this run". Read a chunk
# through the view ``chunk_text``, which hands ``margin_chunk`` its pages.
CHUNK_BLOB = b"C"
# A chunk that is word for word a stretch of its pages (every chunk the chunker cuts) is just
# where that stretch starts and how long it is, and its CRC-32 so that damage is noticed:
# b"S", start, length, CRC (13 bytes, where compressed it took 40).
CHUNK_SLICE = b"S"
_SLICE = struct.Struct("<cIII")  # mark, start, length, CRC-32
_PROBE = 24  # bytes of the chunk's start looked up in its pages
_WINDOW = 32768  # zlib looks back 32 KiB at most


def chunk_pages(first_page: str | bytes, last_page: str | bytes) -> bytes:
    """The text a chunk is packed against: its first page, and its last when that differs."""
    first = first_page.encode("utf-8") if isinstance(first_page, str) else first_page
    last = last_page.encode("utf-8") if isinstance(last_page, str) else last_page
    return first if first == last else first + b"\n\n" + last


def pack_chunk(text: str, pages: bytes) -> bytes:
    """``pages`` is ``chunk_pages(first, last)`` of the chunk's first and last page."""
    return pack_chunk_utf8(text.encode("utf-8"), pages)


def pack_chunk_utf8(body: bytes, pages: bytes) -> bytes:
    """``pack_chunk`` of the chunk's text in UTF-8."""
    at = pages.find(body[:_PROBE]) if body else -1
    where, tries = at, 0
    while where >= 0 and tries < 8:  # (a page that repeats itself holds the start twice)
        if pages.startswith(body, where):
            return _SLICE.pack(CHUNK_SLICE, where, len(body), zlib.crc32(body))
        where, tries = pages.find(body[:_PROBE], where + 1), tries + 1
    if at >= 0:  # the usual case: the stretch the chunk was cut from, with some slack
        start, size = at, min(len(body) + 512, _WINDOW)
    else:
        start = max(0, len(pages) - _WINDOW)
        size = len(pages) - start
    window = pages[start : start + size]
    packer = zlib.compressobj(1, zdict=window) if window else zlib.compressobj(1)
    head = CHUNK_BLOB + start.to_bytes(4, "little") + len(window).to_bytes(4, "little")
    return head + packer.compress(body) + packer.flush()


def unpack_chunk(value: bytes | str | None, first_page: Any, last_page: Any) -> str:
    """A stored chunk's text; ``first_page`` and ``last_page`` are the stored pages (blobs)
    its text was packed against. Registered on every connection as ``margin_chunk``."""
    if value is None:
        return ""
    if isinstance(value, str):  # a row not yet migrated to v8
        return value
    # only the pages' text is inflated, not the HTML packed after it (the CRC of a slice,
    # or the window's length, still tells a damaged page)
    return chunk_from(value, chunk_pages(page_text(first_page), page_text(last_page)))


def chunk_from(value: bytes | str | None, pages: bytes) -> str:
    """A stored chunk's text from ``chunk_pages`` of its pages' texts (UTF-8)."""
    if value is None:
        return ""
    if isinstance(value, str):  # a row not yet migrated to v8
        return value
    value = bytes(value)
    if value[:1] not in (CHUNK_BLOB, CHUNK_SLICE) or len(value) < 9:
        raise ValueError("not a stored chunk")
    start, size = int.from_bytes(value[1:5], "little"), int.from_bytes(value[5:9], "little")
    if value[:1] == CHUNK_SLICE:
        body = pages[start : start + size]
        if len(value) != 13 or zlib.crc32(body) != int.from_bytes(value[9:], "little"):
            raise ValueError("a stored chunk does not match its pages")
        return body.decode("utf-8")
    window = pages[start : start + size]
    if len(window) != size:
        raise ValueError("a stored chunk does not match its pages")
    unpacker = zlib.decompressobj(zdict=window) if window else zlib.decompressobj()
    return (unpacker.decompress(value[9:]) + unpacker.flush()).decode("utf-8")


# A page (schema v8) is one blob: a mark, what its HTML is (none, the text's paragraphs, or
# its own), the length of the text in bytes, then the text and the HTML compressed together
# (an EPUB page's HTML repeats its text, so together they compress to little more than one).
# Mark b"P": deflate alone (level 1), pages written before the dictionary; b"D": deflate at
# level 3 against the preset dictionary ``PAGE_DICT`` of common English words (a page of
# prose packs about a sixth smaller; core/store/page_dict.py). Both are read.
PAGE_BLOB = b"P"
PAGE_BLOB_DICT = b"D"
_NO_HTML, _PLAIN, _OWN_HTML = 0, 1, 2
_PAGE_LEVEL = 3  # as fast as level 1 without it; level 6 packs 3 % smaller in twice the time


def page_kind(text: str, html: str | None) -> tuple[int, bytes]:
    """How a page's HTML is kept beside its text: (kind, the HTML's bytes when it is its
    own): none, the text's plain paragraphs (rebuilt when read), or its own markup."""
    if html is None:
        return _NO_HTML, b""
    if html == "" or _is_plain_html(text, html):
        return _PLAIN, b""
    return _OWN_HTML, html.encode("utf-8")


def _is_plain_html(text: str, html: str) -> bool:
    """``html == plain_html(text)``, compared in place (a text book's every page is: the
    whole made and copied twice more for nothing, issue 41)."""
    if not (html.startswith("<p>") and html.endswith("</p>")):
        return False
    inside = escape_text(text).replace("\n\n", "</p>\n<p>")
    return len(html) == len(inside) + 7 and html.startswith(inside, 3)


def pack_page(text: str, html: str | None) -> bytes:
    body = text.encode("utf-8")
    kind, extra = page_kind(text, html)
    head = PAGE_BLOB_DICT + bytes([kind]) + len(body).to_bytes(4, "little")
    packer = zlib.compressobj(_PAGE_LEVEL, zdict=PAGE_DICT)
    return head + packer.compress(body + extra) + packer.flush()


def _unpacker(mark: bytes) -> Any:
    if mark == PAGE_BLOB_DICT:
        return zlib.decompressobj(zdict=PAGE_DICT)
    if mark == PAGE_BLOB:
        return zlib.decompressobj()
    raise ValueError("not a stored page")


def unpack_page(value: bytes | str | None) -> tuple[str, str | None]:
    """A stored page's text and HTML (``plain_html(text)`` for pages that are just their
    text's paragraphs, ``None`` for pages without HTML)."""
    if value is None:
        return "", None
    if isinstance(value, str):  # a row not yet migrated to v8
        return value, None
    if isinstance(value, memoryview):
        value = bytes(value)
    if len(value) < 6:
        raise ValueError("not a stored page")
    unpacker = _unpacker(value[:1])
    kind, size = value[1], int.from_bytes(value[2:6], "little")
    data = unpacker.decompress(value[6:])
    if not unpacker.eof:
        raise zlib.error("a stored page is cut short")
    text = data[:size].decode("utf-8")
    if kind == _NO_HTML:
        return text, None
    if kind == _PLAIN:
        return text, plain_html(text)
    return text, data[size:].decode("utf-8")


def page_text(value: bytes | str | None) -> str:
    """A stored page's text. Registered on every connection as the SQL function
    ``margin_text`` for SQL that reads page text. Only the text is inflated, not the HTML
    stored after it."""
    if isinstance(value, memoryview):
        value = bytes(value)
    if not isinstance(value, bytes) or value[:1] not in (PAGE_BLOB, PAGE_BLOB_DICT):
        return unpack_page(value)[0]
    size = int.from_bytes(value[2:6], "little")
    if size == 0:  # (a max_length of 0 would mean "no limit")
        return ""
    return _unpacker(value[:1]).decompress(value[6:], size).decode("utf-8")
