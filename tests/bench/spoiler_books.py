"""Two Standard Ebooks editions for the spoiler tests and evaluation, carried in
``tests/fixtures/books``: *A Christmas Carol* and *The Adventures of Sherlock Holmes* (CC0).

They were built from snapshots of the public repositories (their ``src/`` folder zipped as an
EPUB, the 1–2 MB vector cover replaced by a one-line placeholder so each stays small; the text
is untouched):

    .venv/bin/python tests/bench/spoiler_books.py GIT_DIR_OF_CAROL GIT_DIR_OF_HOLMES

*A Christmas Carol* gets a "List of Illustrations" page after its title page, with the captions
of John Leech's plates in the first edition (the Project Gutenberg edition has this page): a
front-matter page that names characters long before the story does.

``$MARGIN_SPOILER_BOOKS`` points the tests at another folder holding the same two files;
``CACHE`` is the folder of larger evaluation books kept outside the repository.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

FIXTURE_BOOKS = Path(__file__).resolve().parent.parent / "fixtures" / "books"
BOOKS = Path(os.environ.get("MARGIN_SPOILER_BOOKS", FIXTURE_BOOKS))
CACHE = Path.home() / ".cache/margin-spoiler-books"
CAROL = BOOKS / "a_christmas_carol.epub"
HOLMES = BOOKS / "the_adventures_of_sherlock_holmes.epub"
SMALL_COVER = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1400 2100">'
    b'<rect width="1400" height="2100" fill="#2b4a6f"/></svg>'
)

ILLUSTRATIONS = """<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="en-US">
<head><title>List of Illustrations</title></head>
<body epub:type="frontmatter"><section id="loi" epub:type="loi">
<h2>List of Illustrations</h2>
<p>Mr. Fezziwig’s Ball — Frontispiece</p>
<p>Marley’s Ghost</p>
<p>Scrooge’s Third Visitor</p>
<p>Ignorance and Want</p>
<p>The Last of the Spirits</p>
<p>Mr. Fezziwig and the Ball at the Warehouse</p>
</section></body></html>
"""


def _files(git_dir: Path) -> dict[str, bytes]:
    names = subprocess.run(
        ["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", "HEAD", "src/"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return {
        name[len("src/") :]: subprocess.run(
            ["git", f"--git-dir={git_dir}", "show", f"HEAD:{name}"],
            check=True,
            capture_output=True,
        ).stdout
        for name in names
    }


def build(git_dir: Path, out: Path, *, illustrations: bool = False) -> None:
    files = _files(git_dir)
    if "epub/images/cover.svg" in files:
        files["epub/images/cover.svg"] = SMALL_COVER
    if illustrations:
        opf = files["epub/content.opf"].decode()
        opf = opf.replace(
            "</manifest>",
            '<item href="text/loi.xhtml" id="loi.xhtml" media-type="application/xhtml+xml"/>'
            "</manifest>",
        ).replace(
            '<itemref idref="imprint.xhtml"/>',
            '<itemref idref="imprint.xhtml"/><itemref idref="loi.xhtml"/>',
        )
        files["epub/content.opf"] = opf.encode()
        files["epub/text/loi.xhtml"] = ILLUSTRATIONS.encode()
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("mimetype", files.pop("mimetype", b"application/epub+zip"), zipfile.ZIP_STORED)
        for name, data in sorted(files.items()):
            z.writestr(name, data, zipfile.ZIP_DEFLATED)
    print(f"built {out}")


if __name__ == "__main__":
    build(Path(sys.argv[1]), CAROL, illustrations=True)
    build(Path(sys.argv[2]), HOLMES)
