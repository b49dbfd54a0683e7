"""Agent loop overhead against the fake Anthropic server (real SDK, real HTTP, real SQLite).

Targets (issue 3): the loop adds < 5 ms per model turn over a bare ``messages.stream`` call;
a three-step tool conversation completes in < 150 ms after warm-up.
Run: .venv/bin/python tests/bench/bench_agent.py
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time

from common import FIXTURES, machine, median, report

os.environ["PYTHON_KEYRING_BACKEND"] = "tests.support.memory_keyring.MemoryKeyring"

from core.agent.service import AgentService, make_provider
from core.books.importer import import_book
from core.paths import resolve_paths
from core.settings import Settings
from core.store.library import Library
from tests.fakes.anthropic_server import FakeAnthropic, Reply

RUNS = 40
KEY = "sk-ant-bench"


async def bare(fake: FakeAnthropic, n: int) -> list[float]:
    import anthropic

    client = anthropic.AsyncAnthropic(api_key=KEY, base_url=fake.url, max_retries=0)
    times = []
    for _ in range(n):
        fake.add(Reply.text("The answer is short and sweet."))
        start = time.perf_counter()
        async with client.messages.stream(
            model="claude-test", max_tokens=100, messages=[{"role": "user", "content": "q"}]
        ) as stream:
            async for _event in stream:
                pass
            await stream.get_final_message()
        times.append((time.perf_counter() - start) * 1000)
    await client.close()
    return times


async def through_loop(
    service: AgentService, fake: FakeAnthropic, conv: int, n: int, script: list[Reply]
) -> list[float]:
    times = []
    for _ in range(n):
        fake.add(*script)
        start = time.perf_counter()
        async for _event in service.ask(conv, "Why does the cat grin?"):
            pass
        times.append((time.perf_counter() - start) * 1000)
    return times


async def main() -> None:
    print(f"bench_agent on {machine()}; medians of {RUNS} runs after warm-up")
    with tempfile.TemporaryDirectory() as home, FakeAnthropic() as fake:
        lib = Library.open(resolve_paths(home))
        book = import_book(lib, FIXTURES / "books" / "alice_in_wonderland.epub").book
        lib.set_position(book.id, 60)
        os.environ["ANTHROPIC_API_KEY"] = KEY
        settings = Settings(provider="anthropic", base_url=fake.url, model="claude-test")
        service = AgentService(
            lib,
            lib.paths,
            settings,
            provider_factory=lambda s, k: make_provider(s, k, max_retries=0),
        )
        await bare(fake, 5)
        conv = service.create_conversation(book.id).id
        await through_loop(service, fake, conv, 5, [Reply.text("warm")])
        bare_ms = median(await bare(fake, RUNS))
        loop_ms = []
        for _ in range(RUNS):
            conv = service.create_conversation(
                book.id
            ).id  # fresh history each time: same request size
            loop_ms.extend(
                await through_loop(
                    service, fake, conv, 1, [Reply.text("The answer is short and sweet.")]
                )
            )
        overhead = median(loop_ms) - bare_ms
        report("bare messages.stream, one turn", f"{bare_ms:.2f} ms", "(baseline)", True)
        report("ChatWithBook, one turn (persisted, logged)", f"{median(loop_ms):.2f} ms", "", True)
        report("loop overhead per model turn", f"{overhead:.2f} ms", "< 5 ms", overhead < 5)
        three = [
            Reply.tool_use("search_book", {"query": "Cheshire Cat"}),
            Reply.tools(("read_pages", {"start": 39, "end": 40}), ("table_of_contents", {})),
            Reply.text("Because it is a Cheshire cat, and they all can."),
        ]
        times = []
        for _ in range(RUNS // 2):
            conv = service.create_conversation(book.id).id
            times.extend(await through_loop(service, fake, conv, 1, three))
        report(
            "three-step tool conversation",
            f"{median(times):.1f} ms",
            "< 150 ms",
            median(times) < 150,
        )
        lib.close()


if __name__ == "__main__":
    asyncio.run(main())
