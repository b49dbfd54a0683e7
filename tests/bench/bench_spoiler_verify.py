"""The wait a verifying model adds to an answer (issue 23): time from the answer's end to its
final check, before (verifications one after another, each stalling the stream) and after
(side by side, each started when its sentence ends; ``spoiler_verify.PendingSegments``).

The real ``anthropic`` SDK against the fake server on loopback. The answer, 8 sentences about
*Metamorphosis* read to the end of part I (6 of them doubtful there: ``DOUBTFUL`` and two
more), streams at 60 deltas a second; every verification reply is UNSUPPORTED and comes
``DELAY`` seconds late (a real API's round
trip for ~950 input tokens). "Added wait" = the answer's total time minus the same answer's
time with verification off (then the final check ends with the stream): the time between the
answer's end and its final check. Old and new are interleaved, medians of ``ROUNDS``.

"Before" is the single-file loop of commit 4273f78 (``git show``), loaded beside today's code.
Run: .venv/bin/python tests/bench/bench_spoiler_verify.py
"""

from __future__ import annotations

import asyncio
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import FIXTURES, ROOT, machine, median, report

import core.agent.chat as chat
from core.agent.events import RunFinished, SpoilerHidden
from core.agent.service import AgentService, make_provider
from core.books.importer import import_book
from core.paths import resolve_paths
from core.settings import AgentLimits, Settings
from core.store.library import Library
from tests.fakes.anthropic_server import FakeAnthropic, Reply

BEFORE = "4273f78"
DELAY = 0.6
ROUNDS = 5
READ_TO = 28
DOUBTFUL = (
    "The middle lodger spits on the floor and announces that he is leaving.",
    "In the end Gregor dies.",
    "Later his sister finds work.",
    "He eventually starves.",
)
HONEST = (
    "Gregor Samsa wakes up one morning changed into a monstrous vermin.",
    "He worries first about missing his train and his job as a travelling salesman.",
    "The chief clerk comes to the flat to ask why he is late.",
    "His family is shocked when he finally opens the door.",
)
ANSWER = " ".join(s for pair in zip(HONEST, DOUBTFUL, strict=True) for s in pair)


def old_loop() -> Any:
    source = subprocess.run(
        ["git", "show", f"{BEFORE}:core/agent/loop.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "loop_before.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("core.agent._loop_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.AgentLoop


def one_answer(lib: Library, fake: FakeAnthropic, book_id: int, verify: bool) -> tuple[float, int]:
    """Seconds from the question to the final event, and the sentences held back."""
    settings = Settings(
        provider="anthropic",
        base_url=fake.url,
        model="claude-test",
        limits=AgentLimits(),
        spoiler_verify=verify,
    )
    service = AgentService(
        lib,
        lib.paths,
        settings,
        provider_factory=lambda s, k: make_provider(s, k, max_retries=0, timeout=10.0),
        retry_delay=0.01,
    )
    conv = service.create_conversation(book_id)
    fake.add(Reply.text(ANSWER, chunk_chars=8, tokens_per_second=60))

    async def go() -> tuple[float, int]:
        start = time.perf_counter()
        events = [e async for e in service.ask(conv.id, "What happens to Gregor?")]
        assert isinstance(events[-1], RunFinished), events[-1]
        return time.perf_counter() - start, sum(isinstance(e, SpoilerHidden) for e in events)

    return asyncio.run(go())


def main() -> None:
    import os

    print(f"bench_spoiler_verify on {machine()}")
    os.environ["ANTHROPIC_API_KEY"] = "sk-ant-bench-0000"
    new_loop, before_loop = chat.AgentLoop, old_loop()
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic() as fake:
        fake.responder = lambda body: Reply.text("UNSUPPORTED", delay_before=DELAY)
        lib = Library.open(resolve_paths(Path(tmp) / "home"))
        book = import_book(lib, FIXTURES / "books" / "metamorphosis.epub").book
        lib.set_position(book.id, READ_TO)
        one_answer(lib, fake, book.id, False)  # warm up: imports, the index, a connection
        plain: list[float] = []
        waits: dict[str, list[float]] = {"before": [], "after": []}
        held: dict[str, int] = {}
        for _ in range(ROUNDS):
            plain.append(one_answer(lib, fake, book.id, False)[0])
            for label, loop in (("before", before_loop), ("after", new_loop)):
                chat.AgentLoop = loop  # type: ignore[misc]
                try:
                    seconds, held[label] = one_answer(lib, fake, book.id, True)
                finally:
                    chat.AgentLoop = new_loop  # type: ignore[misc]
                waits[label].append(seconds)
        base = median(plain)
        print(
            f"  answer of {len(ANSWER)} characters, 8 sentences; verification replies "
            f"{DELAY:.1f} s late; answer with no verification "
            f"{base:.2f} s (median of {ROUNDS})"
        )
        for label in ("before", "after"):
            added = median(waits[label]) - base
            report(
                f"{label}: answer's end to final check",
                f"median {added:.2f} s ({held[label]} verified, held)",
                f"~{DELAY:.1f} s (one call)" if label == "after" else "-",
                label == "before" or added < 2 * DELAY,
            )
        lib.close()


if __name__ == "__main__":
    main()
