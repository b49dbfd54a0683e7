"""The chat pane while the fake server streams 200 tokens a second, after 0, 20 and 60
earlier answers (about 3 KB of Markdown each) in the same conversation.

Targets (issues 5 and 15): the worst main-thread stall at most 16 ms even with 60 earlier
answers, the pane keeps up (repaints ≥ 20 a second); first streamed text visible within
100 ms of the first byte arriving.
Each run also prints how much CPU the UI thread itself used during its worst gap: on a shared,
loaded machine (load average above the core count) a 40 ms gap with 1 ms of CPU is the
scheduler, not the pane. Compare old and new interleaved, on a quiet machine.
Run: QT_QPA_PLATFORM=offscreen .venv/bin/python tests/bench/bench_chat.py [--history 0,20,60] [--runs 10]
[--stream-on-loop] (the old way, to compare: run both, alternating)
With ``--spoiler-safe --old-new`` (issue 41) each run is made twice, interleaved: the spoiler
check letting a sentence out only once it has ended ("old") and in checked pieces while it is
written ("new", ``SpoilerGuard.prefix``); the goal is the first text ≤ 150 ms after the first
byte. ``--smoke``: one short run of each, for the suite.
With ``--huge word:1000000,table:3000`` it opens conversations holding one huge answer instead
(issue 27 item 6) and reports how long the UI thread is blocked.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import FIXTURES, SMOKE, Heartbeat, machine, median, report

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["PYTHON_KEYRING_BACKEND"] = "tests.support.memory_keyring.MemoryKeyring"
os.environ["ANTHROPIC_API_KEY"] = "sk-ant-bench"
RUNS = 3
PARAGRAPH = (
    "Alice was **beginning** to get very tired of sitting by her sister on the bank [p. 3]. "
    "Once or twice she had peeped into the book her sister was reading, but it had no "
    "pictures or conversations in it, *and what is the use of a book*, thought Alice. "
)


def earlier_answer(i: int) -> str:
    """About 3 KB of Markdown, like a real long answer: a heading, paragraphs, a list, a quote."""
    body = [f"### Part {i}", "", PARAGRAPH * 3, "", "- one point", "- another point", ""]
    body += ["> “Curiouser and curiouser!” cried Alice.", "", PARAGRAPH * 4, "", PARAGRAPH * 3]
    return "\n".join(body)


def seed(app: object, book_id: int, answers: int) -> int:
    """A conversation with ``answers`` earlier questions and answers, written to the store."""
    from core.agent.types import AssistantMessage, CitationRef, Question, TextPart, Usage

    conversations = app.conversations  # type: ignore[attr-defined]
    conv = conversations.create(book_id, f"{answers} earlier answers")
    for i in range(answers):
        ids = conversations.start_run(
            conv.id,
            provider="anthropic",
            model="claude-test",
            strategy="tool-use",
            question=Question(f"Earlier question {i}?"),
        )
        text = earlier_answer(i)
        cite = (CitationRef(book_id, 3, 3, "tired of sitting by her sister"),)
        conversations.finish(
            conversation_id=conv.id,
            ids=ids,
            status="complete",
            message=AssistantMessage((TextPart(text, cite),)),
            text=text,
            citations=cite,
            steps=1,
            usage=Usage(900, 700),
            stop_reason="end_turn",
        )
    return int(conv.id)


def _serve(conn: Any) -> None:
    """The fake server in its own process, driven through a pipe (see ``ServerProcess``)."""
    from tests.fakes.anthropic_server import FakeAnthropic, Reply

    with FakeAnthropic() as fake:
        conn.send(fake.url)
        while True:
            command, args, kwargs = conn.recv()
            if command == "add":
                fake.add(Reply.text(*args, **kwargs))
                conn.send(None)
            elif command == "first_byte":
                conn.send(fake.message_requests[-1].first_byte_at)
            else:
                return


class ServerProcess:
    """Like a real model server, the fake one runs in another process: in this one its
    thread would take the interpreter lock from the UI thread and count as the pane's stall
    (``perf_counter`` is the system's monotonic clock, the same in both processes)."""

    def __init__(self) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child,), daemon=True)
        self._process.start()
        self.url = self._conn.recv()

    def add_text(self, text: str, **kwargs: Any) -> None:
        self._conn.send(("add", (text,), kwargs))
        self._conn.recv()

    def first_byte_at(self) -> float | None:
        self._conn.send(("first_byte", (), {}))
        return self._conn.recv()

    def close(self) -> None:
        self._conn.send(("stop", (), {}))
        self._process.join(5)


