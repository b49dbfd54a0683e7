"""Loop strategies: how a question becomes model turns.

* ``tool-use`` (default): the model calls tools until it answers.
* ``always-retrieve``: search first (with a reformulated query), then answer in one call
  without tools — for local models that do not support tools.
* ``llm-only``: one call, no tools.
"""

from __future__ import annotations

from typing import Any, Protocol

from core.agent.events import Notice
from core.agent.loop import Engine
from core.agent.providers.base import TurnRequest
from core.agent.tools import pages_label
from core.prompts import load_prompt

MAX_CUT_NOTE = "\n\n*(The answer was cut short: it reached the length limit.)*"
REFUSAL_NOTE = "The model declined to answer this question."
LIMIT_NOTES = {
    "turns": "the limit of steps for one question",
    "tool_calls": "the limit of tool calls for one question",
    "deadline": "the time limit for one question",
}


class LoopStrategy(Protocol):
    name: str

    async def run(
        self,
        engine: Engine,
        *,
        model: str,
        system: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        question: str,
    ) -> None: ...


def _finish(engine: Engine, content: list[dict[str, Any]], stop_reason: str) -> None:
    state = engine.state
    state.final_content = content
    state.stop_reason = stop_reason
    if stop_reason == "max_tokens":
        state.texts.append(MAX_CUT_NOTE)
        engine.emit(Notice("The answer reached its length limit and was cut.", state.step))
    elif stop_reason == "refusal":
        note = REFUSAL_NOTE if not state.answer else "\n\n" + REFUSAL_NOTE
        state.texts.append(note)
        engine.emit(Notice(REFUSAL_NOTE, state.step))


class ToolUseStrategy:
    name = "tool-use"

    async def run(
        self,
        engine: Engine,
        *,
        model: str,
        system: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        question: str,
    ) -> None:
        tools = engine.tools.definitions()
        max_tokens = engine.limits.max_output_tokens
        while True:
            limit = engine.limit_hit()
            if limit:
                await self._final_call(engine, model, system, messages, tools, limit)
                return
            result = await engine.turn(TurnRequest(model, system, messages, tools, max_tokens))
            if result.stop_reason == "tool_use":
                tool_uses = [b for b in result.content if b.get("type") == "tool_use"]
                if not tool_uses:
                    _finish(engine, result.content, "end_turn")
                    return
                engine.recorder.assistant_turn(result.content, engine.state.step)
                messages.append({"role": "assistant", "content": result.content})
                results = await engine.run_tools(tool_uses)
                engine.recorder.tool_results(results, engine.state.step)
                messages.append({"role": "user", "content": results})
                if engine.state.answer:
                    engine.state.texts.append("\n\n")
                continue
            if result.stop_reason == "pause_turn":
                messages.append({"role": "assistant", "content": result.content})
                continue
            _finish(engine, result.content, result.stop_reason)
            return

    async def _final_call(
        self,
        engine: Engine,
        model: str,
        system: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        limit: str,
    ) -> None:
        state = engine.state
        state.limit_reached = limit
        engine.emit(
            Notice(f"Reached {LIMIT_NOTES[limit]}; answering from what was found.", state.step)
        )
        instruction = {
            "type": "text",
            "text": load_prompt("finish_from_gathered", limit=LIMIT_NOTES[limit]),
        }
        final_messages = list(messages)
        if final_messages and final_messages[-1]["role"] == "user":
            final_messages[-1] = {
                "role": "user",
                "content": [*final_messages[-1]["content"], instruction],
            }
        else:
            final_messages.append({"role": "user", "content": [instruction]})
        # Tool definitions stay: the API rejects tool blocks in history without them.
        request = TurnRequest(
            model,
            system,
            final_messages,
            tools,
            engine.limits.max_output_tokens,
            tool_choice={"type": "none"},
        )
        result = await engine.turn(request, grace=60.0)
        content = [b for b in result.content if b.get("type") == "text"]
        _finish(
            engine, content, result.stop_reason if result.stop_reason != "tool_use" else "end_turn"
        )
        state.texts.append(f"\n\n*(Margin stopped looking after reaching {LIMIT_NOTES[limit]}.)*")


