"""EpubArchive.read's one-step inflate (core/books/epubzip.py): the bytes zipfile reads,
and anything off left to zipfile, which reports it as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.books.epubzip import EpubArchive
from core.errors import BookError
from tests.core.books.epubgen import damage_member, make_epub


def _book(tmp_path: Path) -> Path:
    body = "".join(f"<p>Paragraph {n}, “quoted” — and so on.</p>" for n in range(30))
    return make_epub(tmp_path / "book.epub", [("One", body), ("Two", body)])


def test_every_member_reads_as_zipfile_reads_it(tmp_path: Path) -> None:
    arc = EpubArchive(_book(tmp_path))
    try:
        for name, info in arc.entries.items():
            fast = arc._inflated(info)
            assert fast is not None  # (plain members: stored or deflated)
            with arc.zip.open(info) as fh:
                assert fast == fh.read() == arc.read(name)
    finally:
        arc.close()


def test_a_damaged_member_is_left_to_zipfile(tmp_path: Path) -> None:
    path = _book(tmp_path)
    damage_member(path, "OEBPS/c1.xhtml")
    arc = EpubArchive(path)
    try:
        assert arc._inflated(arc.entries["OEBPS/c1.xhtml"]) is None
        with pytest.raises(BookError, match=r"c1\.xhtml cannot be unpacked"):
            arc.read("OEBPS/c1.xhtml")
        assert arc.read("OEBPS/c0.xhtml").startswith(b"<?xml")
    finally:
        arc.close()
