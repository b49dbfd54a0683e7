"""Chapter headings in plain-text books: the common English forms are found, ordinary short
lines are not, and each contents entry names the page its heading starts."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from core.books.model import ParsedBook
from core.books.pages import paginate_blocks
from core.books.parse import PAGE_TARGET, parse_book
from core.books.text import parse_text
from core.books.txtheadings import roman_value

PROSE = (
    "It was a cold night, and the wind came down the chimney with a noise like a man "
    "complaining about the price of coal. Nobody in the house said very much about it."
)
# Short lines that stand alone between blank lines in ordinary books and are not headings.
ORDINARY_SHORT = [
    "Yes.",
    "“No!”",
    "I",
    "1.",
    "CHORUS.",
    "HELP!",
    "THE END",
    "Mr. Holmes.",
    "Dear Sir,",
    "P.S.",
    "Part of it was true.",
    "Book One was dull, he said.",
    "Chapter 3 of the report is missing.",
    "Act now!",
    "Letter to my son",
    "Oh dear, oh dear!",
    "* * * * *",
    "London, 1850.",
    "WHAT?",
]


def _write(tmp_path: Path, text: str, name: str = "book.txt") -> ParsedBook:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return parse_book(path)


def _assert_headings_start_pages(book: ParsedBook) -> None:
    for item in book.toc:
        page = book.pages[item.page - 1].text
        assert item.title.split()[0] in page.split("\n\n")[0] or item.title in page, item


def test_alice_txt_chapters(books_dir: Path) -> None:
    book = parse_book(books_dir / "alice_in_wonderland.txt")
    assert [t.title for t in book.toc][:2] == [
        "CHAPTER I. Down the Rabbit-Hole",
        "CHAPTER II. The Pool of Tears",
    ]
    assert len(book.toc) == 12, "the contents list at the front and CHORUS. are not chapters"
    for item in book.toc:
        assert book.pages[item.page - 1].text.startswith(item.title)
    assert len(book.chapters) == 13


def test_metamorphosis_txt_parts(books_dir: Path) -> None:
    book = parse_book(books_dir / "metamorphosis.txt")
    assert [t.title for t in book.toc] == ["I", "II", "III"]
    second = book.pages[book.toc[1].page - 1].text
    assert second.startswith("II\n\nIt was not until it was getting dark")


def test_carol_staves_with_contents_list(tmp_path: Path) -> None:
    names = ["MARLEY'S GHOST", "THE FIRST OF THE THREE SPIRITS", "THE SECOND OF THE THREE SPIRITS"]
    romans = ["I", "II", "III"]
    listing = "\n\n".join(f"STAVE {r}: {n}" for r, n in zip(romans, names, strict=True))
    chapters = "".join(
        f"\n\n\n\nSTAVE {r}: {n}\n\n\n" + "\n\n".join([PROSE] * 20)
        for r, n in zip(romans, names, strict=True)
    )
    book = _write(tmp_path, f"A CHRISTMAS CAROL\n\nCONTENTS\n\n{listing}{chapters}\n\nTHE END\n")
    assert [t.title for t in book.toc] == [
        f"STAVE {r}: {n}" for r, n in zip(romans, names, strict=True)
    ]
    for item in book.toc:
        assert book.pages[item.page - 1].text.startswith(item.title)
    assert book.toc[2].page > book.toc[1].page > book.toc[0].page > 1


def test_books_and_chapters_nest(tmp_path: Path) -> None:
    body = "\n\n".join([PROSE] * 6)
    text = (
        f"BOOK THE FIRST\n\nRECALLED TO LIFE\n\nCHAPTER I\n\nThe Period\n\n{body}\n\n"
        f"CHAPTER II\n\nThe Mail\n\n{body}\n\nBOOK THE SECOND\n\nCHAPTER I.\n\n{body}\n"
    )
    book = _write(tmp_path, text)
    assert [(t.title, t.level) for t in book.toc] == [
        ("BOOK THE FIRST RECALLED TO LIFE", 1),
        ("CHAPTER I The Period", 2),
        ("CHAPTER II The Mail", 2),
        ("BOOK THE SECOND", 1),
        ("CHAPTER I.", 2),
    ]
    # a book heading right above its first chapter shares that chapter's page
    assert book.toc[0].page == book.toc[1].page
    assert book.toc[3].page == book.toc[4].page
    _assert_headings_start_pages(book)


def test_story_titles_with_numbered_parts(tmp_path: Path) -> None:
    body = "\n\n".join([PROSE] * 8)
    stories = ["A SCANDAL IN BOHEMIA", "THE RED-HEADED LEAGUE"]
    text = "\n\n\n".join(
        f"{r}. {s}\n\n\nI.\n\n{body}\n\nII.\n\n{body}\n\nIII.\n\n{body}"
        for r, s in zip(["I", "II"], stories, strict=True)
    )
    book = _write(tmp_path, text)
    assert [(t.title, t.level) for t in book.toc] == [
        ("I. A SCANDAL IN BOHEMIA", 1),
        ("I.", 2),
        ("II.", 2),
        ("III.", 2),
        ("II. THE RED-HEADED LEAGUE", 1),
        ("I.", 2),
        ("II.", 2),
        ("III.", 2),
    ]
    pages = [t.page for t in book.toc]
    assert pages == sorted(pages) and len(set(pages)) == 6, "a story title shares its I.'s page"
    for item in book.toc:
        assert item.title in book.pages[item.page - 1].text.split("\n\n")[:2]


def test_all_capital_headings_when_nothing_else(tmp_path: Path) -> None:
    body = "\n\n".join([PROSE] * 4)
    text = f"THE BEGINNING\n\n{body}\n\nHELP!\n\n{body}\n\nTHE MIDDLE OF IT\n\n{body}\n\nTHE END\n"
    book = _write(tmp_path, text)
    assert [t.title for t in book.toc] == ["THE BEGINNING", "THE MIDDLE OF IT"]
    _assert_headings_start_pages(book)


def test_roman_numbers() -> None:
    assert [roman_value(r) for r in ("I", "iv", "XII", "MCMXC", "IIII", "VX", "")] == [
        1,
        4,
        12,
        1990,
        None,
        None,
        None,
    ]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(st.sampled_from(ORDINARY_SHORT), st.just(PROSE)),
        min_size=1,
        max_size=60,
    )
)
def test_ordinary_short_lines_are_never_headings(parts: list[str]) -> None:
    text = "\n\n".join([PROSE, *parts, PROSE])
    book = parse_text(Path("prose.txt"), text.encode())
    assert book.toc == ()
    assert len(book.chapters) == 1


STYLES = {
    "chapter-roman": lambda n, r: (f"CHAPTER {r}.", f"CHAPTER {r}."),
    "chapter-title": lambda n, r: (
        f"Chapter {n}: The Matter of {r}",
        f"Chapter {n}: The Matter of {r}",
    ),
    "stave": lambda n, r: (f"STAVE {r}: THE {r} SPIRIT", f"STAVE {r}: THE {r} SPIRIT"),
    "lone-roman": lambda n, r: (r, r),
    "lone-number": lambda n, r: (f"{n}.", f"{n}."),
    "numbered-title": lambda n, r: (f"{r}. THE {r} ADVENTURE", f"{r}. THE {r} ADVENTURE"),
    "part-word": lambda n, r: (
        f"PART {['ONE', 'TWO', 'THREE', 'FOUR', 'FIVE', 'SIX'][n - 1]}",
        None,
    ),
}
ROMANS = ["I", "II", "III", "IV", "V", "VI"]


@settings(max_examples=60, deadline=None)
@given(
    style=st.sampled_from(sorted(STYLES)),
    count=st.integers(min_value=2, max_value=6),
    bodies=st.lists(
        st.lists(
            st.one_of(st.sampled_from(ORDINARY_SHORT), st.just(PROSE)), min_size=2, max_size=14
        ),
        min_size=6,
        max_size=6,
    ),
    front=st.booleans(),
)
def test_generated_headings_are_found_on_their_pages(
    style: str, count: int, bodies: list[list[str]], front: bool
) -> None:
    parts = [PROSE] if front else []
    expected: list[str] = []
    for n in range(1, count + 1):
        line, title = STYLES[style](n, ROMANS[n - 1])
        expected.append(title or line)
        # every chapter has some real text after its heading; a stray "1." among headings
        # "1.", "2." … is truly ambiguous, so bodies leave out the numeral of the same kind
        body = [b for b in bodies[n - 1] if not (style.startswith("lone") and b in ("1.", "I"))]
        parts.extend([line, PROSE, *body])
    book = parse_text(Path("gen.txt"), "\n\n\n".join(parts).encode())
    cut = paginate_blocks(book.chapters, target=PAGE_TARGET)
    assert [t.title for t in book.toc] == expected
    for item in book.toc:
        page = cut.pages[cut.page_of(item.chapter, getattr(item, "block", None)) - 1]
        assert page.text.startswith(item.title)
