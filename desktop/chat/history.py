"""A conversation's stored messages as the pane shows them: questions, and answers as
``AnswerState``\\ s (with the provider, model and strategy of their run), plus token and cost
totals for the header. Read once when a conversation is opened or an answer ends, never per
repaint."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.agent.answer import AnswerState
from core.agent.pricing import estimate_cost
from core.agent.types import Usage
from core.store import models as m
from core.store.conversations import MessageRecord


@dataclass(frozen=True)
class RunFacts:
    provider: str
    model: str
    strategy: str


@dataclass(frozen=True)
class Shown:
    """One message of the transcript: a question, or an answer's state."""

    key: str
    role: str  # user | assistant
    run_id: int | None
    question: MessageRecord | None = None
    answer: AnswerState | None = None


def run_facts(conversation_id: int) -> dict[int, RunFacts]:
    rows = m.Run.select(m.Run.id, m.Run.provider, m.Run.model, m.Run.strategy).where(
        m.Run.conversation == conversation_id
    )
    return {r.id: RunFacts(r.provider, r.model, r.strategy) for r in rows}


def answer_state(record: MessageRecord, facts: RunFacts | None, question: str) -> AnswerState:
    # a stored "running" answer that no task of this window is writing
    status = "unfinished" if record.status == "running" else record.status
    return AnswerState(
        key=str(record.id),
        text=record.text,
        status=status,
        citations=list(record.citations),
        tool_calls=list(record.tool_calls),
        passages=list(record.passages),
        usage=record.usage,
        error=record.error,
        run_id=record.run_id,
        retry_text=question,
        withheld=list(record.withheld),
        model=facts.model if facts else "",
        provider=facts.provider if facts else "",
        strategy=facts.strategy if facts else "",
    )


def load(service: Any, conversation_id: int) -> list[Shown]:
    """The conversation as the pane shows it (raises ``MarginError`` when it is gone)."""
    records: list[MessageRecord] = service.history(conversation_id)
    facts = run_facts(conversation_id)
    questions: dict[int | None, str] = {
        r.run_id: r.text for r in records if r.role == "user" and r.run_id
    }
    out: list[Shown] = []
    for r in records:
        if r.role == "user":
            out.append(Shown(f"q{r.id}", "user", r.run_id, question=r))
        else:
            view = answer_state(
                r, facts.get(r.run_id) if r.run_id else None, questions.get(r.run_id, "")
            )
            out.append(Shown(view.key, "assistant", r.run_id, answer=view))
    return out


def conversation_cost(service: Any, conversation_id: int) -> tuple[Usage, float | None]:
    usage, cost = service.conversation_usage(conversation_id)
    return usage, cost


def book_cost(service: Any, book_id: int) -> tuple[Usage, float | None, int]:
    """Tokens and estimated cost of every conversation about the book, and how many runs."""
    total = Usage()
    cost: float | None = None
    runs = 0
    query = m.Run.select().join(m.Conversation).where(m.Conversation.book == book_id)
    for run in query:
        u = Usage(
            run.input_tokens, run.output_tokens, run.cache_read_tokens, run.cache_write_tokens
        )
        total = total + u
        runs += 1
        if run.provider == "anthropic":
            c = estimate_cost(run.model, u)
            if c is not None:
                cost = (cost or 0.0) + c
    return total, cost, runs


def tokens_label(usage: Usage, cost: float | None) -> str:
    n = usage.total
    amount = f"{n / 1000:.1f}k" if n >= 1000 else str(n)
    money = f" (~${cost:.2f})" if cost else ""
    return f"{amount} tokens{money}"
