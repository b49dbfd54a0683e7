from __future__ import annotations

import codecs
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.books.limits import Limits
from core.books.parse import detect_format, parse_book
from core.errors import BookCode, BookError

SAMPLE = "Chapter 1\n\nCafé déjà vu — “quoted” naïve text.\n\nChapter 2\n\nSecond chapter here.\n"


def test_gutenberg_txt(books_dir: Path) -> None:
    book = parse_book(books_dir / "alice_in_wonderland.txt")
    assert book.title == "Alice's Adventures in Wonderland"
    assert book.author == "Lewis Carroll"
    assert len([t for t in book.toc if t.title.startswith("CHAPTER")]) == 12
    assert "START OF THE PROJECT GUTENBERG" not in book.pages[0].text
    first = book.toc[0]
    assert book.pages[first.page - 1].text.startswith("CHAPTER I.")
    assert "\n\n" in book.pages[3].text
    assert "\nthe" not in book.pages[3].text, "hard-wrapped lines are joined inside a paragraph"


@pytest.mark.parametrize(
    "encoding,prefix",
    [
        ("utf-8", b""),
        ("utf-8", codecs.BOM_UTF8),
        ("utf-16", b""),
        ("utf-16-le", codecs.BOM_UTF16_LE),
        ("cp1252", b""),
    ],
)
def test_encodings(tmp_path: Path, encoding: str, prefix: bytes) -> None:
    path = tmp_path / "book.txt"
    path.write_bytes(prefix + SAMPLE.encode(encoding))
    book = parse_book(path)
    text = "\n".join(p.text for p in book.pages)
    assert "Café déjà vu — “quoted” naïve text." in text
    assert [t.title for t in book.toc] == ["Chapter 1", "Chapter 2"]
    assert book.toc[1].page == 2, "each chapter starts a new page"


def test_markdown_headings_become_toc(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text(
        "# My Guide\n\nIntro *text*.\n\n## Part A\n\nAlpha.\n\n## Part B\n\n- item one\n- item two\n\n<script>x</script>\n",
        encoding="utf-8",
    )
    book = parse_book(path)
    assert book.title == "My Guide"
    assert [(t.title, t.level) for t in book.toc] == [("My Guide", 1), ("Part A", 2), ("Part B", 2)]
    html = "".join(p.html or "" for p in book.pages)
    assert "<em>text</em>" in html
    assert "<script" not in html
    assert any("item two" in p.text for p in book.pages)


def test_html_single_file(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text(
        '<html lang="fr"><head><title>Le Livre</title><meta name="author" content="Jean"><style>p{}</style></head>'
        '<body><h1>Un</h1><p>Premier <b>texte</b>.</p><iframe src="http://x"></iframe><h1>Deux</h1><p>Suite.</p></body></html>',
        encoding="utf-8",
    )
    book = parse_book(path)
    assert (book.title, book.author, book.language) == ("Le Livre", "Jean", "fr")
    assert [t.title for t in book.toc] == ["Un", "Deux"]
    assert "iframe" not in "".join(p.html or "" for p in book.pages)


def test_unsupported_missing_empty_dir(tmp_path: Path) -> None:
    with pytest.raises(BookError) as err:
        detect_format(tmp_path / "x.docx")
    assert err.value.code == BookCode.UNSUPPORTED and "x.docx" in err.value.message
    with pytest.raises(BookError) as err:
        parse_book(tmp_path / "missing.txt")
    assert err.value.code == BookCode.NOT_FOUND
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(BookError) as err:
        parse_book(empty)
    assert err.value.code == BookCode.EMPTY and "empty.txt" in err.value.message
    folder = tmp_path / "folder.txt"
    folder.mkdir()
    with pytest.raises(BookError):
        parse_book(folder)
    blank = tmp_path / "blank.txt"
    blank.write_text("   \n\n  \n")
    with pytest.raises(BookError) as err:
        parse_book(blank)
    assert err.value.code == BookCode.EMPTY


def test_binary_file_named_txt(tmp_path: Path) -> None:
    path = tmp_path / "bin.txt"
    path.write_bytes(bytes(range(256)) * 50)
    try:
        book = parse_book(path)
    except BookError as exc:
        assert "bin.txt" in exc.message
    else:
        assert book.pages


def test_file_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_text("hello world. " * 1000)
    with pytest.raises(BookError) as err:
        parse_book(path, limits=Limits(max_file_bytes=1000))
    assert err.value.code == BookCode.TOO_LARGE
    assert "big.txt" in err.value.message


def test_paragraph_limit(tmp_path: Path) -> None:
    path = tmp_path / "para.txt"
    path.write_text("word " * 3000)
    with pytest.raises(BookError) as err:
        parse_book(path, limits=Limits(max_paragraph_chars=1000))
    assert err.value.code == BookCode.TOO_LARGE


def test_the_first_paragraph_past_a_limit_names_it(tmp_path: Path) -> None:
    """A long paragraph after the text budget is spent: the budget is what is reported,
    as when paragraphs were checked one by one."""
    path = tmp_path / "long.txt"
    path.write_text("short words here\n\n" * 200 + "word " * 3000)
    with pytest.raises(BookError) as err:
        parse_book(path, limits=Limits(max_pages=1, max_paragraph_chars=10_000))
    assert "pages" in err.value.message
    with pytest.raises(BookError) as err:
        parse_book(path, limits=Limits(max_pages=100, max_paragraph_chars=10_000))
    assert "paragraph" in err.value.message


def _paragraphs_line_by_line(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The definition: runs of lines between blank lines (a line of spaces or tabs is blank),
    each line stripped, the empty ones dropped, joined by spaces."""
    import re

    runs = re.split(r"\n[ \t]*\n", text) if " \n" in text or "\t\n" in text else text.split("\n\n")
    found = []
    for run in runs:
        lines = tuple(line.strip() for line in run.split("\n") if line.strip())
        if lines:
            found.append((" ".join(lines), lines))
    return found


@given(st.text(st.sampled_from("ab.\n\n \t\xa0\u3000\x0b\x85\u2028"), max_size=60))
@settings(max_examples=400, deadline=None)
def test_paragraphs_are_their_lines_stripped_and_joined(text: str) -> None:
    from core.books.text import _split

    paras = _split(text)
    got = [(t, paras.lines(i)) for i, t in enumerate(paras.texts)]
    assert got == _paragraphs_line_by_line(text)


def test_paragraphs_of_a_real_book_with_indented_verse(books_dir: Path) -> None:
    from core.books.text import _split

    text = (books_dir / "alice_in_wonderland.txt").read_text(encoding="utf-8")
    assert "\n  " in text  # its verse is indented: those paragraphs are made line by line
    paras = _split(text)
    expected = _paragraphs_line_by_line(text)
    assert len(paras) == len(expected) > 500
    assert [(t, paras.lines(i)) for i, t in enumerate(paras.texts)] == expected
