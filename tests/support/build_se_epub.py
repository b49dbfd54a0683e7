"""Build a Standard Ebooks EPUB from its source repository (how the fixtures
``pride_and_prejudice.epub`` was made; Sherlock Holmes is built by tests/bench/spoiler_books.py):

    python -m tests.support.build_se_epub REPO_GIT_DIR OUT.epub

The source's ``src/`` folder is zipped as an EPUB (``mimetype`` first, stored). The cover's
embedded photograph (a JPEG data URL, 0.5–1.3 MB) is left out to keep the fixtures small: the
cover stays an SVG with its title box and lettering."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile


def build(repo: str, out: str) -> None:
    listed = subprocess.run(
        ["git", "-C", repo, "ls-tree", "-r", "--name-only", "HEAD", "src"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype"), b"application/epub+zip")
        for name in listed:
            if name == "src/mimetype":
                continue
            data = subprocess.run(
                ["git", "-C", repo, "show", f"HEAD:{name}"], capture_output=True, check=True
            ).stdout
            if name.endswith("images/cover.svg"):
                data = re.sub(rb"<image\b[^>]*/>\s*", b"", data, flags=re.S)
            z.writestr(name[4:], data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)


if __name__ == "__main__":
    build(sys.argv[1], sys.argv[2])
