"""A finished answer put straight into the store, as if it had been asked earlier (tests and
benchmarks that need a conversation with history, without a model)."""

from __future__ import annotations

from typing import Any

from core.agent.types import AssistantMessage, Question, TextPart, Usage


def store_answer(
    store: Any,
    conversation_id: int,
    text: str,
    *,
    question: str = "Go on?",
    usage: Usage | None = None,
    provider: str = "local",
    model: str = "m",
) -> None:
    """``text`` answering ``question`` in the conversation (``store``: a Conversations)."""
    ids = store.start_run(
        conversation_id,
        provider=provider,
        model=model,
        strategy="tool-use",
        question=Question(question),
    )
    store.finish(
        conversation_id=conversation_id,
        ids=ids,
        status="complete",
        message=AssistantMessage((TextPart(text),)),
        text=text,
        citations=(),
        steps=1,
        usage=usage or Usage(),
        stop_reason="end_turn",
    )
