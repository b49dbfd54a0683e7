"""The held-out evaluation sets of session 8 load and say what they claim: the spoiler check's
second judge set (spoiler_data/cases_judge2.txt) and the search set's "held-out-2" questions
(tests/bench/data/search_eval.json). With the books in their caches (outside the repo), every
name a trick case hides is checked against the book's pages (a leak's name first appears after
the bound, an honest one's within the story read) and every answer quote is in its book."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from core.books.importer import import_book
from core.paths import resolve_paths
from core.store.library import Library
from tests.bench.spoiler_books import BOOKS as SPOILER_BOOKS
from tests.core.agent.spoiler_eval import DATA, EXTRA_BOOKS, TRICKS, cases

JUDGE2 = "cases_judge2.txt"
SEARCH = Path(__file__).resolve().parents[2] / "bench" / "data" / "search_eval.json"
_FOLD = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "_": " "})
FIRST_STORY_PAGE = {"carol": 6, "holmes": 3}  # after the title, imprint and front matter


def fold(text: str) -> str:
    """As tests/bench/eval_search.py folds a quote and a passage."""
    return " ".join(re.sub(r"[^\w']+|_", " ", text.translate(_FOLD).lower()).split())


def written() -> list[list[str]]:
    lines = (DATA / JUDGE2).read_text(encoding="utf-8").splitlines()
    return [
        [f.strip() for f in line.split(" | ")] for line in lines if line.strip() and line[0] != "#"
    ]


def pages_of(tmp_path: Path, path: Path) -> list[tuple[int, str]]:
    lib = Library.open(resolve_paths(tmp_path / path.stem))
    try:
        book = import_book(lib, path).book
        return lib.page_texts(book.id)
    finally:
        lib.close()


def test_judge2_cases_parse_with_enough_of_each_label_over_two_books() -> None:
    rows = written()
    assert all(len(r) in (4, 5) for r in rows), [r for r in rows if len(r) not in (4, 5)]
    assert {r[0] for r in rows} == {"carol", "holmes"}
    assert {r[1] for r in rows} == {"plain", "later", "trick", "hidden"}
    assert {r[2] for r in rows} == {"leak", "honest"}
    labels = Counter(r[2] for r in rows)
    assert labels["leak"] >= 80 and labels["honest"] >= 80, labels
    for book in ("carol", "holmes"):
        plain = Counter(r[2] for r in rows if r[0] == book and r[1] == "plain")
        assert plain["leak"] >= 30 and plain["honest"] >= 30, (book, plain)
    assert all(re.search(r"\{\w+\}", r[3]) for r in rows if r[1] == "trick")
    # the loader expands each trick line into every trick; "so far" answers carry a question
    loaded = cases(None, (JUDGE2,))
    tricks = sum(r[1] == "trick" for r in rows)
    assert len(loaded) == len(rows) - tricks + tricks * len(TRICKS)
    assert {c.kind for c in loaded} == {"plain", "later", "hidden", "markup", "look-alike"}
    assert any(c.question and "so far" in c.text.lower() for c in loaded if not c.leak)


@pytest.mark.parametrize("book", EXTRA_BOOKS, ids=lambda b: b.name)
def test_judge2_trick_names_sit_on_the_right_side_of_the_bound(book, tmp_path: Path) -> None:
    path = SPOILER_BOOKS / book.file
    if not path.is_file():
        pytest.skip(f"{path}: tests/bench/spoiler_books.py builds it")
    pages = pages_of(tmp_path, path)
    for _, _, label, text, *_ in (r for r in written() if r[0] == book.name and r[1] == "trick"):
        (name,) = re.findall(r"\{(\w+)\}", text)
        found = [n for n, t in pages if re.search(rf"\b{name}\b", t)]
        assert found, name
        story = [n for n in found if n >= FIRST_STORY_PAGE[book.name]]
        if label == "leak":
            assert min(story) > book.read_to, (name, found)
        else:
            assert min(story) <= book.read_to, (name, found)


def test_search_held_out_2_questions_are_new_books_with_short_quotes() -> None:
    data = json.loads(SEARCH.read_text(encoding="utf-8"))
    new = [q for q in data["questions"] if q.get("split") == "held-out-2"]
    assert len(new) >= 60
    books = Counter(q["book"] for q in new)
    assert set(books) == {"carol", "jekyll"} and min(books.values()) >= 30
    older = {q["book"] for q in data["questions"] if q.get("split") != "held-out-2"}
    assert not older & set(books)  # books nobody tuned on
    assert all(data["books"][b].startswith("~/.cache/margin-eval/") for b in books)
    assert all(3 <= len(q["answer"].split()) <= 8 for q in new), [
        q["answer"] for q in new if not 3 <= len(q["answer"].split()) <= 8
    ]
    assert len({q["question"] for q in new}) == len(new)


@pytest.mark.parametrize("key", ["carol", "jekyll"])
def test_search_held_out_2_quotes_are_in_their_books(key: str, tmp_path: Path) -> None:
    data = json.loads(SEARCH.read_text(encoding="utf-8"))
    path = Path(data["books"][key]).expanduser()
    if not path.is_file():
        pytest.skip(f"{path}: see the data file's 'about'")
    pages = [(n, fold(t)) for n, t in pages_of(tmp_path, path)]
    quotes = [q["answer"] for q in data["questions"] if q["book"] == key]
    where = {a: [n for n, t in pages if fold(a) in t] for a in quotes}
    assert all(where.values()), [a for a, n in where.items() if not n]
    # spread over the whole book: answers in its first, middle and last thirds
    last = max(n for n, _ in pages)
    thirds = Counter(min(2, 3 * n[0] // last) for n in where.values())
    assert all(thirds[i] >= 5 for i in range(3)), thirds
