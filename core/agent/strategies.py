"""Loop strategies: how a question becomes model turns. They only choose; the loop runs.

* ``tool-use`` (default): the model is offered the tools and calls them until it answers.
* ``always-retrieve``: search first (with a reformulated query), then answer in one call
  without tools — for local models that do not use tools.
* ``llm-only``: no tools, no search.

A strategy returns the messages of the first turn; it never persists, never writes text for
the reader, and never handles stop reasons (``loop.STOP_TABLE`` does).
"""

from __future__ import annotations

from core.agent.loop import AgentLoop
from core.agent.types import Instruction, Message, Passages, Question, TurnRequest, UserMessage
from core.errors import LLMError, SettingsError
from core.prompts import load_prompt
from core.settings import STRATEGIES as STRATEGY_NAMES


class ToolUseStrategy:
    name = "tool-use"
    uses_tools = True

    async def prepare(self, loop: AgentLoop, messages: list[Message]) -> list[Message]:
        return messages


class LlmOnlyStrategy:
    name = "llm-only"
    uses_tools = False

    async def prepare(self, loop: AgentLoop, messages: list[Message]) -> list[Message]:
        return messages


class AlwaysRetrieveStrategy:
    name = "always-retrieve"
    uses_tools = False

    async def prepare(self, loop: AgentLoop, messages: list[Message]) -> list[Message]:
        last = messages[-1]
        question = last.question if isinstance(last, UserMessage) else None
        text = question.text if question else ""
        query = await self._query(loop, question or Question(text))
        output = await loop.run_tool("search_book", {"query": query, "top_k": 6})
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
        added = (Passages(output.passages), Instruction(instruction))
        if isinstance(last, UserMessage):
            return [*messages[:-1], UserMessage((*last.parts, *added))]
        return [*messages, UserMessage(added)]

    async def _query(self, loop: AgentLoop, question: Question) -> str:
        """The model's own search words for the question; the question itself if that fails."""
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
            return question.text  # the search still works with the question itself
        first = rewrite.message.text.strip().splitlines()
        return (first[0].strip().strip('"')[:200] if first else "") or question.text


STRATEGIES: dict[
    str, type[ToolUseStrategy] | type[LlmOnlyStrategy] | type[AlwaysRetrieveStrategy]
] = {
    "tool-use": ToolUseStrategy,
    "always-retrieve": AlwaysRetrieveStrategy,
    "llm-only": LlmOnlyStrategy,
}
assert tuple(STRATEGIES) == STRATEGY_NAMES, "settings and strategies name the same set"


def pick_strategy(name: str) -> ToolUseStrategy | LlmOnlyStrategy | AlwaysRetrieveStrategy:
    cls = STRATEGIES.get(name)
    if cls is None:
        raise SettingsError(
            "bad_strategy", f"'{name}' is not a loop strategy; use one of {', '.join(STRATEGIES)}."
        )
    return cls()
