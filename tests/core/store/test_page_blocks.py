"""Pages stored in blocks (issue 41): every page's text and HTML come back exactly, a
damaged block or descriptor is told (never a wrong page), and the migration's frozen packer
writes the very format the live one does."""

from __future__ import annotations

import sys
import zlib
from pathlib import Path

import pytest

from core.books.parse import parse_book
from core.store import page_blocks
from core.store.frozen import page_blocks_i41 as frozen
from core.store.packing import pack_page, plain_html
from core.store.page_blocks import (
    BLOCK_BYTES,
    block_page,
    deflate_block,
    margin_page,
    pack_blocks,
    page_content,
    plan_blocks,
)
from core.store.page_dict import PAGE_DICT

PAGES = [
    (1, "Plain words only.", None),
    (2, "First paragraph.\n\nSecond, with <angle> & ampersand.", None),
    (3, "Its paragraphs.\n\nJust those.", plain_html("Its paragraphs.\n\nJust those.")),
    (4, "Own markup — and “quotes”.", "<p class='x'>Own <i>markup</i> — and “quotes”.</p>"),
    (5, "", ""),
    (6, "x" * (BLOCK_BYTES + 10), "<p>" + "x" * (BLOCK_BYTES + 10) + "</p>"),  # a block alone
    (7, "After the long one.", "<p>After the long one.</p>"),
]


def _expected(text: str, html: str | None) -> tuple[str, str | None]:
    return text, (None if html is None else html or plain_html(text))


@pytest.mark.parametrize("deflater", ["zlib-ng if installed", "zlib"])
def test_every_page_comes_back_exactly_from_its_block(
    deflater: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if deflater == "zlib":  # where zlib-ng is not installed (its import fails)
        monkeypatch.setitem(sys.modules, "zlib_ng", None)
        monkeypatch.setattr(page_blocks, "_deflater", None)
    blocks, refs = pack_blocks(PAGES)
    if deflater == "zlib":
        assert page_blocks._deflater is zlib
    data = dict(blocks)
    assert [first for first, _ in blocks] == [1, 6, 7]  # the long page is a block of its own
    for (number, text, html), (first, ref) in zip(PAGES, refs, strict=True):
        assert block_page(ref, data[first]) == _expected(text, html), number
        assert margin_page(ref, data[first]) == text
        assert page_content(ref, data[first]) == _expected(text, html)
    # a page stored alone (before blocks) reads through the same functions
    alone = pack_page("Old words.", "<p>Old <b>words</b>.</p>")
    assert page_content(alone, None) == ("Old words.", "<p>Old <b>words</b>.</p>")
    assert margin_page(alone, None) == "Old words."


def test_a_damaged_block_or_descriptor_is_told_never_a_wrong_page() -> None:
    blocks, refs = pack_blocks(PAGES[:4])
    ((_, data),) = blocks
    cut = data[: len(data) - 20]
    with pytest.raises(zlib.error):
        margin_page(refs[1][1], cut)
    flipped = bytearray(data)
    flipped[30] ^= 0x5A
    with pytest.raises((zlib.error, ValueError)):
        margin_page(refs[1][1], bytes(flipped))
    moved = bytearray(refs[1][1])
    moved[2] ^= 0x01  # the page's start, one byte off
    with pytest.raises(ValueError, match="does not match"):
        margin_page(bytes(moved), data)
    other, _ = pack_blocks([(1, "Another book's page entirely.", None)])
    with pytest.raises(ValueError, match="does not match"):
        block_page(refs[3][1], other[0][1])  # a descriptor read against the wrong block
    with pytest.raises(ValueError, match="block is missing"):
        margin_page(refs[0][1], None)


def test_the_migrations_frozen_packer_writes_the_live_format(books_dir: Path) -> None:
    """The step ``_page_blocks`` repacks one-blob pages with its own copy of the packer: the
    descriptors are byte for byte those an import writes, and the blocks hold the same
    bytes (deflated by zlib there, by zlib-ng here when it is installed)."""
    pages = [(p.number, p.text, p.html) for p in parse_book(books_dir / "metamorphosis.epub").pages]
    pages += [(len(pages) + 1 + i, t, h) for i, (_, t, h) in enumerate(PAGES)]
    live_blocks, live_refs = pack_blocks(pages)
    split = [(n, *frozen.split_page(pack_page(t, h))) for n, t, h in pages]
    blocks, refs = frozen.pack(split)
    assert refs == live_refs
    assert [first for first, _ in blocks] == [first for first, _ in live_blocks]
    assert [_inflate(data) for _, data in blocks] == [_inflate(data) for _, data in live_blocks]


def _inflate(block: bytes) -> bytes:
    unpacker = zlib.decompressobj(zdict=PAGE_DICT)
    return block[:1] + unpacker.decompress(block[1:]) + unpacker.flush()


def test_no_live_code_reads_page_text_past_its_block() -> None:
    """A page's ``text`` column holds only where the page is in its block: SQL reads page
    text through the view ``page_plain`` (or Library.page). Reading ``page.text`` with
    margin_text, as before blocks, would fail on every page: named here, not by a reader."""
    import re

    root = Path(__file__).resolve().parents[3]
    allowed = {"core/store/migrations.py", "core/store/records.py", "core/store/book_content.py"}
    wrong = []
    pattern = re.compile(r"margin_text\(|SELECT[^\"']*\btext\b[^\"']*FROM page\b(?!_)", re.I)
    for folder in ("core", "desktop"):
        for path in (root / folder).rglob("*.py"):
            name = path.relative_to(root).as_posix()
            if name in allowed or name.startswith("core/store/frozen/"):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if pattern.search(line):
                    wrong.append(f"{name}:{number}: {line.strip()}")
    assert wrong == []


def test_planned_then_deflated_blocks_are_packed_blocks() -> None:
    """The import plans the blocks on its thread and deflates them on another
    (``plan_blocks``, ``deflate_block``): the same blocks and descriptors as ``pack_blocks``."""
    bodies = [text.encode() for _, text, _ in PAGES]
    groups, refs = plan_blocks(PAGES, bodies)
    assert (refs, [first for first, _ in groups]) == (
        pack_blocks(PAGES)[1],
        [first for first, _ in pack_blocks(PAGES)[0]],
    )
    blocks = [(first, deflate_block(parts)) for first, parts in groups]
    assert [_inflate(data) for _, data in blocks] == [_inflate(d) for _, d in pack_blocks(PAGES)[0]]