class ServerThread:
    """The fake server on a thread of this process (``--server-thread``: the old way)."""

    def __init__(self) -> None:
        from tests.fakes.anthropic_server import FakeAnthropic

        self._fake = FakeAnthropic().start()
        self.url = self._fake.url

    def add_text(self, text: str, **kwargs: Any) -> None:
        from tests.fakes.anthropic_server import Reply

        self._fake.add(Reply.text(text, **kwargs))

    def first_byte_at(self) -> float | None:
        return self._fake.message_requests[-1].first_byte_at

    def close(self) -> None:
        self._fake.close()


async def bench(
    app: object,
    sizes: list[int],
    spoiler_safe: bool,
    runs: int = RUNS,
    thread: bool = False,
    modes: tuple[str, ...] = ("",),
    words: int = 600,
) -> None:
    from PySide6.QtCore import QTimer

    from core.agent.service import AgentService, make_provider
    from core.agent.spoilers import SpoilerGuard
    from core.app import Margin
    from core.books.importer import import_book
    from core.paths import resolve_paths
    from core.settings import Settings
    from desktop.window.main_window import MainWindow

    fake = ServerThread() if thread else ServerProcess()
    with tempfile.TemporaryDirectory() as home:
        app = Margin.open(resolve_paths(Path(home)))
        library = app.library
        book = import_book(library, FIXTURES / "books" / "alice_in_wonderland.epub").book
        window = MainWindow(app, restore=False)
        window.show()
        chat = window.chat
        settings = Settings(
            provider="anthropic", base_url=fake.url, model="claude-test", spoiler_safe=spoiler_safe
        )
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
        await chat.warm_up()
        print(f"  one earlier answer is {len(earlier_answer(0).encode())} bytes of Markdown")
        worst: dict[int, float] = {}
        for size in sizes:
            conv = seed(app, book.id, size)
            started = time.perf_counter()
            select = getattr(chat, "select_conversation", None)
            if select is not None:
                select(conv)
            else:  # the pane before issue 22 (interleaved old/new runs)
                chat._reload_conversations(select=conv)
            opened = (time.perf_counter() - started) * 1000
            while not chat.history_complete():
                await asyncio.sleep(0.01)
            filled = (time.perf_counter() - started) * 1000
            stalls_by: dict[str, list[float]] = {m: [] for m in modes}
            stall_cpu_by: dict[str, list[float]] = {m: [] for m in modes}
            latencies_by: dict[str, list[float]] = {m: [] for m in modes}
            rates_by: dict[str, list[float]] = {m: [] for m in modes}
            cpu_by: dict[str, list[float]] = {m: [] for m in modes}
            for run, mode in ((r, m) for r in range(runs) for m in modes):
                stalls, stall_cpu = stalls_by[mode], stall_cpu_by[mode]
                latencies, rates = latencies_by[mode], rates_by[mode]
                if mode:
                    SpoilerGuard.prefixes = mode == "new"
                # 600 deltas of ~4 characters at 200/s: 3 s; words unique to the run, in
                # paragraphs of 60 words like a real answer
                tag = run * len(modes) + modes.index(mode)  # words as long as before
                answer = " ".join(
                    f"r{size}x{tag}w{i}" + ("\n\n" if i % 60 == 59 else "") for i in range(words)
                )
                first_word = f"r{size}x{tag}w0"
                fake.add_text(
                    answer,
                    chunk_chars=4,
                    tokens_per_second=200,
                    usage={"input_tokens": 900, "output_tokens": 600},
                )
                gaps: list[float] = []
                cpus: list[float] = []  # the UI thread's own CPU time in each gap
                last, last_cpu = time.perf_counter(), time.thread_time()

                def beat() -> None:
                    nonlocal last, last_cpu
                    now, cpu = time.perf_counter(), time.thread_time()
                    gaps.append((now - last) * 1000)
                    cpus.append((cpu - last_cpu) * 1000)
                    last, last_cpu = now, cpu

                renders: list[float] = []
                first_visible: list[float] = []

                def rendered(_conv: int) -> None:
                    now = time.perf_counter()
                    renders.append(now)
                    if not first_visible and first_word in chat.transcript_text():
                        first_visible.append(now)

                chat.answerRendered.connect(rendered)
                timer = QTimer()
                timer.setInterval(10)
                timer.timeout.connect(beat)
                timer.start()
                await asyncio.sleep(0.1)
                gaps.clear()
                last, last_cpu = time.perf_counter(), time.thread_time()
                chat.input.setPlainText(f"Tell me a long story ({tag})")
                cpu_start = time.process_time()
                chat.send()
                while chat.live:
                    await asyncio.sleep(0.01)
                await asyncio.sleep(0.05)  # the close-out (final render) is part of the run
                timer.stop()
                cpu_by[mode].append((time.process_time() - cpu_start) * 1000)
                chat.answerRendered.disconnect(rendered)
                first_byte = fake.first_byte_at()
                assert first_byte is not None and first_visible
                latencies.append((first_visible[0] - first_byte) * 1000)
                stalls.append(max(gaps) - 10)
                worst_gap = max(range(len(gaps)), key=gaps.__getitem__)
                stall_cpu.append(cpus[worst_gap])
                span = renders[-1] - renders[0]
                rates.append((len(renders) - 1) / span if span > 0 else 0.0)
                await asyncio.sleep(0.01)
            for mode in modes:
                stalls, stall_cpu = stalls_by[mode], stall_cpu_by[mode]
                latencies, rates, cpu = latencies_by[mode], rates_by[mode], cpu_by[mode]
                label = f"{mode}, " if mode else ""
                worst[size] = max(worst.get(size, 0.0), max(stalls))
                print(
                    f"  {label}{size:>3} earlier answers: stalls per run "
                    + ", ".join(f"{x:.1f}" for x in stalls)
                    + " ms (the UI thread's own CPU in each worst gap: "
                    + ", ".join(f"{x:.1f}" for x in stall_cpu)
                    + f" ms; a stall with little CPU is the machine, not the pane); opening the conversation blocks {opened:.0f} ms, all of it shown "
                    f"after {filled:.0f} ms; process CPU per answer median {median(cpu):.0f} ms"
                )
                report(
                    f"{label}worst main-thread stall while streaming, {size} earlier answers",
                    f"{max(stalls):.1f} ms (median run {median(stalls):.1f})",
                    "≤ 16 ms",
                    max(stalls) <= 16,
                )
                report(
                    f"{label}pane repaints per second, {size} earlier answers",
                    f"{median(rates):.1f}/s",
                    "≥ 20/s",
                    median(rates) >= 20,
                )
                goal = 150 if spoiler_safe else 100  # issue 41: with the check on, ≤ 150 ms
                report(
                    f"{label}first byte → first text visible, {size} earlier answers",
                    f"median {median(latencies):.1f} ms, max {max(latencies):.1f}",
                    f"< {goal} ms",
                    median(latencies) < goal,
                )
        print(
            "  worst stall by history size:",
            ", ".join(f"{k}: {v:.1f} ms" for k, v in worst.items()),
        )
        window.close()
        await window.shutdown()
        library.close()
    fake.close()


