"""How often passages mode (no model) shows the answer, judged on the reply the reader sees.

Each question of tests/bench/data/search_eval.json goes the way a reader's question goes:
the real ``search_book`` tool (``core.agent.tools``, the book read to the end) with the
query passages mode asks for, then ``PassagesProvider`` writes its reply. The judge reads
that reply's Markdown, not the search hits, and only as much of it as the chat pane shows
before its "Show all" link (``desktop.chat.render.cut_at``): a question counts as *shown*
when its answer quote (folded as eval_search folds it) is in one of the quoted passages on
screen, and as *highlighted* when it is in a passage's first, bold sentence. Header, page
lines and tail are not counted.

Reported for the questions the mode was tuned on ("tuned", all but the held-out), the
held-out ones (nothing was tuned on them: the honest estimate) and all, per book.
Run: PYTHONPATH=$PWD:$PWD/tests/bench .venv/bin/python tests/bench/eval_passages.py [--misses]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from common import machine
from eval_search import fold, load, open_books

from core.agent.providers.passages import PassagesProvider
from core.agent.tools import ToolContext, default_tools
from core.agent.types import (
    AssistantMessage,
    Question,
    ToolResult,
    ToolSpec,
    TurnRequest,
    TurnResult,
    UserMessage,
)
from core.paths import resolve_paths
from core.search import BookSearch
from core.store.library import Library
from desktop.chat.render import cut_at

SEARCH = ToolSpec("search_book", "", {})


@dataclass(frozen=True)
class Shown:
    """One quoted passage of a reply: its bold first sentence and all its quoted text."""

    highlighted: str
    passage: str


def reply_passages(reply: str) -> list[Shown]:
    """The quoted passages of a passages-mode reply (its ``>`` blocks), as the reader sees
    them: the first line's bold sentence, and every quoted line."""
    blocks: list[list[str]] = []
    quoting = False
    for line in reply.splitlines():
        if line.startswith(">"):
            if not quoting:
                blocks.append([])
            blocks[-1].append(line[1:].strip())
            quoting = True
        else:
            quoting = False
    out = []
    for block in blocks:
        first = block[0]
        bold = first[2:-2] if first.startswith("**") and first.endswith("**") else ""
        out.append(Shown(bold, " ".join(block)))
    return out


def reply_for(
    provider: PassagesProvider, ctx: ToolContext, question: Question
) -> tuple[str, list[Shown]]:
    """The reply passages mode gives ``question``, through the real tool and provider, and
    its passages on screen."""

    async def go() -> str:
        first = UserMessage((question,))
        messages: list = [first]
        request = TurnRequest("passages", "", tuple(messages), (SEARCH,))
        result = [e async for e in provider.stream_turn(request)][-1]
        assert isinstance(result, TurnResult)
        (call,) = result.message.calls
        out = default_tools().run(ctx, call.name, call.arguments)
        messages += [result.message, UserMessage((ToolResult(call.id, out.parts),))]
        request = TurnRequest("passages", "", tuple(messages), (SEARCH,))
        final = [e async for e in provider.stream_turn(request)][-1]
        assert isinstance(final, TurnResult) and isinstance(final.message, AssistantMessage)
        return "".join(getattr(p, "text", "") for p in final.message.parts)

    reply = asyncio.run(go())
    return reply, reply_passages(reply[: cut_at(reply)])


def is_cut(reply: str) -> bool:
    """Whether the chat pane shows only part of ``reply`` (the rest behind "Show all")."""
    return cut_at(reply) < len(reply)


def judge(
    lib: Library, ids: dict[str, int], questions: list[dict], *, show: bool = False
) -> dict[str, list[tuple[bool, bool, int, bool]]]:
    """Per book, per question: (answer in a highlighted sentence, answer in a shown passage,
    characters of the reply, whether the chat cuts it)."""
    search = BookSearch(lib.db)
    provider = PassagesProvider()
    found: dict[str, list[tuple[bool, bool, int, bool]]] = defaultdict(list)
    for q in questions:
        key = q["book"]
        if key not in ids:
            continue
        book = lib.find_book(ids[key])
        ctx = ToolContext(lib, search, book, book.spoiler_bound)
        reply, shown = reply_for(provider, ctx, Question(q["question"]))
        answer = fold(q["answer"])
        lit = any(answer in fold(s.highlighted) for s in shown)
        seen = any(answer in fold(s.passage) for s in shown)
        found[key].append((lit, seen, len(reply), is_cut(reply)))
        if show and not seen:
            print(f"    miss [{key}] {q['question']}  -> {q['answer']}")
    return found


def line(name: str, found: dict[str, list[tuple[bool, bool, int, bool]]]) -> str:
    every = [x for v in found.values() for x in v]
    if not every:
        return f"  {name:>8}: no questions"
    per = ", ".join(
        f"{k} {sum(x[1] for x in v)}/{len(v)} (sentence {sum(x[0] for x in v)})"
        for k, v in found.items()
    )
    chars = sorted(x[2] for x in every)
    return (
        f"  {name:>8}: answer shown {100 * sum(x[1] for x in every) / len(every):5.1f} %,"
        f" in the highlighted sentence {100 * sum(x[0] for x in every) / len(every):5.1f} %"
        f"  ({per}); reply median {chars[len(chars) // 2]}, most {chars[-1]} characters,"
        f" {sum(x[3] for x in every)} cut by the chat's Show all"
    )


def main() -> None:
    show = "--misses" in sys.argv
    data = load()
    questions = data["questions"]
    held_out = [q for q in questions if q.get("split") == "held-out"]
    tuned = [q for q in questions if q.get("split") != "held-out"]
    print(f"eval_passages on {machine()}: {len(questions)} questions, {len(held_out)} held out")
    with tempfile.TemporaryDirectory() as tmp:
        lib = Library.open(resolve_paths(Path(tmp) / "home"))
        books = {k: v for k, v in data["books"].items() if not k.endswith("-txt")}
        ids = open_books(lib, books)
        for name, subset in (("tuned", tuned), ("held-out", held_out), ("all", questions)):
            print(line(name, judge(lib, ids, subset, show=show and name != "all")))
        lib.close()


if __name__ == "__main__":
    main()
