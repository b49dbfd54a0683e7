"""The window as Orca meets it on Linux: the app under Xvfb with the AT-SPI bus, its tree walked
with ``gi.repository.Atspi`` by the system's Python (PyGObject is not in the virtualenv).
Needs Debian's at-spi2-core, dbus-x11, gir1.2-atspi-2.0, python3-gi and xvfb
(``.ci/system-packages``); says which is missing when it skips."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = "/usr/bin/python3"

SCRIPT = """
set -u
"$APP_PYTHON" tests/desktop/atspi_app.py "$BOOK" 3 "$LATER" > "$OUT/app.log" 2>&1 &
app=$!
for _ in $(seq 1 120); do grep -q ready "$OUT/app.log" && break; sleep 0.5; done
"$WALK_PYTHON" tests/desktop/atspi_walk.py margin 30 10 > "$OUT/tree.jsonl"
status=$?
kill "$app"
exit $status
"""


def missing() -> str:
    """What this machine lacks for the test ("" when nothing)."""
    for tool in ("dbus-run-session", "xvfb-run"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (dbus / xvfb)"
    if not Path("/usr/libexec/at-spi-bus-launcher").exists():
        return "the AT-SPI bus is not installed (at-spi2-core)"
    if not Path(SYSTEM_PYTHON).exists():
        return f"{SYSTEM_PYTHON} is missing"
    probe = subprocess.run(
        [SYSTEM_PYTHON, "-c", "import gi; gi.require_version('Atspi', '2.0')"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if probe.returncode:
        return "PyGObject with Atspi is not installed (python3-gi, gir1.2-atspi-2.0)"
    return ""


@pytest.mark.xvfb
def test_a_screen_reader_walks_the_real_tree(tmp_path: Path, books_dir: Path) -> None:
    why = missing()
    if why:
        pytest.skip(why)
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env.update(
        MARGIN_HOME=str(tmp_path / "home"),
        QT_QPA_PLATFORM="xcb",
        QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1",
        PYTHONPATH=str(ROOT),
        APP_PYTHON=sys.executable,
        WALK_PYTHON=SYSTEM_PYTHON,
        BOOK=str(books_dir / "alice_in_wonderland.epub"),
        LATER=str(books_dir / "metamorphosis.epub"),  # added once the tree is walked: announced
        OUT=str(tmp_path),
        WALKED=str(tmp_path / "walked"),
    )
    done = subprocess.run(
        [
            "dbus-run-session",
            "--",
            "xvfb-run",
            "-a",
            "-s",
            "-screen 0 1280x800x24",
            "bash",
            "-c",
            SCRIPT,
        ],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
        env=env,
    )
    tree_file = tmp_path / "tree.jsonl"
    log = (tmp_path / "app.log").read_text() if (tmp_path / "app.log").exists() else ""
    assert done.returncode == 0 and tree_file.exists(), (done.stderr[-2000:], log[-2000:])
    lines = [json.loads(line) for line in tree_file.read_text().splitlines()]
    heard = [n["announcement"] for n in lines if "announcement" in n]
    tree = [n for n in lines if "role" in n]
    assert tree[0]["role"] == "application"
    shown = [n for n in tree if n["showing"]]
    controls = {
        "push button",
        "check box",
        "combo box",
        "text",
        "spin button",
        "toggle button",
        "page tab",
        "radio button",
    }
    unnamed = [
        n["role"] for n in shown if n["focusable"] and n["role"] in controls and not n["name"]
    ]
    assert not unnamed, f"unnamed controls: {unnamed}"
    combos = [n for n in shown if n["role"] == "combo box"]
    assert combos and all(n["labelled_by"] for n in combos), combos
    names = {n["name"] for n in shown}
    assert {"Question", "Send question", "Library", "Book page"} <= names
    footer = [n for n in shown if n["role"] == "label" and "p. 3 of" in n["name"]]
    assert footer, "the reading progress is read as it says"
    page = next(n for n in shown if n["name"] == "Book page")
    assert "Rabbit" in page["text"] and page.get("caret", -1) >= 0
    assert page["role"] not in ("label", "static"), page["role"]  # a document, not a label
    # the transcript: a read-only text (not a label) whose text has no frame markers
    chat = next(n for n in shown if n["name"] == "Conversation")
    assert chat["role"] not in ("label", "static"), chat["role"]
    assert "White Rabbit" in chat["text"], chat["text"][:300]
    assert "\ufdd0" not in chat["text"] and "\ufdd1" not in chat["text"]
    # what Orca hears: the import's announcement, on the bus
    assert "Added “Metamorphosis” to your library." in heard, heard
