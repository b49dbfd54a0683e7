"""Schema 1 as it was created, statement by statement (migration v1, ``_v1_initial``).

Frozen: the tables as SQLite held them after the first migration, written out once from
the models of the time, so a change to ``core.store.models`` never changes what v1 makes.
"""

SCHEMA_V1: tuple[str, ...] = (
    'CREATE TABLE "book" ("id" INTEGER NOT NULL PRIMARY KEY, "title" TEXT NOT NULL, "author" TEXT NOT NULL, "language" TEXT NOT NULL, "format" TEXT NOT NULL, "sha256" TEXT NOT NULL, "original_path" TEXT NOT NULL, "file_path" TEXT NOT NULL, "file_size" INTEGER NOT NULL, "page_count" INTEGER NOT NULL, "position" INTEGER NOT NULL, "finished" INTEGER NOT NULL, "status" TEXT NOT NULL, "added_at" DATETIME NOT NULL, "updated_at" DATETIME NOT NULL, "opened_at" DATETIME)',
    'CREATE UNIQUE INDEX "book_sha256" ON "book" ("sha256")',
    'CREATE TABLE "chunk" ("id" INTEGER NOT NULL PRIMARY KEY, "book_id" INTEGER NOT NULL, "ordinal" INTEGER NOT NULL, "chapter" INTEGER NOT NULL, "start_page" INTEGER NOT NULL, "end_page" INTEGER NOT NULL, "text" BLOB NOT NULL, FOREIGN KEY ("book_id") REFERENCES "book" ("id") ON DELETE CASCADE)',
    'CREATE INDEX "chunk_book_id" ON "chunk" ("book_id")',
    'CREATE INDEX "chunk_book_id_end_page" ON "chunk" ("book_id", "end_page")',
    'CREATE VIRTUAL TABLE "chunk_index" USING fts5 ("text", tokenize="porter unicode61 remove_diacritics 2")',
    'CREATE TABLE "conversation" ("id" INTEGER NOT NULL PRIMARY KEY, "book_id" INTEGER NOT NULL, "title" TEXT NOT NULL, "created_at" DATETIME NOT NULL, "updated_at" DATETIME NOT NULL, FOREIGN KEY ("book_id") REFERENCES "book" ("id") ON DELETE CASCADE)',
    'CREATE INDEX "conversation_book_id" ON "conversation" ("book_id")',
    'CREATE TABLE "highlight" ("id" INTEGER NOT NULL PRIMARY KEY, "book_id" INTEGER NOT NULL, "page" INTEGER NOT NULL, "text" TEXT NOT NULL, "note" TEXT NOT NULL, "colour" TEXT NOT NULL, "anchor" TEXT, "created_at" DATETIME NOT NULL, "updated_at" DATETIME NOT NULL, FOREIGN KEY ("book_id") REFERENCES "book" ("id") ON DELETE CASCADE)',
    'CREATE INDEX "highlight_book_id" ON "highlight" ("book_id")',
    'CREATE TABLE "run" ("id" INTEGER NOT NULL PRIMARY KEY, "conversation_id" INTEGER NOT NULL, "status" TEXT NOT NULL, "provider" TEXT NOT NULL, "model" TEXT NOT NULL, "strategy" TEXT NOT NULL, "steps" INTEGER NOT NULL, "input_tokens" INTEGER NOT NULL, "output_tokens" INTEGER NOT NULL, "cache_read_tokens" INTEGER NOT NULL, "cache_write_tokens" INTEGER NOT NULL, "stop_reason" TEXT NOT NULL, "error_code" TEXT NOT NULL, "error_message" TEXT NOT NULL, "started_at" DATETIME NOT NULL, "finished_at" DATETIME, FOREIGN KEY ("conversation_id") REFERENCES "conversation" ("id") ON DELETE CASCADE)',
    'CREATE INDEX "run_conversation_id" ON "run" ("conversation_id")',
    'CREATE TABLE "message" ("id" INTEGER NOT NULL PRIMARY KEY, "conversation_id" INTEGER NOT NULL, "run_id" INTEGER, "role" TEXT NOT NULL, "kind" TEXT NOT NULL, "content" TEXT NOT NULL, "text" TEXT NOT NULL, "selection_text" TEXT, "selection_page" INTEGER, "status" TEXT NOT NULL, "citations" TEXT, "created_at" DATETIME NOT NULL, "updated_at" DATETIME NOT NULL, FOREIGN KEY ("conversation_id") REFERENCES "conversation" ("id") ON DELETE CASCADE, FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE SET NULL)',
    'CREATE INDEX "message_conversation_id" ON "message" ("conversation_id")',
    'CREATE INDEX "message_run_id" ON "message" ("run_id")',
    'CREATE TABLE "note" ("id" INTEGER NOT NULL PRIMARY KEY, "book_id" INTEGER NOT NULL, "page" INTEGER, "text" TEXT NOT NULL, "source" TEXT NOT NULL, "created_at" DATETIME NOT NULL, "updated_at" DATETIME NOT NULL, FOREIGN KEY ("book_id") REFERENCES "book" ("id") ON DELETE CASCADE)',
    'CREATE INDEX "note_book_id" ON "note" ("book_id")',
    'CREATE TABLE "page" ("id" INTEGER NOT NULL PRIMARY KEY, "book_id" INTEGER NOT NULL, "number" INTEGER NOT NULL, "label" TEXT NOT NULL, "chapter" INTEGER NOT NULL, "text" BLOB NOT NULL, html TEXT, FOREIGN KEY ("book_id") REFERENCES "book" ("id") ON DELETE CASCADE)',
    'CREATE INDEX "page_book_id" ON "page" ("book_id")',
    'CREATE UNIQUE INDEX "page_book_id_number" ON "page" ("book_id", "number")',
    'CREATE TABLE "toc_entry" ("id" INTEGER NOT NULL PRIMARY KEY, "book_id" INTEGER NOT NULL, "ordinal" INTEGER NOT NULL, "title" TEXT NOT NULL, "level" INTEGER NOT NULL, "page" INTEGER NOT NULL, FOREIGN KEY ("book_id") REFERENCES "book" ("id") ON DELETE CASCADE)',
    'CREATE INDEX "toc_entry_book_id" ON "toc_entry" ("book_id")',
    'CREATE TABLE "tool_call" ("id" INTEGER NOT NULL PRIMARY KEY, "run_id" INTEGER NOT NULL, "message_id" INTEGER, "step" INTEGER NOT NULL, "tool_use_id" TEXT NOT NULL, "name" TEXT NOT NULL, "input" TEXT, "result_summary" TEXT NOT NULL, "is_error" INTEGER NOT NULL, "duration_ms" REAL NOT NULL, "created_at" DATETIME NOT NULL, FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE, FOREIGN KEY ("message_id") REFERENCES "message" ("id") ON DELETE SET NULL)',
    'CREATE INDEX "tool_call_run_id" ON "tool_call" ("run_id")',
    'CREATE INDEX "tool_call_message_id" ON "tool_call" ("message_id")',
)
