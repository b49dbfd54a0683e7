"""Build EPUBs from Standard Ebooks source repositories (CC0) for bench_corpus.py.

The sources are fetched beforehand (git directories, e.g. /work/.mirror/standardebooks+*/repo);
nothing is downloaded here and nothing is written inside the repository.
Run: python tests/bench/build_se_corpus.py OUT_DIR GIT_DIR...
A book's ``src/`` folder, zipped with ``mimetype`` first and stored, is its EPUB.
"""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path


def build(git_dir: Path, out: Path) -> Path:
    name = git_dir.parent.name.split("+", 1)[-1] if git_dir.name == "repo" else git_dir.stem
    target = out / f"{name}.epub"
    tar = subprocess.run(
        ["git", f"--git-dir={git_dir}", "archive", "--format=tar", "HEAD", "src"],
        check=True,
        capture_output=True,
    ).stdout
    files: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        for member in archive.getmembers():
            if member.isfile():
                data = archive.extractfile(member)
                assert data is not None
                files[member.name.removeprefix("src/")] = data.read()
    with zipfile.ZipFile(target, "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype"), files.pop("mimetype", b"application/epub+zip"))
        for path in sorted(files):
            z.writestr(path, files[path], compress_type=zipfile.ZIP_DEFLATED)
    return target


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for arg in sys.argv[2:]:
        print(build(Path(arg), out))


if __name__ == "__main__":
    main()
