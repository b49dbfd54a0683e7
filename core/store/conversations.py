"""Conversations, runs, messages and tool calls in the library database.

Messages are stored as typed parts (``core.domain.messages``, our own JSON schema), never as a
provider's wire format. All writes are short (no transaction is ever held across an
``await``); the agent calls them from its database thread, so several conversations
answering at once are serialised by SQLite and a background import only makes them wait a
few milliseconds (``busy_timeout``).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import peewee as pw

from core.domain.messages import (
    AssistantMessage,
    CitationRef,
    ErrorInfo,
    Message,
    Passage,
    Question,
    TextPart,
    ToolCallRecord,
    Usage,
    citation_to_json,
    parts_to_json,
)
from core.errors import BookCode, BookError, StorageError
from core.store import models as m
from core.store import owner
from core.store.anchoring import overlaps, quote_for_selection, resolve_citations
from core.store.anchors import TextQuote
from core.store.history import (
    SHOWN_KINDS,
    TOOL_CALL_COLUMNS,
    ConversationHistory,
    MessageRecord,
    StoredMessage,
)

__all__ = [
    "CUT_NOTE",
    "MAX_ANSWER_CHARS",
    "ConversationInfo",
    "Conversations",
    "MessageRecord",
    "RunIds",
    "StoredMessage",
]

DEFAULT_TITLE = "New conversation"
# what a stored answer keeps: a local server that ignores max_tokens can stream megabytes
MAX_ANSWER_CHARS = 200_000
CUT_NOTE = "\n\n*[Margin kept the first 200,000 characters of this answer.]*"


@dataclass(frozen=True)
class ConversationInfo:
    id: int
    book_id: int
    title: str
    created_at: dt.datetime
    updated_at: dt.datetime
    message_count: int
    quote: TextQuote | None = None  # a thread's passage; None for a free conversation

    @property
    def is_thread(self) -> bool:
        return self.quote is not None

    @property
    def about(self) -> str:
        """ "About p. 40: “…”" — what a thread is anchored to ("" for a free one)."""
        if self.quote is None:
            return ""
        words = self.quote.exact if len(self.quote.exact) <= 90 else self.quote.exact[:89] + "…"
        return f"About p. {self.quote.page}: “{words}”"


@dataclass(frozen=True)
class RunIds:
    run_id: int
    question_id: int
    placeholder_id: int


def title_from(question: str) -> str:
    words = " ".join(question.split())
    if len(words) <= 60:
        return words or DEFAULT_TITLE
    return words[:57].rsplit(" ", 1)[0] + "…"


class Conversations(ConversationHistory):
    def __init__(self, db: pw.SqliteDatabase) -> None:
        self.db = db

    # conversations --------------------------------------------------------------------

    def _count(self) -> Any:
        return (
            m.Message.select(pw.fn.COUNT(m.Message.id))
            .where(
                (m.Message.conversation == m.Conversation.id) & (m.Message.kind.in_(SHOWN_KINDS))
            )
            .alias("shown")
        )

    def _select(self) -> Any:
        return m.Conversation.select(m.Conversation, self._count())

    @staticmethod
    def _info(row: Any) -> ConversationInfo:
        return ConversationInfo(
            row.id,
            row.book_id,
            row.title,
            row.created_at,
            row.updated_at,
            int(row.shown or 0),
            TextQuote.from_json(row.quote),
        )

    def create(
        self, book_id: int, title: str = "", *, quote: TextQuote | None = None
    ) -> ConversationInfo:
        """A conversation about the book; with ``quote``, a thread about that passage."""
        if m.Book.get_or_none((m.Book.id == book_id) & (m.Book.status == "ready")) is None:
            raise BookError(
                BookCode.NOT_FOUND, f"There is no book number {book_id} in the library."
            )
        row = m.Conversation.create(
            book=book_id,
            title=title.strip() or DEFAULT_TITLE,
            quote=None if quote is None else quote.to_json(),
        )
        return self.get(row.id)

    # threads ----------------------------------------------------------------------------

    def threads(self, book_id: int) -> list[ConversationInfo]:
        """The book's threads (conversations about a passage), in book order."""
        rows = self._select().where(
            (m.Conversation.book == book_id) & m.Conversation.quote.is_null(False)
        )
        found = [self._info(r) for r in rows]
        return sorted(
            (t for t in found if t.quote is not None),
            key=lambda t: (t.quote.page, t.quote.start, t.id) if t.quote else (0, 0, t.id),
        )

    def thread_for(self, book_id: int, text: str, page: int, *, near: int = -1) -> ConversationInfo:
        """The thread about the passage ``text`` on ``page`` (``near``: its offset in the
        page's stored text, when known): the newest thread whose passage overlaps it, else a
        new one anchored there."""
        quote = quote_for_selection(self.db, book_id, text, page, near)
        rows = self.db.execute_sql(  # only the threads near the passage (a few ms at most)
            "SELECT id, quote FROM conversation WHERE book_id = ? AND quote IS NOT NULL"
            " AND json_extract(quote, '$.page') BETWEEN ? AND ?"
            " ORDER BY updated_at DESC, id DESC",
            (book_id, quote.page - 1, quote.end_page + 1),
        ).fetchall()
        for conversation_id, raw in rows:
            stored = TextQuote.from_json(json.loads(raw))
            if stored is not None and overlaps(stored, quote):
                return self.get(int(conversation_id))
        return self.create(book_id, quote=quote)  # named by its first question

    def get(self, conversation_id: int) -> ConversationInfo:
        row = self._select().where(m.Conversation.id == conversation_id).first()
        if row is None:
            raise BookError(
                BookCode.NOT_FOUND,
                f"There is no conversation number {conversation_id}: it may have been "
                "deleted, or its book removed, in another Margin window or with the margin "
                "command.",
            )
        return self._info(row)

    def list_for_book(self, book_id: int) -> list[ConversationInfo]:
        """The book's conversations, newest first, in one query."""
        rows = (
            self._select()
            .where(m.Conversation.book == book_id)
            .order_by(m.Conversation.updated_at.desc(), m.Conversation.id.desc())
        )
        return [self._info(r) for r in rows]

    def rename(self, conversation_id: int, title: str) -> ConversationInfo:
        self.get(conversation_id)
        if not title.strip():
            raise BookError("empty_title", "A conversation needs a title.")
        m.Conversation.update(title=title.strip()[:200], updated_at=m.utcnow()).where(
            m.Conversation.id == conversation_id
        ).execute()
        return self.get(conversation_id)

    def delete(self, conversation_id: int) -> None:
        """Delete a conversation; an answer another process is writing in it is stopped
        first (``stop_answers``)."""
        self.get(conversation_id)
        self.stop_answers([conversation_id])
        m.Conversation.delete().where(m.Conversation.id == conversation_id).execute()

    def touch(self, conversation_id: int, *, title_from_question: str | None = None) -> None:
        row = m.Conversation.get_by_id(conversation_id)
        updates: dict[Any, Any] = {m.Conversation.updated_at: m.utcnow()}
        if title_from_question is not None and row.title == DEFAULT_TITLE:
            updates[m.Conversation.title] = title_from(title_from_question)
        m.Conversation.update(updates).where(m.Conversation.id == conversation_id).execute()

    # runs and messages ---------------------------------------------------------------------

    def start_run(
        self,
        conversation_id: int,
        *,
        provider: str,
        model: str,
        strategy: str,
        question: Question,
    ) -> RunIds:
        """Persist the question, a run, and a placeholder answer marked "running" — one
        transaction, before any model call."""
        with self.db.atomic():
            run = m.Run.create(
                conversation=conversation_id,
                provider=provider,
                model=model,
                strategy=strategy,
                pid=os.getpid(),
                host=owner.host(),
            )
            q = m.Message.create(
                conversation=conversation_id,
                run=run.id,
                role="user",
                kind="question",
                content=parts_to_json([question]),
                text=question.text,
                selection_text=question.selection.text if question.selection else None,
                selection_page=question.selection.page if question.selection else None,
            )
            a = m.Message.create(
                conversation=conversation_id,
                run=run.id,
                role="assistant",
                kind="answer",
                content=[],
                text="",
                status="running",
            )
        return RunIds(run.id, q.id, a.id)

    def add_message(self, conversation_id: int, run_id: int, kind: str, message: Message) -> int:
        role = "assistant" if isinstance(message, AssistantMessage) else "user"
        row = m.Message.create(
            conversation=conversation_id,
            run=run_id,
            role=role,
            kind=kind,
            content=parts_to_json(message.parts),
        )
        return int(row.id)

    def save_partial(self, answer_id: int, text: str) -> None:
        text = text[:MAX_ANSWER_CHARS]
        m.Message.update(text=text, updated_at=m.utcnow()).where(
            (m.Message.id == answer_id) & (m.Message.status == "running")
        ).execute()

    def add_tool_call(
        self, run_id: int, record: ToolCallRecord, detail: dict[str, Any], passages: list[Any]
    ) -> None:
        columns = {column: getattr(record, name) for name, column in TOOL_CALL_COLUMNS.items()}
        m.ToolCall.create(run=run_id, detail={**detail, "passages_typed": passages}, **columns)

    def finish(
        self,
        *,
        conversation_id: int,
        ids: RunIds,
        status: str,
        message: AssistantMessage,
        text: str,
        citations: tuple[CitationRef, ...],
        steps: int,
        usage: Usage,
        stop_reason: str,
        error: ErrorInfo | None = None,
        passages: Sequence[Passage] = (),
    ) -> int | None:
        """Write the answer as the conversation's newest message and close the run. A failed
        run with no text keeps no answer message. Returns the answer's id. An answer longer
        than ``MAX_ANSWER_CHARS`` keeps its beginning and a note saying so. ``passages``
        (what the tools returned) say which occurrence a citation quotes."""
        text, message = capped_answer(text, message)
        # the book's own words, exactly, where the passage the model read them in has them
        citations = resolve_citations(self.db, citations, passages)
        with self.db.atomic():
            m.Message.delete().where(m.Message.id == ids.placeholder_id).execute()
            answer_id: int | None = None
            if text.strip() or status in ("complete", "stopped"):
                row = m.Message.create(
                    conversation=conversation_id,
                    run=ids.run_id,
                    role="assistant",
                    kind="answer",
                    content=parts_to_json(message.parts),
                    text=text,
                    status=status,
                    citations=[citation_to_json(c) for c in citations],
                )
                answer_id = int(row.id)
            m.Run.update(
                status=status,
                steps=steps,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_read_tokens=usage.cache_read_tokens,
                cache_write_tokens=usage.cache_write_tokens,
                stop_reason=stop_reason,
                error_code=error.code if error else "",
                error_message=error.message if error else "",
                error_hint=error.hint if error else "",
                finished_at=m.utcnow(),
            ).where(m.Run.id == ids.run_id).execute()
            m.Conversation.update(updated_at=m.utcnow()).where(
                m.Conversation.id == conversation_id
            ).execute()
        return answer_id

    def mark_unsaved(self, ids: RunIds, error: ErrorInfo) -> None:
        """The answer of ``ids`` could not be saved (the disk was full): its run and its
        placeholder say so, in small updates of rows that exist, so a restarted window says
        what happened instead of "Margin was closed" (issue 46 item 3)."""
        with self.db.atomic():
            m.Run.update(
                status="failed",
                finished_at=m.utcnow(),
                error_code=error.code,
                error_message=error.message,
                error_hint=error.hint,
            ).where((m.Run.id == ids.run_id) & (m.Run.status == "running")).execute()
            m.Message.update(status="failed").where(
                (m.Message.id == ids.placeholder_id) & (m.Message.status == "running")
            ).execute()

    def recover_interrupted(self) -> int:
        """Mark runs and answers left "running" by a process that is gone (a crash, a kill)
        as "interrupted"; answers another live process is writing are left alone."""
        now = m.utcnow()
        running = m.Run.select(m.Run.id, m.Run.pid, m.Run.host, m.Run.started_at).where(
            m.Run.status == "running"
        )
        stale = [r.id for r in running if owner.run_is_orphaned(r.pid, r.host, r.started_at, now)]
        if not stale:
            return 0
        with self.db.atomic():
            runs = (
                m.Run.update(
                    status="interrupted",
                    finished_at=now,
                    error_code="interrupted",
                    error_message="Margin was closed before this answer finished.",
                    error_hint="Press Retry to ask again.",
                )
                .where(m.Run.id.in_(stale) & (m.Run.status == "running"))
                .execute()
            )
            m.Message.update(status="interrupted").where(
                (m.Message.status == "running")
                & (m.Message.run.in_(stale) | m.Message.run.is_null())
            ).execute()
        return int(runs)

    def live_answers(self, conversation_ids: list[int] | None = None) -> list[tuple[int, int]]:
        """(run id, pid) of answers being written right now by another process on this
        machine, for the given conversations (every conversation when None)."""
        query = m.Run.select(m.Run.id, m.Run.pid, m.Run.host, m.Run.started_at).where(
            m.Run.status == "running"
        )
        if conversation_ids is not None:
            query = query.where(m.Run.conversation.in_(conversation_ids))
        now, me = m.utcnow(), os.getpid()
        return [
            (r.id, r.pid)
            for r in query
            if r.pid is not None
            and r.pid != me
            and not owner.run_is_orphaned(r.pid, r.host, r.started_at, now)
        ]

    def stop_answers(self, conversation_ids: list[int], *, wait_s: float = 10.0) -> None:
        """Before deleting conversations: ask the processes answering in them to stop (a
        ``margin ask``/``chat`` stops on SIGINT and saves what it wrote) and wait until
        they have. An answer being written in a window cannot be stopped from here: that
        is a ``StorageError`` saying so. (Answers of this process are the caller's to stop.)"""
        live = self.live_answers(conversation_ids)
        if not live:
            return
        if not all(owner.is_cli_answer(pid) for _, pid in live):
            raise StorageError(
                "answer_running",
                "An answer is being written in this conversation in the Margin window.",
                hint="Stop it there (or wait until it has finished), then try again.",
            )
        for _, pid in live:
            try:
                os.kill(pid, signal.SIGINT)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + wait_s
        ids = [run_id for run_id, _ in live]
        while time.monotonic() < deadline:
            still = m.Run.select().where(m.Run.id.in_(ids) & (m.Run.status == "running")).count()
            if not still or not any(owner.process_alive(pid) for _, pid in live):
                return
            time.sleep(0.05)
        raise StorageError(
            "answer_running",
            "An answer in this conversation did not stop in time.",
            hint="Try again in a moment.",
        )

    def delete_last_run(self, conversation_id: int) -> None:
        """Remove the newest question with its answer and tool calls (Regenerate)."""
        run = (
            m.Run.select()
            .where(m.Run.conversation == conversation_id)
            .order_by(m.Run.id.desc())
            .first()
        )
        if run is not None:
            with self.db.atomic():
                m.Message.delete().where(m.Message.run == run.id).execute()
                m.Run.delete().where(m.Run.id == run.id).execute()


def capped_answer(text: str, message: AssistantMessage) -> tuple[str, AssistantMessage]:
    """The answer's text and parts cut to ``MAX_ANSWER_CHARS`` (with ``CUT_NOTE``)."""
    texts = [p for p in message.parts if isinstance(p, TextPart)]
    if len(text) <= MAX_ANSWER_CHARS and sum(len(p.text) for p in texts) <= MAX_ANSWER_CHARS:
        return text, message
    if len(text) > MAX_ANSWER_CHARS:
        text = text[:MAX_ANSWER_CHARS] + CUT_NOTE
    room = MAX_ANSWER_CHARS
    parts: list[Any] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if room <= 0:
                continue
            if len(part.text) > room:
                part = TextPart(part.text[:room] + CUT_NOTE, part.citations)
            room -= len(part.text)
        parts.append(part)
    return text, AssistantMessage(tuple(parts))
