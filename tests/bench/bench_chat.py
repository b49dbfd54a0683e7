"""The chat pane while the fake server streams 200 tokens a second.

Targets (issue 5): main-thread stalls < 50 ms and the pane keeps up (repaints ≥ 20 a second);
first streamed text visible within 100 ms of the first byte arriving.
Run: QT_QPA_PLATFORM=offscreen .venv/bin/python tests/bench/bench_chat.py
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from common import FIXTURES, machine, median, percentile, report

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["PYTHON_KEYRING_BACKEND"] = "tests.support.memory_keyring.MemoryKeyring"
os.environ["ANTHROPIC_API_KEY"] = "sk-ant-bench"
RUNS = 3


async def bench(app: object) -> None:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from core.agent.service import AgentService, make_provider
    from core.app import Margin
    from core.books.importer import import_book
    from core.paths import resolve_paths
    from core.settings import Settings
    from desktop.main_window import MainWindow
    from tests.fakes.anthropic_server import FakeAnthropic, Reply

    with tempfile.TemporaryDirectory() as home, FakeAnthropic() as fake:
        app = Margin.open(resolve_paths(Path(home)))
        library = app.library
        book = import_book(library, FIXTURES / "books" / "alice_in_wonderland.epub").book
        window = MainWindow(app, restore=False)
        window.show()
        chat = window.chat
        settings = Settings(provider="anthropic", base_url=fake.url, model="claude-test")
        app.agent = AgentService(
            library,
            library.paths,
            settings,
            provider_factory=lambda s, k: make_provider(s, k, max_retries=0),
            conversations=app.conversations,
            search=app.search,
            executor=app.executor,
        )
        window.open_book(book.id, 40)
        from core.agent.providers.anthropic import load_sdk

        await load_sdk()
        answer = " ".join(
            f"word{i}" for i in range(600)
        )  # 600 deltas of ~4 characters at 200/s: 3 s
        stalls: list[float] = []
        latencies: list[float] = []
        rates: list[float] = []
        for run in range(RUNS):
            fake.add(
                Reply.text(
                    answer,
                    chunk_chars=4,
                    tokens_per_second=200,
                    usage={"input_tokens": 900, "output_tokens": 600},
                )
            )
            gaps: list[float] = []
            last = time.perf_counter()

            def beat() -> None:
                nonlocal last
                now = time.perf_counter()
                gaps.append((now - last) * 1000)
                last = now

            renders: list[float] = []
            first_visible: list[float] = []

            def rendered(_conv: int) -> None:
                now = time.perf_counter()
                renders.append(now)
                if not first_visible and "word0" in chat.transcript_text():
                    first_visible.append(now)

            chat.answerRendered.connect(rendered)
            timer = QTimer()
            timer.setInterval(10)
            timer.timeout.connect(beat)
            timer.start()
            await asyncio.sleep(0.1)
            gaps.clear()
            last = time.perf_counter()
            chat.new_conversation()
            chat.input.setPlainText(f"Tell me a long story ({run})")
            chat.send()
            while chat.live:
                await asyncio.sleep(0.01)
            timer.stop()
            chat.answerRendered.disconnect(rendered)
            request = fake.message_requests[-1]
            assert request.first_byte_at is not None and first_visible
            latencies.append((first_visible[0] - request.first_byte_at) * 1000)
            stalls.append(max(gaps) - 10)
            span = renders[-1] - renders[0]
            rates.append((len(renders) - 1) / span if span > 0 else 0.0)
            QApplication.processEvents()
        print("  stalls per run:", ", ".join(f"{x:.1f} ms" for x in stalls))
        report(
            "main-thread stall while streaming (max of runs)",
            f"{max(stalls):.1f} ms",
            "< 50 ms",
            max(stalls) < 50,
        )
        report(
            "pane repaints per second while streaming",
            f"{median(rates):.1f}/s",
            "≥ 20/s",
            median(rates) >= 20,
        )
        report(
            "first byte → first text visible",
            f"median {median(latencies):.1f} ms, max {max(latencies):.1f}",
            "< 100 ms",
            max(latencies) < 100,
        )
        report("(p95 heartbeat gap, last run)", f"{percentile(gaps, 95) - 10:.1f} ms", "", True)
        window.close()
        await window.shutdown()
        library.close()


def main() -> None:
    print(f"bench_chat on {machine()}; {RUNS} runs of 600 deltas at 200 a second")
    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        runner.run(bench(app))


if __name__ == "__main__":
    main()
