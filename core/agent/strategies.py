"""Loop strategies: how a question becomes model turns. They only choose; the loop runs.

* ``tool-use`` (default): the model is offered the tools and calls them until it answers.
* ``always-retrieve``: search first, then answer in one call without tools — for local
  models that do not use tools. The search always uses the question's own words (and the
  start of the selection). With Claude, the model's rewrite of them is searched too and the
  two rankings are fused (reciprocal rank fusion), so a weak rewrite can add passages but
  never cost the question its own. A local model is not asked for a rewrite: on two cores
  that round trip cost up to 75 s before the search, and a small model's rewrite was
  often off the question's topic (issue 40).
* ``llm-only``: no tools, no search.

A strategy returns the messages of the first turn; it never persists, never writes text for
the reader, and never handles stop reasons (``loop.STOP_TABLE`` does).
"""

from __future__ import annotations

import asyncio
import re

from core.agent.budget import BUDGETS, within_budget
from core.agent.loop_state import StrategyLoop
from core.agent.providers.passages import query_for
from core.agent.tools import ToolOutput
from core.agent.types import (
    Instruction,
    Message,
    Passage,
    Passages,
    Question,
    TurnRequest,
    UserMessage,
)
from core.errors import LLMError, SettingsError
from core.prompts import load_prompt
from core.search.hits import STOPWORDS
from core.settings import STRATEGIES as STRATEGY_NAMES

TOP_K = 6  # passages put before the question
RRF_K = 60  # the usual constant of reciprocal rank fusion (Cormack et al., 2009)
_WORD = re.compile(r"\w+", re.UNICODE)


def content_words(text: str) -> set[str]:
    """The words of ``text`` that carry meaning (lower case, no stop words, no digits alone)."""
    words = (w.lower() for w in _WORD.findall(text))
    return {w for w in words if w not in STOPWORDS and not w.isdigit()}


def useful_rewrite(question: str, rewrite: str) -> bool:
    """Whether a model's rewrite is worth a second search: it says something other than the
    question, and shares at least one content word with it (a rewrite sharing none is off
    the question's topic, as small local models' often are)."""
    words = content_words(rewrite)
    asked = content_words(question)
    return bool(words) and words != asked and bool(words & asked)


def fuse(rankings: list[tuple[Passage, ...]], top_k: int = TOP_K) -> tuple[Passage, ...]:
    """Reciprocal rank fusion: each passage scores the sum of 1 / (RRF_K + rank) over the
    rankings it is in. Ties keep the order of the first ranking (the question's own)."""
    scores: dict[tuple[int, int, str], float] = {}
    first: dict[tuple[int, int, str], Passage] = {}
    for ranking in rankings:
        for rank, passage in enumerate(ranking, start=1):
            key = (passage.first_page, passage.last_page, passage.text)
            scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank)
            first.setdefault(key, passage)
    order = {key: i for i, key in enumerate(first)}
    best = sorted(first, key=lambda k: (-scores[k], order[k]))
    return tuple(first[k] for k in best[:top_k])


class ToolUseStrategy:
    name = "tool-use"
    uses_tools = True

    async def prepare(self, loop: StrategyLoop, messages: list[Message]) -> list[Message]:
        return messages


class LlmOnlyStrategy:
    name = "llm-only"
    uses_tools = False

    async def prepare(self, loop: StrategyLoop, messages: list[Message]) -> list[Message]:
        return messages


class AlwaysRetrieveStrategy:
    name = "always-retrieve"
    uses_tools = False

    async def prepare(self, loop: StrategyLoop, messages: list[Message]) -> list[Message]:
        last = messages[-1]
        question = last.question if isinstance(last, UserMessage) else None
        text = question.text if question else ""
        asked = query_for(question) if question else text
        local = loop.provider.name == "local"
        rewrite = "" if local else await self._query(loop, question or Question(text))
        queries = [asked] + ([rewrite] if useful_rewrite(asked, rewrite) else [])
        outputs = await loop.run_tool_calls(
            [("search_book", {"query": q, "top_k": TOP_K}) for q in queries]
        )
        output = ToolOutput(fuse([o.passages for o in outputs]), "")
        given = output.passages
        if local:  # a slow reader: the best sentences, in a budget
            budget = BUDGETS.get(loop.local_reading, BUDGETS["speed"])
            given = await asyncio.to_thread(within_budget, given, asked, budget)
        citation_rule = load_prompt(
            "citations_native" if loop.provider_supports_citations else "citations_labels"
        ).strip()
        instruction = load_prompt(
            "answer_with_passages",
            book_title=loop.ctx.book.title,
            citation_rule=citation_rule,
            passages="(given above)" if output.passages else "No passages matched.",
            question=question.for_model if question else text,
        )
        added = (Passages(given), Instruction(instruction))
        if isinstance(last, UserMessage):
            return [*messages[:-1], UserMessage((*last.parts, *added))]
        return [*messages, UserMessage(added)]

    async def _query(self, loop: StrategyLoop, question: Question) -> str:
        """The model's own search words for the question ("" when that fails)."""
        prompt = load_prompt(
            "query_reformulation",
            book_title=loop.ctx.book.title,
            question=question.text,
            selection_block="",
        )
        request = TurnRequest(
            loop.model,
            load_prompt("query_reformulation_system").strip(),
            (UserMessage((Question(prompt),)),),
            (),
            100,
        )
        try:
            rewrite = await loop.turn(request, visible=False)
        except LLMError:
            return ""  # the search still works with the question itself
        first = rewrite.message.text.strip().splitlines()
        return first[0].strip().strip('"')[:200] if first else ""


STRATEGIES: dict[
    str, type[ToolUseStrategy] | type[LlmOnlyStrategy] | type[AlwaysRetrieveStrategy]
] = {
    "tool-use": ToolUseStrategy,
    "always-retrieve": AlwaysRetrieveStrategy,
    "llm-only": LlmOnlyStrategy,
}
assert ("auto", *STRATEGIES) == STRATEGY_NAMES, "settings and strategies name the same set"


def pick_strategy(name: str) -> ToolUseStrategy | LlmOnlyStrategy | AlwaysRetrieveStrategy:
    cls = STRATEGIES.get(name)
    if cls is None:
        raise SettingsError(
            "bad_strategy", f"'{name}' is not a loop strategy; use one of {', '.join(STRATEGIES)}."
        )
    return cls()
