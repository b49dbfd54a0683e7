"""The XML check after the parse (core.books.epubcheck): the parse names the documents it left
unchecked, the import reports their problems as the parse did, in the same order."""

from __future__ import annotations

from pathlib import Path

from core.books.epubcheck import UNCHECKED, checking, late_problems, unchecked_line
from core.books.epubdocs import strip_subset, xml_problem
from core.books.epubzip import EpubArchive
from core.books.importer import import_book
from core.books.parse import parse_book
from core.paths import resolve_paths
from core.store.library import Library
from tests.core.books.epubgen import make_epub

GOOD = "<p>Fine.</p>"
BAD = "<p>Unclosed paragraph.</div>"


def _book(tmp_path: Path) -> Path:
    chapters = [("One", BAD), ("Two", GOOD), ("Three", "<p>a <b>b</p>"), ("Four", GOOD)]
    return make_epub(tmp_path / "bad.epub", chapters)


def _each_checked(path: Path, docs: list[str]) -> list[str]:
    """What the parse reported when it checked every document itself."""
    arc = EpubArchive(path)
    try:
        problems = [(doc, xml_problem(strip_subset(arc.read(doc)))) for doc in docs]
    finally:
        arc.close()
    return [f"{doc}: {problem}" for doc, problem in problems if problem]


def test_the_parse_leaves_the_check_and_the_import_reports_it(tmp_path: Path) -> None:
    path = _book(tmp_path)
    book = parse_book(path)
    assert "problems" not in book.extra  # (not looked at by the parse)
    docs = [line.split("\t")[1] for line in book.extra[UNCHECKED].split("\n")]
    assert len(docs) == 4 and "Unclosed paragraph." in book.pages[0].text
    expected = _each_checked(path, docs)
    assert len(expected) == 2 and all("not well-formed" in p for p in expected)
    assert late_problems(path, book.extra) == "; ".join(expected)
    assert checking(path, book.extra)() == "; ".join(expected)  # (on a thread, as imports do)
    assert checking(path, {"problems": "x: known"})() == "x: known"

    library = Library.open(resolve_paths())
    try:
        result = import_book(library, path)
    finally:
        library.close()
    assert result.problems == "; ".join(expected)  # what the window and `margin import` say


def test_late_problems_go_where_the_parse_would_have_put_them(tmp_path: Path) -> None:
    path = _book(tmp_path)
    one, two, three, four = (f"OEBPS/c{n}.xhtml" for n in range(4))
    bad_one, bad_three = _each_checked(path, [one, three])
    known: list[str] = []
    lines = [unchecked_line(known, one)]  # before any known problem
    known.append("x.xhtml: found by the parse; shown as a browser repairs it")
    lines.append(unchecked_line(known, two))  # (no problem: adds nothing)
    lines.append(unchecked_line(known, three))
    known.append("y.xhtml: another")
    lines.append(unchecked_line(known, four))
    extra = {"problems": "; ".join(known), UNCHECKED: "\n".join(lines)}
    assert late_problems(path, extra) == "; ".join([bad_one, known[0], bad_three, known[1]])
    assert late_problems(path, {"problems": "z: known"}) == "z: known"  # nothing left to check


def test_a_book_gone_before_its_check_keeps_what_the_parse_found(tmp_path: Path) -> None:
    path = _book(tmp_path)
    extra = parse_book(path).extra
    path.unlink()
    assert late_problems(path, {**extra, "problems": "x: known"}) == "x: known"
