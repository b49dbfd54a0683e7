"""A real calibre library made with Debian's ``calibredb`` (and a viewer highlight stored
through calibre's own API, as its viewer does), for the calibre and OPDS tests."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

CALIBREDB = shutil.which("calibredb")
CALIBRE_DEBUG = shutil.which("calibre-debug")
NEEDS_CALIBRE = pytest.mark.skipif(
    CALIBREDB is None,
    reason="calibre is not installed (Debian package 'calibre'; .ci/system-packages adds it)",
)

HIGHLIGHT = """
from calibre.library import db
api = db({folder!r}).new_api
api.merge_annotations_for_book({book}, 'EPUB', [{{
    'type': 'highlight', 'uuid': 'margin-test-1', 'timestamp': '2024-05-01T10:00:00.000Z',
    'start_cfi': '/2/4/2:0', 'end_cfi': '/2/4/2:20', 'spine_index': 2, 'spine_name': 'x.html',
    'highlighted_text': 'Alice was beginning to get very tired of sitting by her sister',
    'notes': 'the opening', 'style': {{'type': 'builtin', 'kind': 'color', 'which': 'green'}},
}}], user_type='local', user='viewer')
"""


def calibredb(folder: Path, *args: str) -> str:
    assert CALIBREDB is not None
    done = subprocess.run(
        [CALIBREDB, *args, "--library-path", str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return done.stdout


def make_library(folder: Path, fixtures: Path) -> Path:
    """A calibre library of the fixture books (11: EPUB, text and PDF), with series, tags
    and one viewer highlight on Alice."""
    folder.mkdir(parents=True, exist_ok=True)
    files = [
        fixtures / "books" / "alice_in_wonderland.epub",
        fixtures / "books" / "metamorphosis.epub",
        fixtures / "books" / "alice_in_wonderland.txt",
        fixtures / "books" / "metamorphosis.txt",
        *sorted((fixtures / "pdf").glob("*.pdf")),
    ]
    calibredb(folder, "add", "--duplicates", *map(str, files))
    ids = {
        line.split()[0]: line
        for line in calibredb(folder, "list", "--fields", "title").splitlines()[1:]
        if line.strip() and line.split()[0].isdigit()
    }
    alice = next(i for i, line in ids.items() if "Alice" in line)
    calibredb(
        folder,
        "set_metadata",
        alice,
        "--field",
        "series:Wonderland",
        "--field",
        "series_index:1",
        "--field",
        "tags:classic,fantasy",
    )
    if CALIBRE_DEBUG is not None:
        subprocess.run(
            [CALIBRE_DEBUG, "-c", HIGHLIGHT.format(folder=str(folder), book=int(alice))],
            check=True,
            capture_output=True,
            timeout=120,
        )
    return folder