def seed_one(app: object, book_id: int, text: str) -> int:
    """A conversation holding one answer ``text`` (as a local server ignoring max_tokens)."""
    from tests.support.answers import store_answer

    conversations = app.conversations  # type: ignore[attr-defined]
    conv = conversations.create(book_id, "huge")
    store_answer(conversations, conv.id, text)
    return int(conv.id)


async def bench_huge(cases: list[str]) -> None:
    """Issue 27 item 6: open a conversation holding one huge answer; how long until it is
    shown, and the longest the UI thread is blocked meanwhile."""

    from core.app import Margin
    from core.books.importer import import_book
    from core.paths import resolve_paths
    from desktop.window.main_window import MainWindow

    with tempfile.TemporaryDirectory() as home:
        app = Margin.open(resolve_paths(Path(home)))
        book = import_book(app.library, FIXTURES / "books" / "alice_in_wonderland.epub").book
        window = MainWindow(app, restore=False)
        window.show()
        chat = window.chat
        window.open_book(book.id, 40)
        await asyncio.sleep(0.5)
        for case in cases:
            kind, n = case.split(":")
            if kind == "word":
                text = "w" * int(n)
            else:
                text = "| row | value |\n|---|---|\n" + "".join(
                    f"| r{i} | v{i} |\n" for i in range(int(n))
                )
            conv = seed_one(app, book.id, text)
            heart = Heartbeat(10)
            heart.start()
            started = time.perf_counter()
            select = getattr(chat, "select_conversation", None)
            if select is not None:
                select(conv)
            else:  # the pane before issue 22 (interleaved old/new runs)
                chat._reload_conversations(select=conv)
            while not chat.history_complete():
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)
            shown = (time.perf_counter() - started) * 1000
            heart.stop()
            gaps = heart.gaps
            report(
                f"open a conversation with a {case.replace(':', ' of ')} answer",
                f"shown after {shown:.0f} ms, UI blocked at most {max([*gaps, 0]) - 10:.0f} ms",
                "blocked ≤ 100 ms",
                max([*gaps, 0]) - 10 <= 100,
            )
        window.close()
        await window.shutdown()
        app.close()


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--history",
        default="0,20,60",
        help="comma-separated numbers of earlier answers in the conversation (default 0,20,60)",
    )
    parser.add_argument(
        "--spoiler-safe",
        action="store_true",
        help="keep the spoiler check on (it releases text sentence by sentence, so the pane "
        "sees fewer, larger pieces)",
    )
    parser.add_argument(
        "--huge",
        default="",
        help="instead: open conversations holding one huge answer, e.g. word:100000,table:3000",
    )
    parser.add_argument(
        "--server-thread",
        action="store_true",
        help="run the fake server on a thread of this process (it then competes with the UI "
        "thread for the interpreter lock; by default it runs in its own process)",
    )
    parser.add_argument(
        "--stream-on-loop",
        action="store_true",
        help="the SDK reads the stream on the UI loop (the way before issue 27 item 10), not "
        "on its own thread",
    )
    parser.add_argument(
        "--old-new",
        action="store_true",
        help="with --spoiler-safe: each run old (a sentence out once it ends) and new (in "
        "checked pieces while written), interleaved",
    )
    parser.add_argument(
        "--smoke", action="store_true", help="one short run per size and mode (for the suite)"
    )
    parser.add_argument("--runs", type=int, default=RUNS, help=f"streaming runs per size ({RUNS})")
    args = parser.parse_args()
    modes = ("old", "new") if args.old_new else ("",)
    runs, words = (1, 120) if args.smoke or SMOKE else (args.runs, 600)
    if args.stream_on_loop:
        from core.agent.providers.anthropic.client import AnthropicProvider

        AnthropicProvider.stream_on_thread = False
    sizes = [int(x) for x in args.history.split(",") if x.strip()]
    if args.huge:
        import qasync
        from PySide6.QtWidgets import QApplication

        qt = QApplication.instance() or QApplication(sys.argv[:1])
        with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(qt)) as runner:
            runner.run(bench_huge([c for c in args.huge.split(",") if c]))
        return
    print(
        f"bench_chat on {machine()}; {args.runs} runs of 600 deltas at 200 a second per size; "
        f"spoiler check {'on' if args.spoiler_safe else 'off'}"
    )
    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        runner.run(bench(app, sizes, args.spoiler_safe, runs, args.server_thread, modes, words))


if __name__ == "__main__":
    main()
