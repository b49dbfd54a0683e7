"""Issue 46 item 12: small inputs that broke the CLI or the settings: a note holding bytes
that are not UTF-8, a title with a right-to-left override, a settings file nested 100,000
deep."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.cli import main
from core.errors import SettingsError
from core.paths import resolve_paths
from core.settings import load_settings


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def alice(capsys: pytest.CaptureFixture[str], books_dir: Path) -> None:
    code, _, err = _run(capsys, "import", str(books_dir / "alice_in_wonderland.epub"))
    assert code == 0, err
    code, _, err = _run(capsys, "notes", "1", "--add", "a fine note")
    assert code == 0, err


def test_a_note_with_bytes_that_are_not_utf8_is_listed(
    capsys: pytest.CaptureFixture[str], alice: None
) -> None:
    with sqlite3.connect(resolve_paths(None).database) as c:
        c.execute("UPDATE note SET text = CAST(X'6f6b20ff80fe20746f6f' AS TEXT)")
    code, out, err = _run(capsys, "notes", "1")
    assert code == 0, err
    assert "ok" in out and "too" in out


def test_a_title_with_a_right_to_left_override_is_printed_plain(
    capsys: pytest.CaptureFixture[str], alice: None
) -> None:
    with sqlite3.connect(resolve_paths(None).database) as c:
        c.execute("UPDATE book SET title = 'Alice \u202egnirts\u202c'")
    code, out, err = _run(capsys, "books")
    assert code == 0, err
    assert "\u202e" not in out and "gnirts" in out


def test_a_settings_file_nested_too_deep_is_one_clear_line(tmp_path: Path) -> None:
    paths = resolve_paths(tmp_path / "home")
    paths.settings_file.parent.mkdir(parents=True, exist_ok=True)
    paths.settings_file.write_text("x = " + "[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(SettingsError) as refused:
        load_settings(paths)
    assert "nests its values too deeply" in refused.value.message


@pytest.mark.parametrize(
    "text",
    [
        "# T\n\nStart.\n\n" + ">" * 10_000 + " the deep words\n\nEnd.\n",
        "# T\n\nStart.\n\n" + "".join("  " * i + f"- item{i}\n" for i in range(2_000)) + "\nEnd.\n",
    ],
    ids=["10,000-deep quote", "2,000-deep list"],
)
def test_deeply_nested_markdown_keeps_its_text(tmp_path: Path, text: str) -> None:
    from core.books.parse import parse_book

    path = tmp_path / "deep.md"
    path.write_text(text, encoding="utf-8")
    words = "\n".join(page.text for page in parse_book(path).pages)
    assert "End." in words
    assert "the deep words" in words or ("item1999" in words and "item30" in words)
