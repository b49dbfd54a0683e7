"""A conversation's stored messages as the pane shows them: questions, and answers as
``AnswerState``\\ s (with the provider, model and strategy of their run), plus token and cost
totals for the header. Everything here reads the store: call it on a worker thread
(``read`` is what the pane runs there), when a conversation is opened or an answer ends,
never per repaint."""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.agent.answer import AnswerState
from core.agent.types import Usage
from core.errors import MarginError
from core.store.conversations import ConversationInfo, MessageRecord

if TYPE_CHECKING:
    from core.agent.service import AgentService


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


@dataclass
class Loaded:
    """What the pane reads from the store for a book: its conversations, the one shown, its
    messages, the cost line and the book's page count."""

    conversation_id: int | None
    items: list[ConversationInfo] = field(default_factory=list)
    shown: list[Shown] = field(default_factory=list)
    cost: str = ""
    pages: int | None = None
    labels: list[str] = field(default_factory=list)  # printed page labels, for the chips


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


def load(service: AgentService, conversation_id: int) -> list[Shown]:
    """The conversation as the pane shows it (raises ``MarginError`` when it is gone)."""
    records: list[MessageRecord] = service.history(conversation_id)
    facts = {
        run: RunFacts(*values)
        for run, values in service.conversations.run_facts(conversation_id).items()
    }
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


def read(
    service: AgentService, book_id: int | None, conversation_id: int | None, newest: bool
) -> Loaded:
    """For the pane: the book's conversations and conversation ``conversation_id`` (the
    newest with ``newest``, or when it was deleted elsewhere) with its cost line."""
    if book_id is None:
        return Loaded(None)
    items = service.list_conversations(book_id)
    pages = service.library.get_book(book_id).page_count
    if newest or conversation_id not in {c.id for c in items}:
        conversation_id = items[0].id if items else None
    shown = load(service, conversation_id) if conversation_id else []
    labels = service.library.page_labels(book_id)
    return Loaded(
        conversation_id, items, shown, cost_text(service, book_id, conversation_id), pages, labels
    )


def idle_conversation(service: AgentService, book_id: int, busy: Container[int]) -> int | None:
    """An empty conversation of the book that is not answering."""
    conversations = service.list_conversations(book_id)
    return next((c.id for c in conversations if c.message_count == 0 and c.id not in busy), None)


def book_cost(service: AgentService, book_id: int) -> tuple[Usage, float | None, int]:
    """Tokens and estimated cost of every conversation about the book, and how many runs,
    with the companions' calls (X-Ray notes, recaps, quizzes) on it."""
    usage, cost, runs = service.conversations.book_usage(book_id)
    from core.companions.model import spent

    more, more_cost = spent(service.library.db, book_id)
    usage = Usage(
        usage.input_tokens + more.input_tokens,
        usage.output_tokens + more.output_tokens,
        usage.cache_read_tokens + more.cache_read_tokens,
        usage.cache_write_tokens + more.cache_write_tokens,
    )
    if more_cost is not None:
        cost = (cost or 0.0) + more_cost
    return usage, cost, runs


def tokens_label(usage: Usage, cost: float | None) -> str:
    n = usage.total
    amount = f"{n / 1000:.1f}k" if n >= 1000 else str(n)
    money = f" (~${cost:.2f})" if cost else ""
    return f"{amount} tokens{money}"


def budget(service: AgentService) -> float:
    return float(getattr(service.settings, "budget_per_book_usd", 0.0) or 0.0)


def cost_text(service: AgentService, book_id: int | None, conversation_id: int | None) -> str:
    """ "This conversation: 12.3k tokens (~$0.04) · This book: …"."""
    if book_id is None:
        return ""
    parts = []
    if conversation_id is not None:
        try:
            usage, cost = service.conversation_usage(conversation_id)
            parts.append(f"This conversation: {tokens_label(usage, cost)}")
        except MarginError:
            pass
    book_usage, book_total, _runs = book_cost(service, book_id)
    parts.append(f"This book: {tokens_label(book_usage, book_total)}")
    if budget(service) > 0:
        parts.append(f"budget ${budget(service):.2f}")
    return " · ".join(parts)


def over_budget(service: AgentService, book_id: int) -> str | None:
    """With a budget per book set: the question to ask before one more question may go past
    it, or ``None``."""
    limit = budget(service)
    if limit <= 0:
        return None
    _usage, cost, runs = book_cost(service, book_id)
    spent = cost or 0.0
    if spent + (spent / runs if runs else 0.0) <= limit:
        return None
    return (
        f"Conversations about this book have cost about ${spent:.2f}; one more question "
        f"may take them past your budget of ${limit:.2f}. Ask anyway?"
    )
