"""The anchors on the command line: `margin reimport` lists what it could not find, `margin
lost`, `margin threads` in book order, `margin highlights --json/--w3c` with
TextQuoteSelectors, and `margin export-conversation --book` with the threads' passages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.books import parse as parse_module
from core.cli import main
from core.paths import resolve_paths
from core.store.anchors import collapse
from core.store.conversations import Conversations
from core.store.library import Library


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _library_with_marks(books_dir: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    from core.books.importer import import_book

    library = Library.open(resolve_paths())
    with monkeypatch.context() as patch:
        patch.setattr(parse_module, "PAGE_TARGET", 1300)
        book_id = import_book(library, books_dir / "metamorphosis.txt").book.id
    texts = dict(library.page_texts(book_id))
    words = collapse(texts[30])[20:90]
    library.add_highlight(book_id, 30, words, note="why an insect?")
    library.add_highlight(book_id, 5, "Words that were never in this book at all, sadly")
    threads = Conversations(library.db)
    threads.thread_for(book_id, collapse(texts[40])[10:60], 40)
    threads.thread_for(book_id, collapse(texts[10])[10:60], 10)
    threads.create(book_id, "A free conversation")
    library.add_note(book_id, "Gregor's room again", page=12)
    library.close()
    return book_id, words


def test_reimport_lists_the_lost_and_exports_keep_the_quotes(
    capsys: pytest.CaptureFixture[str], books_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    book_id, words = _library_with_marks(books_dir, monkeypatch)
    code, out, err = run(capsys, "reimport", str(book_id))
    assert code == 0, err
    assert "Not found in the book's text any more (1)" in out
    assert "p. 5     highlight" in out and "Words that were never" in out
    code, out, _ = run(capsys, "lost", str(book_id), "--json")
    assert [(a["kind"], a["page"]) for a in json.loads(out)] == [("highlight", 5)]

    code, out, _ = run(capsys, "threads", str(book_id))
    lines = out.splitlines()
    assert len(lines) == 2 and "About p. " in lines[0]
    pages = [int(line.split("About p. ")[1].split(":")[0]) for line in lines]
    assert pages == sorted(pages), "book order"

    code, out, _ = run(capsys, "highlights", str(book_id), "--json")
    items = json.loads(out)
    found = next(h for h in items if h["note"])
    assert found["selector"]["type"] == "TextQuoteSelector"
    assert found["selector"]["exact"] == words and found["selector"]["prefix"]
    assert found["lost"] is False and next(h for h in items if not h["note"])["lost"] is True
    code, out, _ = run(capsys, "highlights", str(book_id))
    assert "(its words were not found when the book was read again)" in out

    code, out, _ = run(capsys, "highlights", str(book_id), "--w3c")
    collection = json.loads(out)
    assert collection["type"] == "AnnotationCollection"
    assert "http://www.w3.org/ns/anno.jsonld" in collection["@context"]
    annotations = collection["first"]["items"]
    assert collection["total"] == len(annotations) == 5  # 2 highlights, a note, 2 threads
    motivations = sorted(a["motivation"] for a in annotations)
    assert motivations == ["commenting"] * 2 + ["highlighting"] + ["questioning"] * 2
    for a in annotations:
        assert a["target"]["source"].startswith("urn:sha256:")
        assert a["target"]["selector"]["type"] == "TextQuoteSelector"
    bodies = {a["body"]["value"] for a in annotations if a["motivation"] == "commenting"}
    assert bodies == {"why an insect?", "Gregor's room again"}

    code, out, _ = run(capsys, "export-conversation", "--book", str(book_id))
    assert out.count("Thread about p. ") == 2
    assert out.index("Thread about p. ") < out.index("A free conversation"), "threads first"


def test_asking_about_a_passage_on_the_command_line_goes_to_its_thread(
    capsys: pytest.CaptureFixture[str], books_dir: Path
) -> None:
    code, out, err = run(capsys, "import", str(books_dir / "metamorphosis.txt"))
    assert code == 0, err
    library = Library.open(resolve_paths())
    passage = collapse(library.page(1, 20).text)[30:90].strip()
    library.close()
    for question in ("What happens here?", "And then?"):
        code, out, err = run(
            capsys, "ask", "1", question, "--selection", passage, "--selection-page", "20"
        )
        assert code == 0, err
    code, out, _ = run(capsys, "threads", "1", "--json")
    [thread] = json.loads(out)
    assert thread["messages"] == 4 and thread["quote"]["exact"] == passage
    assert thread["quote"]["page"] == 20
