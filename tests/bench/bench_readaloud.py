"""Read aloud: Play → the engine speaking the first sentence, and the gap between one sentence
ending and the next one starting, for Margin's controller (plans the page with the app's
splitter, marks nothing here), for Margin in the window (each sentence marked on the page, a
page turned by itself; and the delay from a sentence's start to its mark), and their anchor,
a bare QTextToSpeech that says the same sentences one after the other; all interleaved round
by round.

Engines: "speechd" — a private speech-dispatcher (no sound card: ALSA's null device) whose
generic module synthesises each sentence with espeak-ng to /dev/null, so the figures hold
speech-dispatcher's round trips and espeak-ng's synthesis; "mock" — Qt's test engine (the
cost of Qt and of Margin's own code alone). Sentences: Alice's Adventures in Wonderland, p. 5.

Targets (issue 44): first word ≤ 300 ms, gap between sentences ≤ 150 ms (medians); the mark
is held to the gap's target.
Run: QT_QPA_PLATFORM=offscreen .venv/bin/python tests/bench/bench_readaloud.py [--rounds N]
     [--sentences N] [--engines speechd,mock] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import FIXTURES, ROOT, machine, median, report

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
SIDES = {
    "margin": "Margin",
    "window": "Margin, window",
    "anchor": "bare QTextToSpeech",
}
ESPEAK = "espeak-ng -v \\'$LANGUAGE\\' --stdout \\'$DATA\\' > /dev/null"


def sentences(count: int, home: Path) -> tuple[Any, list[Any]]:
    """A library with Alice in it, and the first ``count`` utterances from page 5."""
    os.environ["MARGIN_HOME"] = str(home)
    from core.books.importer import import_book
    from core.paths import resolve_paths
    from core.speech import plan_book
    from core.store.library import Library

    library = Library.open(resolve_paths().ensure())
    book = import_book(library, FIXTURES / "books" / "alice_in_wonderland.epub").book
    planned = plan_book(lambda n: library.page(book.id, n).text, book.page_count, 5)
    return (library, book), [next(planned) for _ in range(count)]


def wait(app: Any, done: Any, seconds: float = 60) -> None:
    deadline = time.perf_counter() + seconds
    while not done() and time.perf_counter() < deadline:
        app.processEvents()
        time.sleep(0.001)
    if not done():
        raise SystemExit("the engine did not finish in time")


def margin_round(app: Any, source: Any, count: int) -> tuple[float, list[float]]:
    from core.speech import plan_book
    from desktop.readaloud.controller import ReadAloud
    from desktop.readaloud.speaker import Speaker

    library, book = source
    speaker = Speaker()
    marks: list[tuple[str, float]] = []
    # stamped before the controller hears them (it says the next sentence on "finished")
    speaker.started.connect(lambda: marks.append(("start", time.perf_counter())))
    speaker.finished.connect(lambda: marks.append(("end", time.perf_counter())))
    speech = ReadAloud(speaker)
    speech.set_source(
        lambda p, o: plan_book(lambda n: library.page(book.id, n).text, book.page_count, p, "", o),
        "en",
    )
    assert speech.speaker.ready(), speech.speaker.problem
    speech.set_rate(1.0)
    clicked = time.perf_counter()
    speech.play(5)
    wait(app, lambda: sum(1 for k, _ in marks if k == "end") >= count)
    speech.stop()
    speech.deleteLater()
    return _figures(clicked, marks, count)


def open_window(home: Path) -> Any:
    """A main window (headless) with Alice open at page 5, in the library ``sentences`` made."""
    from core.app import Margin
    from core.paths import resolve_paths
    from desktop.window.main_window import MainWindow

    margin = Margin.open(resolve_paths(home))
    window = MainWindow(margin, restore=False)
    window.reader.setProperty("headless", True)
    window.resize(1280, 860)
    window.show()
    book = margin.library.list_books()[0]
    window.open_book(book.id, 5)
    return window


MARK_LAGS: list[float] = []  # ms from a sentence's start to its mark on the page (window)


def window_round(app: Any, window: Any, count: int) -> tuple[float, list[float]]:
    """Margin in the window: each sentence marked on the page as it starts, and the page
    turned by itself half-way (Play from ``count // 2`` sentences before page 5's end).
    The engine is told to speak before the page is marked, so the mark's delay is measured
    on its own (``MARK_LAGS``)."""
    from core.speech.plan import page_utterances

    rs = window.read_aloud.rs
    speech, speaker = rs.speech, rs.speech.speaker
    reader = window.reader
    reader.go_to_page(5)
    app.processEvents()
    marks: list[tuple[str, float]] = []

    def started() -> None:
        marks.append(("start", time.perf_counter()))

    def finished() -> None:
        marks.append(("end", time.perf_counter()))

    marked_at: list[float] = []

    def marked(_u: Any) -> None:  # connected after the reader's own marking: it has marked
        marked_at.append(time.perf_counter())

    speaker.started.connect(started)
    speaker.finished.connect(finished)
    speech.utteranceStarted.connect(marked)
    rs.book_opened()
    speech.set_rate(1.0)
    stored = reader.library.page(reader.book.id, 5).text
    start = list(page_utterances(5, stored))[-max(1, count // 2)].start
    clicked = time.perf_counter()
    speech.play(5, start)
    wait(app, lambda: sum(1 for k, _ in marks if k == "end") >= count)
    speech.stop()
    speaker.started.disconnect(started)
    speaker.finished.disconnect(finished)
    speech.utteranceStarted.disconnect(marked)
    starts = [t for k, t in marks if k == "start"]
    # the i-th sentence's mark after its voice began (0: marked before the voice began)
    MARK_LAGS.extend(
        max(0.0, m - t) * 1000 for m, t in zip(marked_at[:count], starts[:count], strict=False)
    )
    assert reader.page == 6, "the page did not turn"
    return _figures(clicked, marks, count)


def anchor_round(app: Any, said: list[Any], count: int) -> tuple[float, list[float]]:
    from PySide6.QtTextToSpeech import QTextToSpeech

    tts = QTextToSpeech(os.environ["MARGIN_SPEECH_ENGINE"])
    tts.setRate(1.0)
    marks: list[tuple[str, float]] = []
    queue = [u.text for u in said]

    def state(s: Any) -> None:
        now = time.perf_counter()
        if s == QTextToSpeech.State.Speaking:
            marks.append(("start", now))
        elif s == QTextToSpeech.State.Ready:
            marks.append(("end", now))
            if queue:
                tts.say(queue.pop(0))

    tts.stateChanged.connect(state)
    clicked = time.perf_counter()
    tts.say(queue.pop(0))
    wait(app, lambda: sum(1 for k, _ in marks if k == "end") >= count)
    tts.stop()
    tts.deleteLater()
    return _figures(clicked, marks, count)


def _figures(
    clicked: float, marks: list[tuple[str, float]], count: int
) -> tuple[float, list[float]]:
    starts = [t for k, t in marks if k == "start"]
    ends = [t for k, t in marks if k == "end"]
    first = (starts[0] - clicked) * 1000
    gaps = [
        max(0.0, s - e) * 1000 for e, s in zip(ends[: count - 1], starts[1:count], strict=False)
    ]
    return first, gaps


def espeak_first_audio(said: list[Any], rounds: int) -> list[float]:
    """ms from starting espeak-ng on a sentence to its first byte of audio: what a sentence
    costs before it is heard, on top of what speech-dispatcher reports (its "begin" comes
    before the synthesis)."""
    import subprocess

    times = []
    for _ in range(rounds):
        for u in said:
            started = time.perf_counter()
            with subprocess.Popen(["espeak-ng", "--stdout", u.text], stdout=subprocess.PIPE) as p:
                assert p.stdout is not None
                p.stdout.read(1)
                times.append((time.perf_counter() - started) * 1000)
                p.stdout.read()
    return times


def speech_dispatcher(folder: Path) -> Any:
    sys.path.insert(0, str(ROOT))
    from tests.desktop.readaloud.test_speechd import start_dispatcher

    daemon, address = start_dispatcher(folder, ESPEAK)
    os.environ["SPEECHD_ADDRESS"] = address
    return daemon


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--sentences", type=int, default=6)
    parser.add_argument("--engines", default="speechd,mock")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="one short round on the test engine, without the window (its start-up costs "
        "the suite seconds; the window's reading aloud has its own tests)",
    )
    args = parser.parse_args()
    if args.smoke:
        args.rounds, args.sentences, args.engines = 1, 2, "mock"
    from PySide6.QtCore import QLocale
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    QLocale.setDefault(QLocale("en_US"))
    print(f"Read aloud: Play → first word, gap between sentences — {machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        source, said = sentences(args.sentences, Path(tmp) / "home")
        for engine in args.engines.split(","):
            daemon = None
            if engine == "speechd":
                if not (shutil.which("speech-dispatcher") and shutil.which("espeak-ng")):
                    print("  speechd: speech-dispatcher or espeak-ng not installed, skipped")
                    continue
                daemon = speech_dispatcher(Path(tmp) / f"speechd-{engine}")
            os.environ["MARGIN_SPEECH_ENGINE"] = engine
            figures: dict[str, tuple[list[float], list[float]]] = {
                "margin": ([], []),
                "window": ([], []),
                "anchor": ([], []),
            }
            if args.smoke:
                del figures["window"]
            window = None if args.smoke else open_window(Path(tmp) / "home")
            MARK_LAGS.clear()
            try:
                for _ in range(args.rounds):
                    for side in figures:  # interleaved
                        if side == "margin":
                            first, gaps = margin_round(app, source, args.sentences)
                        elif side == "window" and window is not None:
                            first, gaps = window_round(app, window, args.sentences)
                        else:
                            first, gaps = anchor_round(app, said, args.sentences)
                        figures[side][0].append(first)
                        figures[side][1].extend(gaps)
            finally:
                if window is not None:
                    window.close()
                    window.app.close()
                if daemon is not None:
                    daemon.terminate()
                    daemon.wait(10)
            for side, (firsts, gaps) in figures.items():
                name = f"{engine} · {SIDES[side]}"
                report(
                    f"{name}: Play → first word",
                    f"{median(firsts):.0f} ms median",
                    "≤ 300 ms",
                    median(firsts) <= 300,
                )
                report(
                    f"{name}: gap between sentences",
                    f"{median(gaps):.0f} ms median (max {max(gaps):.0f})",
                    "≤ 150 ms",
                    median(gaps) <= 150,
                )
            if MARK_LAGS:
                report(
                    f"{engine} · Margin, window: sentence said → marked on the page",
                    f"{median(MARK_LAGS):.0f} ms median (max {max(MARK_LAGS):.0f})",
                    "≤ 150 ms",
                    median(MARK_LAGS) <= 150,
                )
        if "speechd" in args.engines and shutil.which("espeak-ng"):
            audio = espeak_first_audio(said, args.rounds)
            report(
                "espeak-ng: a sentence → its first audio",
                f"{median(audio):.0f} ms median (max {max(audio):.0f})",
                "(added to both)",
                True,
            )
        source[0].close()


if __name__ == "__main__":
    main()
