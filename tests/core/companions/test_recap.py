"""The story so far without a model: finished chapters only, kept by their text, the current
one says how far it goes; "Previously…" after some days away."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from core.cli import main
from core.companions import recap
from core.companions.store import CompanionStore
from core.store.library import BookInfo, Library


def test_only_finished_chapters_and_the_current_one(library: Library, alice: BookInfo) -> None:
    made = recap.recap(library.db, alice.id, 33)
    states = [(c.chapter.title.split(".")[0], c.state) for c in made.chapters]
    assert states == [
        ("CHAPTER I", "read"),
        ("CHAPTER II", "read"),
        ("CHAPTER III", "read"),
        ("CHAPTER IV", "read"),
        ("CHAPTER V", "current"),
    ]
    for c in made.chapters[:4]:
        assert 2 <= len(c.sentences) <= 6
        assert all(c.chapter.first <= p <= c.chapter.last for p, _ in c.sentences)
    assert made.chapters[-1].read_to == 33 and not made.chapters[-1].sentences
    # each summary is made once and kept by the chapter's text
    kept = CompanionStore(library.db).items(alice.id, recap.KIND, recap.RECAP_VERSION)
    assert len(kept) == 4
    library.set_read_to(alice.id, 33)
    assert recap.stored(library.db, alice.id) == made
    library.set_read_to(alice.id, 20)  # lowered: the kept view is not shown
    assert recap.stored(library.db, alice.id) is None
    lowered = recap.recap(library.db, alice.id)
    assert max(c.chapter.first for c in lowered.chapters) <= 20
    assert all(p <= 20 for c in lowered.chapters for p, _ in c.sentences)


def test_previously_after_days_away(library: Library, alice: BookInfo) -> None:
    day = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    assert not recap.returning(library.db, alice.id, 3, day)  # first opening
    assert not recap.returning(library.db, alice.id, 3, day + dt.timedelta(days=1))
    assert recap.returning(library.db, alice.id, 3, day + dt.timedelta(days=5))
    assert not recap.returning(library.db, alice.id, 0, day + dt.timedelta(days=50))  # never
    text = recap.previously(recap.recap(library.db, alice.id, 33))
    assert text.startswith("CHAPTER III. A Caucus-Race")
    assert "You stopped on page 33, in CHAPTER V. Advice from a Caterpillar" in text


def test_cli_recap(library: Library, alice: BookInfo, capsys: pytest.CaptureFixture[str]) -> None:
    library.set_read_to(alice.id, 33)
    library.close()
    assert main(["recap", "alice", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["state"] for c in data["chapters"]] == ["read"] * 4 + ["current"]
    assert main(["recap", "alice", "--chapter", "2"]) == 0
    out = capsys.readouterr().out
    assert "CHAPTER II. The Pool of Tears (pp. 10–16)" in out and "p. 1" in out
    assert main(["recap", "alice", "--chapter", "9"]) == 1
    assert "chapter 9 is not within the pages read (1–33)" in capsys.readouterr().err
    assert main(["recap", "alice", "--model"]) == 1  # no model connected: said in words
    assert "no model is connected" in capsys.readouterr().err


def test_book_export_has_xray_and_story(
    library: Library, alice: BookInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    library.set_read_to(alice.id, 33)
    library.close()
    assert main(["export-conversation", "--book", "alice"]) == 0
    out = capsys.readouterr().out
    assert "No conversations about this book yet." in out
    assert "## X-Ray (pages 1–33)" in out and "### Alice" in out
    assert "## The story so far (pages 1–33)" in out
    assert "### CHAPTER V. Advice from a Caterpillar (pp. 31–37)" in out
    assert "Hatter" not in out.split("## X-Ray")[1]  # first named on p. 43


def test_a_book_without_chapters_is_recapped_in_parts(library: Library, tmp_path: object) -> None:
    from pathlib import Path

    from core.books.importer import import_book

    sentences = [
        f"The traveller reached the {w} village at dusk, and the people there told him "
        f"about the old {w} road that led over the hills to the sea."
        for w in ("northern", "southern", "eastern", "western", "quiet", "busy", "lonely", "hidden")
    ]
    text = "\n\n".join(" ".join(sentences[(i + j) % 8] for j in range(6)) for i in range(400))
    path = Path(str(tmp_path)) / "journey.txt"
    path.write_text(text, encoding="utf-8")
    book = import_book(library, path).book
    assert book.page_count > recap.LONGEST
    made = recap.recap(library.db, book.id, 45)
    parts = [(c.chapter.first, c.chapter.last, c.state) for c in made.chapters]
    assert parts[0][:2] == (1, 20) and parts[1][:2] == (21, 40)
    assert [s for *_, s in parts] == ["read", "read", "current"]
    assert made.chapters[0].sentences
