"""What Orca says: Debian's Orca 43 under Xvfb with the session and AT-SPI buses, its speech
logged to a debug file (``SPEECH OUTPUT: '…'``) rather than sent to a sound device, while
``orca_app.py`` runs the real window and does what a reader does. Orca 43 ignores AT-SPI
announcement events, so this checks what it actually speaks. Needs Debian's orca, xvfb,
dbus-x11 and at-spi2-core (``.ci/system-packages``); says which is missing when it skips."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest

from tests.core.books.test_book_text import INTRO, NOTES, _se_epub
from tests.desktop.test_atspi import ROOT, SYSTEM_PYTHON

SCRIPT = """
set -u
# the AT-SPI registry, started by the bus, needs the display to press keys (orca_app.key)
dbus-update-activation-environment DISPLAY XAUTHORITY 2>/dev/null
"$SYSTEM_PYTHON" tests/desktop/orca_run.py -d speech -d braille -u "$OUT/orca-prefs" \
  --debug-file "$OUT/orca.log" > "$OUT/orca.out" 2>&1 &
orca=$!
for _ in $(seq 1 120); do grep -q "Starting registry" "$OUT/orca.log" 2>/dev/null && break; sleep 0.25; done
"$APP_PYTHON" tests/desktop/orca_app.py "$BOOK" "$NOTES" > "$OUT/app.log" 2>&1
status=$?
sleep 0.3
kill "$orca"
exit $status
"""

XVFB = ["dbus-run-session", "--", "xvfb-run", "-a", "-s", "-screen 0 1280x800x24"]
SPOKEN = re.compile(r"^(\d\d:\d\d:\d\d\.\d+) - SPEECH OUTPUT: '(.*?)'(?:\{| voice=|$)", re.M)


def png(width: int, height: int) -> bytes:
    """A grey picture, as PNG bytes."""
    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def with_picture(epub: Path, name: str, data: bytes) -> None:
    """Add a PNG to an EPUB, in its manifest too (the importer drops pictures not there)."""
    with zipfile.ZipFile(epub) as book:
        files = {n: book.read(n) for n in book.namelist()}
    item = f'<item id="picture" href="{name.split("/", 1)[1]}" media-type="image/png"/>'
    files["OEBPS/content.opf"] = files["OEBPS/content.opf"].replace(
        b"</manifest>", item.encode() + b"</manifest>"
    )
    files[name] = data
    with zipfile.ZipFile(epub, "w") as book:
        for n, content in files.items():
            book.writestr(n, content)


def missing() -> str:
    """What this machine lacks for the test ("" when nothing)."""
    if shutil.which("orca") is None or not Path("/usr/bin/orca").exists():
        return "Orca is not installed (Debian: orca)"
    for tool in ("dbus-run-session", "xvfb-run"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (dbus / xvfb)"
    if not Path("/usr/libexec/at-spi-bus-launcher").exists():
        return "the AT-SPI bus is not installed (at-spi2-core)"
    return ""


def heard(out: Path) -> dict[str, list[str]]:
    """What Orca said during each step of orca_app.py (before the first: "start")."""
    steps = [
        (line.split()[2], line.split()[1])
        for line in (out / "app.log").read_text().splitlines()
        if line.startswith("STEP ")
    ]
    said: dict[str, list[str]] = {"start": []}
    for at, text in SPOKEN.findall((out / "orca.log").read_text()):
        name = "start"
        for when, step in steps:
            if at >= when:
                name = step
        said.setdefault(name, []).append(text)
    return said


@pytest.mark.xvfb
def test_orca_speaks_what_happens(tmp_path: Path, books_dir: Path) -> None:
    why = missing()
    if why:
        pytest.skip(why)
    logo = '<p><img alt="The Standard Ebooks logo." src="logo.png"/></p>'
    notes = _se_epub(tmp_path / "smith.epub", [("Introduction", logo + INTRO), ("Endnotes", NOTES)])
    with_picture(notes, "OEBPS/logo.png", png(120, 60))
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env.update(
        HOME=str(tmp_path),
        MARGIN_HOME=str(tmp_path / "home"),
        QT_QPA_PLATFORM="xcb",
        QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1",
        PYTHONPATH=str(ROOT),
        APP_PYTHON=sys.executable,
        SYSTEM_PYTHON=SYSTEM_PYTHON,
        BOOK=str(books_dir / "alice_in_wonderland.epub"),
        NOTES=str(notes),
        OUT=str(tmp_path),
    )
    done = subprocess.run(
        [*XVFB, "bash", "-c", SCRIPT],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
        env=env,
    )
    log = (tmp_path / "app.log").read_text() if (tmp_path / "app.log").exists() else ""
    assert done.returncode == 0 and "done" in log, (done.stderr[-2000:], log[-3000:])
    said = heard(tmp_path)
    for step, words in said.items():  # the transcript, for the report (pytest -s)
        print(f"[{step}]", " | ".join(words))
    library = " ".join(said.get("library", []))
    assert "Books" in library and "Alice" in library, said
    page = " ".join(said.get("page", []))
    assert "Book page read only text" in page, said
    assert "Question text" in " ".join(said.get("question", [])), said
    everything = " ".join(" ".join(words) for words in said.values())
    assert "[OBJ]" not in everything and "object" not in everything, "a picture read as U+FFFC"
    picture = " ".join(said.get("picture", []))  # was "[OBJ]" for the logo's line
    assert "Caret browsing on" in picture and "Caret browsing off" in picture, said
    assert "[Illustration: The Standard Ebooks logo.]" in picture, said
    answer = " ".join(said.get("answer", []))
    assert "The answer is arriving." in answer, said
    assert "Answer ready: The Rabbit is late for the Duchess." in answer, said
    held_back = " ".join(said.get("held_back", []))
    assert "A sentence was held back." in held_back, said
    failure = " ".join(said.get("failure", []))
    assert "The answer failed" in failure, said
    read_to = " ".join(said.get("read_to_here", []))
    assert "Read to here: the assistant now reads up to p. " in read_to, said
    entry = " ".join(said.get("xray_entry", []))  # was "X-Ray entry label", without its text
    assert "Rabbit: name, " in entry and "mentions, first on p. 3." in entry, said
    assert "White Rabbit was still in sight" in entry, "the entry's description is read"
    pages = " ".join(said.get("xray_pages", []))  # was one silent stop per page
    assert re.search(r"\d+ pages with Rabbit push button", pages), said
    card = " ".join(said.get("flashcard", []))  # was "Flashcard label."
    assert "Flashcard: Alice was beginning to get very" in card, said
    settings = " ".join(said.get("reading_settings", []))
    assert "Reading settings" in settings and "Layout combo box" in settings, said
    assert "Scroll (one continuous flow)" in settings, "Down changed the layout, and was heard"
    assert "layout scroll" in log, "the arrow key changed the layout"
    footnote = " ".join(said.get("footnote", []))
    assert "Note: 1. John Rae, Life of Adam Smith, 1895, p. 284." in footnote, said
    assert "Go to the note push button" in footnote, said
    assert said.get("footnote_tab"), "Tab leaves the note: Orca says where the focus went"
    assert "page 1" not in log.split("STEP footnote_go")[-1], "Enter went to the note"
