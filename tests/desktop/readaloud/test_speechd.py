"""Read aloud through a real speech-dispatcher (Debian's ``speech-dispatcher``) that speaks
to no sound card: its own configuration in the test's folder, ALSA's "null" device, and a
generic output module that writes each utterance to a file instead of a voice. Skipped where
speech-dispatcher is not installed."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QLocale

from core.speech import plan_book
from desktop.readaloud import controller
from desktop.readaloud.controller import ReadAloud

MODULES = Path("/usr/lib/speech-dispatcher-modules")
pytestmark = pytest.mark.skipif(
    not shutil.which("speech-dispatcher") or not (MODULES / "sd_generic").exists(),
    reason="needs Debian's speech-dispatcher (.ci/system-packages installs it)",
)
PAGES = {1: "Mr. Holmes sat up. He said nothing at all.", 2: "The end came soon."}


def start_dispatcher(folder: Path, command: str) -> tuple[subprocess.Popen[bytes], str]:
    """A speech-dispatcher whose one voice runs ``command`` ($DATA: the text); its pid and
    address."""
    conf = folder / "conf"
    (conf / "modules").mkdir(parents=True)
    (folder / "log").mkdir()
    (conf / "speechd.conf").write_text(
        f'LogLevel 3\nLogDir "{folder}/log"\nAudioOutputMethod "alsa"\nAudioALSADevice "null"\n'
        'AddModule "textfile" "sd_generic" "textfile.conf"\nDefaultModule textfile\n'
        'DefaultLanguage "en"\n'
    )
    (conf / "modules" / "textfile.conf").write_text(
        f'GenericExecuteSynth "{command}"\nGenericDelimiters "|"\nAddVoice "en" "MALE1" "en"\n'
    )
    socket = folder / "sock"
    pid_file = folder / "pid"
    daemon = subprocess.Popen(
        [
            "speech-dispatcher",
            "-s",
            "-c",
            "unix_socket",
            "-S",
            str(socket),
            "-C",
            str(conf),
            "-m",
            str(MODULES),
            "-t",
            "0",
            "-P",
            str(pid_file),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 10
    while not (socket.exists() and pid_file.exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert socket.exists(), (folder / "log" / "speech-dispatcher.log").read_text()[-2000:]
    return daemon, f"unix_socket:{socket}"


@pytest.fixture
def dispatcher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: Any) -> Iterator[Path]:
    said = tmp_path / "said.txt"
    command = getattr(request, "param", f"echo \\'$DATA\\' >> {said}")
    daemon, address = start_dispatcher(tmp_path / "speechd", command)
    monkeypatch.setenv("SPEECHD_ADDRESS", address)
    monkeypatch.setenv("MARGIN_SPEECH_ENGINE", "speechd")
    before = QLocale()
    QLocale.setDefault(QLocale("en_US"))  # the engine starts with the default locale's voice
    try:
        yield said
    finally:
        QLocale.setDefault(before)
        os.killpg(daemon.pid, signal.SIGTERM)  # the daemon, its modules and their commands
        daemon.wait(10)


def planner(page: int, offset: int) -> Any:
    return plan_book(lambda n: PAGES[n], 2, page, "epub", offset)


def test_the_sentences_reach_speech_dispatcher_in_order(qtbot: Any, dispatcher: Path) -> None:
    speech = ReadAloud()
    speech.set_source(planner, "en")
    listened: list[int] = []
    speech.pageListened.connect(listened.append)
    told: list[str] = []
    speech.message.connect(told.append)
    with qtbot.waitSignal(speech.finished, timeout=20000):
        assert speech.play(1), told
    assert dispatcher.read_text().splitlines() == [
        "Mr. Holmes sat up.",
        "He said nothing at all.",
        "The end came soon.",
    ]
    assert listened == [1, 2] and told == []


@pytest.mark.parametrize(
    "dispatcher", ["echo \\\\'$DATA\\\\' > /dev/null; sleep 30"], indirect=True
)
def test_an_engine_stalling_mid_sentence(
    qtbot: Any, dispatcher: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(controller, "STALL_MIN_MS", 1500)
    monkeypatch.setattr(controller, "STALL_MS_PER_CHAR", 1)
    speech = ReadAloud()
    speech.set_source(planner, "en")
    told: list[str] = []
    speech.message.connect(told.append)
    started = time.monotonic()
    assert speech.play(1)
    qtbot.waitUntil(lambda: speech.state == "stopped", timeout=10000)
    assert time.monotonic() - started < 8
    assert len(told) == 1 and "stopped answering in the middle of a sentence" in told[0]
