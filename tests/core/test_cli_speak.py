"""``margin speak BOOK [--page N] --list``: what would be said, one utterance a line."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main
from core.paths import resolve_paths
from tests.core.books.epubgen import make_epub


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_from_a_page(capsys: pytest.CaptureFixture[str], books_dir: Path) -> None:
    assert run(capsys, "import", str(books_dir / "alice_in_wonderland.epub"))[0] == 0
    code, out, err = run(capsys, "speak", "alice", "--page", "5", "--list")
    assert code == 0, err
    lines = out.splitlines()
    page, span, text = lines[0].split("\t")
    assert (page, text) == ("5", "Presently she began again.")
    assert span == "0-26"
    assert "Please, Ma’am, is this New Zealand or Australia?”" in [x.split("\t")[2] for x in lines]
    assert {int(x.split("\t")[0]) for x in lines} >= {5, 6, 97}  # on to the end of the book


def test_notes_and_pictures(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    body = (
        '<p>It was March,<a href="c1.xhtml#note-1" id="noteref-1" epub:type="noteref">1</a>'
        ' 1776. Mr. Adams wrote.</p><p><img src="cat.png" alt="A cat grinning"/></p>'
    )
    notes = '<ol><li id="note-1" epub:type="endnote"><p>The year. <a href="c0.xhtml#noteref-1">↩</a></p></li></ol>'
    book = make_epub(tmp_path / "n.epub", [("One", body), ("Notes", notes)])
    assert run(capsys, "import", str(book))[0] == 0
    code, out, err = run(capsys, "speak", "test book", "--list")
    said = [line.split("\t")[2] for line in out.splitlines()]
    assert code == 0, err
    assert "It was March, 1776." in said and "Mr. Adams wrote." in said
    assert "Illustration: A cat grinning" in said
    assert not [s for s in said if "[1]" in s]


def test_pdf_without_text_and_bad_page(capsys: pytest.CaptureFixture[str], pdf_dir: Path) -> None:
    assert run(capsys, "import", str(pdf_dir / "imagemagick-images.pdf"))[0] == 0
    code, out, err = run(capsys, "speak", "imagemagick", "--list")
    assert code == 1 and out == ""
    assert "no text to read aloud" in err and "Traceback" not in err
    code, out, err = run(capsys, "speak", "imagemagick", "--page", "9", "--list")
    assert code != 0 and "there is no page 9" in err


def test_speaking_says_each_line_through_the_window_speech(
    capfd: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --list the utterances go to the speaking child (Qt's test engine here)."""
    monkeypatch.setenv("MARGIN_SPEECH_ENGINE", "mock")
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    book = tmp_path / "tiny.txt"
    book.write_text("Mr. Holmes sat up. He said nothing.\n\nThen he left.\n")
    assert main(["import", str(book)]) == 0
    capfd.readouterr()
    # the voice and speed the window keeps ([read_aloud]) are the ones used
    paths = resolve_paths()
    paths.settings_file.write_text(
        '[read_aloud]\nvoice = "Anne"\nvoice_language = "en-GB"\nrate = 1.0\n', encoding="utf-8"
    )
    assert main(["speak", "tiny"]) == 0
    out = capfd.readouterr().out
    assert out.splitlines()[-4:] == [
        "Voice: Anne (English), speed +1.0",
        "p. 1: Mr. Holmes sat up.",
        "p. 1: He said nothing.",
        "p. 1: Then he left.",
    ]
    monkeypatch.setenv("MARGIN_SPEECH_ENGINE", "none-here")
    assert main(["speak", "tiny"]) == 1
    captured = capfd.readouterr()
    assert "needs a speech engine" in captured.err and "Traceback" not in captured.err