class LlmOnlyStrategy:
    name = "llm-only"

    async def run(
        self,
        engine: Engine,
        *,
        model: str,
        system: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        question: str,
    ) -> None:
        while True:
            result = await engine.turn(
                TurnRequest(model, system, messages, [], engine.limits.max_output_tokens)
            )
            if result.stop_reason == "pause_turn" and not engine.limit_hit():
                messages.append({"role": "assistant", "content": result.content})
                continue
            _finish(engine, result.content, result.stop_reason)
            return


class AlwaysRetrieveStrategy:
    name = "always-retrieve"

    async def run(
        self,
        engine: Engine,
        *,
        model: str,
        system: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        question: str,
    ) -> None:
        book = engine.ctx.book
        query = question
        prompt = load_prompt(
            "query_reformulation", book_title=book.title, question=question, selection_block=""
        )
        try:
            rewrite = await engine.turn(
                TurnRequest(
                    model,
                    [{"type": "text", "text": "You turn questions into search queries."}],
                    [{"role": "user", "content": prompt}],
                    [],
                    100,
                ),
                visible=False,
            )
            text = " ".join(
                b.get("text", "") for b in rewrite.content if b.get("type") == "text"
            ).strip()
            if text:
                query = text.splitlines()[0].strip().strip('"')[:200] or question
        except Exception:
            query = question  # the search still works with the question itself
        block = {
            "type": "tool_use",
            "id": f"retrieve_{engine.state.step}",
            "name": "search_book",
            "input": {"query": query, "top_k": 6},
        }
        results = await engine.run_tools([block])
        content = results[0]["content"] if results else "No passages."
        citation_rule = (
            "Use them and your answer will carry citations."
            if engine.ctx.citations
            else "After each claim from the book, add its page label as given, for example [p. 12]."
        )
        if isinstance(content, list):
            passages_text = "\n\n".join(
                f"{b.get('title', '')}:\n"
                + " ".join(str(c.get("text", "")) for c in b.get("content", []))
                for b in content
                if b.get("type") == "search_result"
            )
            search_blocks = [b for b in content if b.get("type") == "search_result"]
        else:
            passages_text = content
            search_blocks = []
        instruction = load_prompt(
            "answer_with_passages",
            book_title=book.title,
            citation_rule=citation_rule,
            passages="(given above as search results)" if search_blocks else passages_text,
            question=question,
        )
        final = list(messages)
        last = final[-1] if final and final[-1]["role"] == "user" else None
        added: list[dict[str, Any]] = [*search_blocks, {"type": "text", "text": instruction}]
        if last is not None:
            final[-1] = {"role": "user", "content": [*last["content"], *added]}
        else:
            final.append({"role": "user", "content": added})
        result = await engine.turn(
            TurnRequest(model, system, final, [], engine.limits.max_output_tokens)
        )
        _finish(engine, result.content, result.stop_reason)


STRATEGIES: dict[
    str, type[ToolUseStrategy] | type[LlmOnlyStrategy] | type[AlwaysRetrieveStrategy]
] = {
    "tool-use": ToolUseStrategy,
    "always-retrieve": AlwaysRetrieveStrategy,
    "llm-only": LlmOnlyStrategy,
}


def pick_strategy(name: str) -> LoopStrategy:
    cls = STRATEGIES.get(name)
    if cls is None:
        from core.errors import SettingsError

        raise SettingsError(
            "bad_strategy", f"'{name}' is not a loop strategy; use one of {', '.join(STRATEGIES)}."
        )
    return cls()


__all__ = [
    "STRATEGIES",
    "AlwaysRetrieveStrategy",
    "LlmOnlyStrategy",
    "LoopStrategy",
    "ToolUseStrategy",
    "pages_label",
    "pick_strategy",
]
