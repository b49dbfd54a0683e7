"""Markdown and HTML books: tables stay tables, headings below chapter level get their page."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from core.books.chunking import make_chunks
from core.books.htmlblocks import clean_title, html_to_blocks
from core.books.parse import parse_book

LONG = " ".join(f"word{i}" for i in range(150)) + "."


def test_markdown_table_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "keys.md"
    path.write_text(
        "# Shortcuts\n\nIntro.\n\n| Keys | Does |\n| --- | --- |\n| Ctrl+, | Settings |\n"
        "| Ctrl+F | **Find** in book |\n\nAfter the table.\n",
        encoding="utf-8",
    )
    book = parse_book(path)
    page = book.pages[0]
    assert "Keys · Does\nCtrl+, · Settings\nCtrl+F · Find in book" in page.text
    assert "Keys Does" not in page.text
    html = page.html or ""
    assert "<table" in html and "<th>Keys</th>" in html
    assert "<td><strong>Find</strong> in book</td>" in html
    chunk = make_chunks(book.pages)[0]
    assert "Ctrl+, · Settings" in chunk.text


def test_html_table_rows_and_long_tables(tmp_path: Path) -> None:
    rows = "".join(f"<tr><td>row {i}</td><td>{'x' * 80}</td></tr>" for i in range(60))
    path = tmp_path / "t.html"
    path.write_text(
        f"<html><body><h1>T</h1><table><caption>Prices</caption><thead><tr><th>A</th><th>B</th></tr></thead>"
        f"<tbody>{rows}</tbody></table><p>End.</p></body></html>",
        encoding="utf-8",
    )
    book = parse_book(path)
    text = "\n\n".join(p.text for p in book.pages)
    assert "Prices" in text
    found = re.findall(r"row (\d+) · x+", text)
    assert [int(n) for n in found] == list(range(60)), "every row once, in order"
    tables = [b for b in book.chapters[0].blocks if b.kind == "table"]
    assert len(tables) > 1, "a long table is cut on row boundaries"
    assert all(len(b.text) <= 1600 for b in tables)
    assert all(b.html.startswith("<table") and b.html.endswith("</table>") for b in tables)


def test_nested_table_in_cell_is_flattened() -> None:
    _, blocks = html_to_blocks(
        "<table><tr><td>outer</td><td><table><tr><td>in1</td><td>in2</td></tr></table></td></tr></table>"
    )
    assert [b.kind for b in blocks] == ["table"]
    assert blocks[0].text == "outer · in1 · in2"


def test_markdown_subheadings_get_their_page(tmp_path: Path) -> None:
    sections = "".join(f"### Section {n}\n\n{LONG}\n\n{LONG}\n\n" for n in range(1, 6))
    path = tmp_path / "guide.md"
    path.write_text(f"# Guide\n\n## Part A\n\n{sections}## Part B\n\n{sections}", encoding="utf-8")
    book = parse_book(path)
    subs = [t for t in book.toc if t.title.startswith("Section")]
    assert len(subs) == 10
    for item in book.toc:
        page = book.pages[item.page - 1]
        assert item.title in page.text.split("\n\n"), f"{item.title} not on page {item.page}"
    part_a = next(t for t in book.toc if t.title == "Part A")
    assert len({t.page for t in subs[:5]}) >= 4 and subs[4].page > part_a.page + 2


def test_html_subheadings_get_their_page(tmp_path: Path) -> None:
    body = "".join(f"<h3>Sub {n}</h3><p>{LONG}</p><p>{LONG}</p>" for n in range(6))
    path = tmp_path / "b.html"
    path.write_text(f"<html><body><h2>One</h2>{body}<h2>Two</h2>{body}</body></html>", "utf-8")
    book = parse_book(path)
    for item in book.toc:
        assert item.title in book.pages[item.page - 1].text.split("\n\n")
    assert book.toc[-1].page > book.toc[-6].page


def test_clean_is_the_old_regex_on_the_fixture_books(books_dir: Path) -> None:
    """The faster whitespace clean-up gives the same text as the regex it replaced."""
    for name in ("alice_in_wonderland.epub", "metamorphosis.epub"):
        with zipfile.ZipFile(books_dir / name) as z:
            for entry in z.namelist():
                if entry.endswith((".html", ".xhtml", ".htm")):
                    raw = z.read(entry).decode("utf-8")
                    assert " ".join(raw.split()) == re.sub(r"\s+", " ", raw).strip()
    odd = "a\u00a0b\u2003c\x1cd\u2028e\x85f \t\n"
    assert " ".join(odd.split()) == re.sub(r"\s+", " ", odd).strip()


def test_clean_title() -> None:
    assert clean_title("  CHAPTER   I.\n  Down ") == "CHAPTER I. Down"
    long = "word " * 60
    out = clean_title(long)
    assert len(out) <= 121 and out.endswith("…") and "  " not in out
