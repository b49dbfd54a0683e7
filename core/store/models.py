"""peewee models of the library database (one SQLite file).

``core.store.db.open_database`` binds the models to the database it opens (one library per
process); nothing reaches the database through a module global.
The schema itself is created by migrations in ``core.store.migrations``, not by
``create_tables``, so every change is a numbered forward step.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import peewee as pw

from core.store.packing import (  # noqa: F401  (re-exported: the models' text)
    CHUNK_BLOB,
    CHUNK_SLICE,
    PAGE_BLOB,
    PAGE_BLOB_DICT,
    PLAIN_HTML,
    chunk_pages,
    pack_chunk,
    pack_page,
    pack_text,
    page_text,
    plain_html,
    unpack_chunk,
    unpack_page,
    unpack_text,
)


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


class JSONField(pw.TextField):
    """JSON stored as text; ``None`` stays NULL."""

    def db_value(self, value: Any) -> str | None:
        return None if value is None else json.dumps(value, ensure_ascii=False)

    def python_value(self, value: str | None) -> Any:
        return None if value is None else json.loads(value)


class BaseModel(pw.Model):
    id = pw.AutoField()

    class Meta:
        legacy_table_names = False


class Book(BaseModel):
    title = pw.TextField()
    author = pw.TextField(default="")
    language = pw.TextField(default="")
    format = pw.TextField()  # core.books.model.BookFormat value
    sha256 = pw.TextField(unique=True)
    original_path = pw.TextField(default="")
    file_path = pw.TextField(default="")  # the library's own copy, under Paths.books
    file_size = pw.IntegerField(default=0)
    page_count = pw.IntegerField(default=0)
    # Two meanings of "where the reader is", kept apart (DESIGN.md): ``page`` is the page on
    # screen (restored on open, moved by every jump); ``read_to`` is how far the reader has
    # read by reading forward — the spoiler bound. Jumps never raise ``read_to``.
    page = pw.IntegerField(default=1, column_name="position")
    read_to = pw.IntegerField(default=1)
    finished = pw.BooleanField(default=False)
    status = pw.TextField(default="ready")  # "importing" while a transaction fills it
    parser_version = pw.IntegerField(default=1)  # schema v5: which reader cut its pages
    added_at = pw.DateTimeField(default=utcnow)
    updated_at = pw.DateTimeField(default=utcnow)
    opened_at = pw.DateTimeField(null=True)


class Page(BaseModel):
    book_id: int
    book = pw.ForeignKeyField(Book, backref="pages", on_delete="CASCADE")
    number = pw.IntegerField()  # 1-based
    label = pw.TextField(default="")
    chapter = pw.IntegerField(default=0)
    # Schema v8: text and HTML in one compressed blob (``pack_page``). Issue 41: pages in
    # blocks (core.store.page_blocks): ``block`` names the page's block in ``page_block``
    # (its first page) and ``text`` holds where the page is in it. Read a page with
    # Library.page, or its text in SQL through the view page_plain.
    text = pw.BlobField()
    block = pw.IntegerField(null=True)

    class Meta:
        indexes = ((("book", "number"), True),)


class TocEntry(BaseModel):
    book_id: int
    book = pw.ForeignKeyField(Book, backref="toc", on_delete="CASCADE")
    ordinal = pw.IntegerField()
    title = pw.TextField()
    level = pw.IntegerField(default=1)
    page = pw.IntegerField()


class Chunk(BaseModel):
    book_id: int
    book = pw.ForeignKeyField(Book, backref="chunks", on_delete="CASCADE")
    ordinal = pw.IntegerField()
    chapter = pw.IntegerField(default=0)
    start_page = pw.IntegerField()
    end_page = pw.IntegerField()
    # Schema v8: packed against its pages (``pack_chunk``); read the view chunk_text.
    text = pw.BlobField()

    class Meta:
        indexes = ((("book", "end_page"), False),)


class ChunkIndex(pw.Model):
    """FTS5 over chunk text; ``rowid`` is the ``Chunk.id``. Kept in sync by the importer.
    From schema v7 it is an external-content index: the text is kept once, in ``chunk``, and
    the index holds only the terms. From v8 that text is packed against its pages and the index
    reads it through the view ``chunk_text``. Made by the migrations (never by peewee), and
    searched in SQL (core.search): a plain model, so that loading the models does not load
    playhouse.sqlite_ext (2-4 ms of a ``margin import``, issue 41)."""

    rowid = pw.IntegerField(primary_key=True)
    text = pw.TextField()

    class Meta:
        table_name = "chunk_index"


class Highlight(BaseModel):
    """A passage the reader marked. ``anchor`` locates it on the page: for reflowable pages
    ``{"start": int, "end": int}`` character offsets into the page text; for PDFs
    ``{"rects": [[x, y, w, h], ...]}`` in PDF points."""

    book_id: int
    book = pw.ForeignKeyField(Book, backref="highlights", on_delete="CASCADE")
    page = pw.IntegerField()
    text = pw.TextField()
    note = pw.TextField(default="")
    style = pw.TextField(default="highlight")  # highlight | underline | strike
    colour = pw.TextField(default="yellow")
    anchor = JSONField(null=True)
    quote = JSONField(null=True)  # a core.store.anchors.TextQuote: found again after a re-read
    created_at = pw.DateTimeField(default=utcnow)
    updated_at = pw.DateTimeField(default=utcnow)


class Note(BaseModel):
    """A note about the book, written by the reader or saved by the agent (its memory)."""

    book_id: int
    book = pw.ForeignKeyField(Book, backref="notes", on_delete="CASCADE")
    page = pw.IntegerField(null=True)
    text = pw.TextField()
    source = pw.TextField(default="reader")  # "reader" | "agent"
    quote = JSONField(null=True)  # the words of its page it follows after a re-read
    created_at = pw.DateTimeField(default=utcnow)
    updated_at = pw.DateTimeField(default=utcnow)


class Conversation(BaseModel):
    book_id: int
    book = pw.ForeignKeyField(Book, backref="conversations", on_delete="CASCADE")
    title = pw.TextField(default="New conversation")
    quote = JSONField(null=True)  # a thread's passage (core.store.anchors.TextQuote); None: free
    created_at = pw.DateTimeField(default=utcnow)
    updated_at = pw.DateTimeField(default=utcnow)


class Run(BaseModel):
    """One answer to one question: the loop's bookkeeping, usage and outcome."""

    conversation_id: int
    conversation = pw.ForeignKeyField(Conversation, backref="runs", on_delete="CASCADE")
    status = pw.TextField(default="running")  # running|complete|stopped|failed|interrupted
    provider = pw.TextField(default="")
    model = pw.TextField(default="")
    strategy = pw.TextField(default="")
    steps = pw.IntegerField(default=0)
    input_tokens = pw.IntegerField(default=0)
    output_tokens = pw.IntegerField(default=0)
    cache_read_tokens = pw.IntegerField(default=0)
    cache_write_tokens = pw.IntegerField(default=0)
    stop_reason = pw.TextField(default="")
    error_code = pw.TextField(default="")
    error_message = pw.TextField(default="")
    error_hint = pw.TextField(default="")  # schema v4: what to do, shown with the error
    started_at = pw.DateTimeField(default=utcnow)
    finished_at = pw.DateTimeField(null=True)
    pid = pw.IntegerField(null=True)  # schema v5: the process writing the answer
    host = pw.TextField(default="")  # schema v5: the machine that process runs on


