"""Issue 23's verification call with a real small model behind an Anthropic-compatible server.

The spoiler evaluation (tests/core/agent/spoiler_eval.py, the product's check with WordLlama's
test by meaning, as ``bench_spoiler_meaning.py`` runs it) where every doubtful sentence goes
through the app's own verifier (``core.agent.spoiler_verify.SupportVerifier``: its prompt,
``prompts/spoiler_verify*.md``, the real ``anthropic`` SDK via ``make_provider`` with
``provider="local"``) to ``--base-url`` (llama.cpp's ``llama-server``, whose ``/v1/messages``
speaks the Messages API). Each verdict is asked once, with a generous deadline (``--within``),
and replayed for four columns, by kind and by book:

* no model (the lexical check alone), the oracle (a verifier that is always right),
* the model as is (every verdict, however late),
* the model as the app would use it: a verdict later than ``spoiler_verify.TIMEOUT`` is no
  verdict (the lexical decision stands).

Then the model's verdicts on the doubtful sentences (right / wrong / none), the added latency
per answer (each case is a one-sentence answer; an answer with no doubtful sentence adds
nothing) and the tokens per call. ``--save`` writes every call (sentence, label, reply, ms).

Run (from the repository root; see README.md beside this file for the server)::

    PYTHONPATH=$PWD .venv/bin/python tests/bench/real_model/bench_real_verifier.py \\
        --base-url http://127.0.0.1:18091 --model qwen2.5-coder-0.5b-instruct-q4_k_m [--set judge]

``MARGIN_PROMPTS=folder`` measures other prompt files (core.prompts) without touching prompts/.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_spoiler_meaning import library, ready
from common import machine, median, percentile

from core.agent.service import make_provider
from core.agent.spoiler_semantic import STATIC
from core.agent.spoiler_verify import TIMEOUT, SupportCheck, SupportVerifier, verdict
from core.agent.spoilers import Segment, SpoilerGuard
from core.prompts import prompts_dir
from core.settings import AgentLimits, Settings
from tests.core.agent.spoiler_eval import (
    SEM_FILE,
    KindResult,
    Verify,
    evaluate_kinds,
    oracle,
    total,
)

SETS: dict[str, dict[str, Any]] = {
    "tune": {"files": ("cases.txt",)},  # with the issue-16 files ("original")
    "judge": {"files": ("cases_new.txt", SEM_FILE), "original": False},
}


@dataclass
class Call:
    book: str
    sentence: str
    leak: bool
    verdict: bool | None  # True: SUPPORTED
    ms: float
    input_tokens: int
    output_tokens: int
    reply: str
    error: str
    question: str = ""


def lenient_verdict(reply: str) -> bool | None:
    """A reply read as a person would: "UN SUPPORTED", "Unsupported." and "NOT SUPPORTED" are
    UNSUPPORTED (the app's ``spoiler_verify.verdict`` reads "UN SUPPORTED" as no verdict)."""
    words = [w.strip(".,:;!*_\"'`()[]") for w in reply.upper().split()[:2]]
    joined = "".join(words)
    if joined.startswith(("UNSUPPORTED", "NOTSUPPORTED")):
        return False
    if words and words[0] == "SUPPORTED":
        return True
    return verdict(reply)


class RealVerifier:
    """The app's ``SupportVerifier`` on an event loop of its own (the evaluation is
    synchronous), each verdict asked once and remembered."""

    def __init__(
        self, base_url: str, model: str, within: float, limit: int | None, only: str | None = None
    ) -> None:
        self.within = within
        self.limit = limit
        self.only = only
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        limits = AgentLimits(stream_idle_s=within)
        settings = Settings(provider="local", base_url=base_url, model=model, limits=limits)
        # the app's own retries (make_provider's default): a dropped keep-alive connection
        # is retried as in the app, not counted as a failed verification
        self.provider = make_provider(settings, None, timeout=within)
        self.book = ""
        self.checks: dict[tuple[str, str, str], tuple[SupportCheck, int]] = {}
        self.calls: list[Call] = []
        self.saved: dict[tuple[str, str], Call] = {}
        self.save: Path | None = None

    def load(self, path: Path, lenient: bool) -> None:
        """Replies saved by ``--save``: replayed instead of asked (``lenient``: re-read)."""
        for line in path.read_text(encoding="utf-8").splitlines():
            call = Call(**json.loads(line))
            if lenient and call.reply:
                call.verdict = lenient_verdict(call.reply)
            self.saved[(call.book, call.sentence)] = call

    def ask(self, guard: SpoilerGuard, segment: Segment, leak: bool, question: str) -> None:
        key = (self.book, segment.text, question)
        if key in self.checks:
            return
        verifier = SupportVerifier(self.provider, guard, question)
        request = verifier.request(segment.text)
        chars = len(request.system or "") + sum(len(str(m)) for m in request.messages)
        if self.limit is not None and len(self.calls) >= self.limit:
            self.checks[key] = (SupportCheck(None, error="not asked (--limit)"), chars)
            return
        if self.only is not None and leak != (self.only == "leak"):
            self.checks[key] = (SupportCheck(None, error="not asked (--only)"), chars)
            return
        saved = self.saved.get((self.book, segment.text))
        if saved is not None:
            self.checks[key] = (SupportCheck(saved.verdict, ms=saved.ms, error=saved.error), chars)
            self.calls.append(saved)
            return
        future = asyncio.run_coroutine_threadsafe(verifier(segment.text, self.within), self.loop)
        check: SupportCheck = future.result()
        self.checks[key] = (check, chars)
        usage = check.result.usage if check.result is not None else None
        reply = check.result.message.text if check.result is not None else ""
        call = Call(
            self.book,
            segment.text,
            leak,
            check.supported,
            check.ms,
            usage.input_tokens if usage else 0,
            usage.output_tokens if usage else 0,
            reply,
            check.error,
            question,
        )
        self.calls.append(call)
        if self.save is not None:  # as it comes: a stopped run keeps its calls
            with self.save.open("a", encoding="utf-8") as out:
                out.write(json.dumps(asdict(call)) + "\n")
        mark = {True: "SUPPORTED", False: "UNSUPPORTED", None: f"none ({check.error})"}
        print(
            f"    call {len(self.calls):>3} {check.ms / 1000:5.1f} s "
            f"{'leak  ' if leak else 'honest'} -> {mark[check.supported]:<12} {segment.text[:60]!r}",
            flush=True,
        )

    def replay(self, deadline_ms: float | None) -> Any:
        """A ``verify(question)`` for ``evaluate_kinds`` from the remembered verdicts; a
        verdict later than ``deadline_ms`` counts as none (the app's timeout)."""

        def make(question: str) -> Verify:
            def verify(guard: SpoilerGuard, segment: Segment, leak: bool) -> Any:
                self.ask(guard, segment, leak, question)
                check, chars = self.checks[(self.book, segment.text, question)]
                late = deadline_ms is not None and check.ms > deadline_ms
                return (None if late else check.supported), chars

            return verify

        return make


def pct(a: int, b: int) -> str:
    return f"{a}/{b} = {a / b:.1%}" if b else "-"


def by_book(
    lib: Any,
    ids: dict[str, int],
    meaning: Any,
    verifier: RealVerifier,
    verify: Any,
    kw: dict[str, Any],
) -> dict[str, dict[str, KindResult]]:
    """{book: {kind: result}}: one book at a time, so that the verdicts are remembered per book."""
    out = {}
    for name, book_id in ids.items():
        verifier.book = name
        out[name] = evaluate_kinds(lib.db, {name: book_id}, verify=verify, meaning=meaning, **kw)
    return out


def merged(runs: dict[str, dict[str, KindResult]]) -> dict[str, KindResult]:
    out: dict[str, KindResult] = {}
    for per_kind in runs.values():
        for kind, r in per_kind.items():
            out[kind] = total({"a": out.get(kind, KindResult()), "b": r})
    return out


def show(label: str, columns: dict[str, dict[str, dict[str, KindResult]]]) -> None:
    names = list(columns)
    print(f"\n  {label}: caught / false alarms, {' | '.join(names)}")
    kinds = list(merged(columns[names[-1]]))
    rows: list[tuple[str, list[KindResult]]] = []
    for kind in kinds:
        rows.append((kind, [merged(c).get(kind, KindResult()) for c in columns.values()]))
    rows.append(("ALL", [total(merged(c)) for c in columns.values()]))
    for book in columns[names[0]]:
        rows.append((f"book {book}", [total(c[book]) for c in columns.values()]))
    for name, results in rows:
        cells = " | ".join(
            f"{pct(r.caught, r.leaks):>16} {pct(r.false_alarms, r.honest):>14}" for r in results
        )
        print(f"    {name:<20} {cells}")


def verdicts(calls: list[Call], deadline_ms: float) -> None:
    right = sum(c.verdict is not None and c.verdict != c.leak for c in calls)
    wrong = sum(c.verdict is not None and c.verdict == c.leak for c in calls)
    none = sum(c.verdict is None for c in calls)
    said_unsup = sum(c.verdict is False for c in calls)
    leaks = [c for c in calls if c.leak]
    honest = [c for c in calls if not c.leak]
    print(
        f"\n  verdicts on {len(calls)} doubtful sentences: right {right}, wrong {wrong}, none {none}"
    )
    print(
        f"    on leaks: UNSUPPORTED {sum(c.verdict is False for c in leaks)}/{len(leaks)}; "
        f"on honest: SUPPORTED {sum(c.verdict is True for c in honest)}/{len(honest)}; "
        f"UNSUPPORTED overall {said_unsup}/{len(calls)}"
    )
    ms = [c.ms for c in calls]
    if ms:
        late = sum(m > deadline_ms for m in ms)
        print(
            f"  latency per call (= added wait of a one-sentence answer with a doubtful sentence): "
            f"median {median(ms) / 1000:.2f} s, p95 {percentile(ms, 95) / 1000:.2f} s, "
            f"max {max(ms) / 1000:.2f} s; {late}/{len(ms)} later than the app's {TIMEOUT:.0f} s"
        )
        tin = [c.input_tokens for c in calls if c.input_tokens]
        tout = [c.output_tokens for c in calls if c.input_tokens]
        if tin:
            print(
                f"  tokens per call: input median {median(tin):.0f} (max {max(tin)}), "
                f"output median {median(tout):.0f} (max {max(tout)})"
            )
    replies: dict[str, int] = {}
    for c in calls:
        replies[c.reply.strip()[:30]] = replies.get(c.reply.strip()[:30], 0) + 1
    print(f"  replies: {dict(sorted(replies.items(), key=lambda kv: -kv[1])[:8])}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", required=True, help="the Anthropic-compatible server")
    parser.add_argument("--model", default="local", help="the model's name (sent, and printed)")
    parser.add_argument("--set", choices=[*SETS, "all"], default="all")
    parser.add_argument("--within", type=float, default=120.0, help="seconds a call may take")
    parser.add_argument("--limit", type=int, help="ask at most N calls (a smoke run)")
    parser.add_argument("--save", type=Path, help="write every call as JSON lines here")
    parser.add_argument(
        "--only",
        choices=("leak", "honest"),
        help="ask only about the doubtful sentences with this label (the others: no verdict); "
        "the verdict counts are then exact, the caught/false-alarm columns are not",
    )
    parser.add_argument("--replay", type=Path, help="replies saved by --save, not asked again")
    parser.add_argument(
        "--lenient", action="store_true", help="with --replay: read 'UN SUPPORTED' as UNSUPPORTED"
    )
    parser.add_argument(
        "--prompts",
        type=Path,
        help="a folder of prompt files that replace prompts/'s of the same name for this run "
        "(e.g. tests/bench/real_model/prompt_variant)",
    )
    args = parser.parse_args()
    if args.prompts:
        overlay = Path(tempfile.mkdtemp(prefix="margin-prompts-"))
        shutil.copytree(prompts_dir(), overlay, dirs_exist_ok=True)
        shutil.copytree(args.prompts, overlay, dirs_exist_ok=True)
        os.environ["MARGIN_PROMPTS"] = str(overlay)

    print(f"bench_real_verifier on {machine()}")
    print(f"  server {args.base_url}, model {args.model}, prompts {args.prompts or 'prompts/'}")
    lib, ids = library()
    meaning = ready(lib, ids, (STATIC,))
    verifier = RealVerifier(args.base_url, args.model, args.within, args.limit, args.only)
    if args.replay:
        verifier.load(args.replay, args.lenient)
    if args.save:
        args.save.write_text("")
        verifier.save = args.save
    sets = SETS if args.set == "all" else {args.set: SETS[args.set]}
    started = time.perf_counter()
    for name, kw in sets.items():
        print(f"\n  set {name}: asking the model", flush=True)
        columns = {
            "no model": by_book(lib, ids, meaning, verifier, None, kw),
            "oracle": by_book(lib, ids, meaning, verifier, oracle, kw),
            "model": by_book(lib, ids, meaning, verifier, verifier.replay(None), kw),
            f"model, {TIMEOUT:.0f} s": by_book(
                lib, ids, meaning, verifier, verifier.replay(TIMEOUT * 1000), kw
            ),
        }
        show(f"set {name}", columns)
        asked = {(c.book, c.sentence) for c in verifier.calls}
        print(f"  ({len(asked)} verification calls so far)")
    verdicts(verifier.calls, TIMEOUT * 1000)
    print(f"  wall time {time.perf_counter() - started:.0f} s")
    lib.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
