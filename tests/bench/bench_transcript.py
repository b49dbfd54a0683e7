"""The chat transcript's own cost, without the pane: prepending 120 older messages (60
questions and 60 answers of about 3 KB of Markdown, as a long conversation opens) and
replacing the live answer's tail (a streaming tick), medians over rounds.

Targets: a prepended message ≤ 2 ms (older messages go in batches of 6 per event-loop turn),
a live replace ≤ 1 ms. With ``--old PATH`` (a checkout of an earlier version) the earlier
``desktop/chat/transcript.py`` runs interleaved with this one, round by round.
Run: QT_QPA_PLATFORM=offscreen .venv/bin/python tests/bench/bench_transcript.py [--rounds 9]
[--old /tmp/margin-old]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from pathlib import Path
from types import ModuleType

from common import ROOT, machine, median, report

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

MESSAGES = 60


def load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def one_round(module: ModuleType, answers: list[str]) -> tuple[float, float]:
    """(ms per prepended message, median ms per live replace) for one fresh transcript."""
    transcript = module.Transcript()
    transcript.resize(420, 640)
    transcript.show()
    start = time.perf_counter()
    for i in range(MESSAGES):
        transcript.prepend(f"a{i}", answers[i])
        transcript.prepend(f"q{i}", f"<p>Question {i}?</p>")
    per_message = (time.perf_counter() - start) * 1000 / (2 * MESSAGES)
    transcript.add("live", "")
    ticks = []
    for k in range(40):
        t = time.perf_counter()
        transcript.replace("live", answers[0][: 200 + 40 * k])
        ticks.append((time.perf_counter() - t) * 1000)
    transcript.close()
    transcript.deleteLater()
    return per_message, median(ticks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--old", type=Path, help="a checkout whose transcript runs alongside")
    args = parser.parse_args()
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    from bench_chat import earlier_answer

    from desktop.chat.render import markdown

    answers = [markdown(earlier_answer(i)) for i in range(MESSAGES)]
    sides = {"new": load(ROOT / "desktop/chat/transcript.py", "transcript_new")}
    if args.old is not None:
        sides["old"] = load(args.old / "desktop/chat/transcript.py", "transcript_old")
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
    for _ in range(args.rounds):
        for name, module in sides.items():
            results[name].append(one_round(module, answers))
            app.processEvents()
    print(machine())
    for name, rows in results.items():
        prepend = median([r[0] for r in rows])
        tick = median([r[1] for r in rows])
        report(f"{name}: prepend one older message", f"{prepend:.2f} ms", "≤ 2 ms", prepend <= 2)
        report(f"{name}: replace the live answer's tail", f"{tick:.2f} ms", "≤ 1 ms", tick <= 1)


if __name__ == "__main__":
    main()
