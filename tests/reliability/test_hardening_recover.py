"""recover-library never follows a symlink and does not report the same unreadable files on
every run (issue 27, item 7)."""

from __future__ import annotations

from pathlib import Path

from tests.reliability.clirun import run


def test_recover_library_ignores_links_and_remembers_what_is_not_a_book(
    tmp_path: Path, books_dir: Path
) -> None:
    home = tmp_path / "home"
    assert run(home, "books").returncode == 0
    secret = tmp_path / "private.txt"
    secret.write_text("CHAPTER I\n\nMy private diary, never to be imported.\n" * 20)
    books = home / "books"
    (books / "planted.txt").symlink_to(secret)
    (books / ("0" * 64 + ".epub")).write_bytes(b"not really an epub")

    first = run(home, "recover-library")
    assert "planted" not in first.stdout + first.stderr
    assert first.stderr.count("(the copy is kept)") == 1, first.stderr
    listing = run(home, "books", "--json")
    assert "diary" not in listing.stdout and listing.stdout.strip() == "[]"

    again = run(home, "recover-library")
    assert again.returncode == 0, again.stderr
    assert "nothing to recover" in again.stdout and again.stderr == ""
    assert "not in the library" not in run(home, "books").stderr
    assert (books / ("0" * 64 + ".epub")).exists(), "the copy is kept"