class Message(BaseModel):
    """One API message. ``content`` keeps the Messages API content blocks as JSON so history
    replays exactly (tool ids included). ``kind`` tells a reader's question from the loop's
    tool-result turns and the assistant's answer; ``text`` is the plain text shown."""

    conversation_id: int
    conversation = pw.ForeignKeyField(Conversation, backref="messages", on_delete="CASCADE")
    run_id: int | None
    run = pw.ForeignKeyField(Run, null=True, backref="messages", on_delete="SET NULL")
    role = pw.TextField()  # "user" | "assistant"
    kind = pw.TextField(default="question")  # question | tool_results | answer | tool_use
    content = JSONField()
    text = pw.TextField(default="")
    selection_text = pw.TextField(null=True)
    selection_page = pw.IntegerField(null=True)
    status = pw.TextField(default="complete")  # complete|stopped|failed|running|interrupted
    citations = JSONField(null=True)
    created_at = pw.DateTimeField(default=utcnow)
    updated_at = pw.DateTimeField(default=utcnow)


class ToolCall(BaseModel):
    run_id: int
    run = pw.ForeignKeyField(Run, backref="tool_calls", on_delete="CASCADE")
    message = pw.ForeignKeyField(Message, null=True, backref="tool_calls", on_delete="SET NULL")
    step = pw.IntegerField(default=0)
    tool_use_id = pw.TextField()
    name = pw.TextField()
    input = JSONField(null=True)
    result_summary = pw.TextField(default="")
    is_error = pw.BooleanField(default=False)
    duration_ms = pw.FloatField(default=0.0)
    detail = JSONField(null=True)  # schema v2: pages, queries, passages for the answer's sources
    created_at = pw.DateTimeField(default=utcnow)


ALL_MODELS: tuple[type[pw.Model], ...] = (
    Book,
    Page,
    TocEntry,
    Chunk,
    ChunkIndex,
    Highlight,
    Note,
    Conversation,
    Run,
    Message,
    ToolCall,
)
