"""A new library's schema at version VERSION: the statements that make the database
the migrations make from an empty file, one by one, up to that version (its objects
as SQLite keeps them; tests/core/store/test_new_library.py checks both are the same and
writes this module again). ``core.store.migrations.migrate`` runs them in one
transaction for a new file, then the steps after VERSION: step by step, a new
library was a transaction a step, tables made and remade (21 ms of CPU, 5 % of
importing a 3 MB text as the first book: issue 41). Frozen: never edited; when
steps are added, written again (or left, and they run after it)."""

VERSION = 25
STATEMENTS: tuple[str, ...] = (
    'CREATE TABLE "chunk" ("id" INTEGER NOT NULL PRIMARY KEY, "book_id" INTEGER NOT NULL, "ordinal" INTEGER NOT NULL, "chapter" INTEGER NOT NULL, "start_page" INTEGER NOT NULL, "end_page" INTEGER NOT NULL, "text" BLOB NOT NULL, FOREIGN KEY ("book_id") REFERENCES "book" ("id") ON DELETE CASCADE)',
    'CREATE INDEX "chunk_book_id_end_page" ON "chunk" ("book_id", "end_page")',
    'CREATE TABLE "highlight" ("id" INTEGER NOT NULL PRIMARY KEY, "book_id" INTEGER NOT NULL, "page" INTEGER NOT NULL, "text" TEXT NOT NULL, "note" TEXT NOT NULL, "colour" TEXT NOT NULL, "anchor" TEXT, "created_at" DATETIME NOT NULL, "updated_at" DATETIME NOT NULL, style TEXT NOT NULL DEFAULT \'highlight\', quote TEXT, FOREIGN KEY ("book_id") REFERENCES "book" ("id") ON DELETE CASCADE)',
    'CREATE INDEX "highlight_book_id" ON "highlight" ("book_id")',
    'CREATE TABLE "run" ("id" INTEGER NOT NULL PRIMARY KEY, "conversation_id" INTEGER NOT NULL, "status" TEXT NOT NULL, "provider" TEXT NOT NULL, "model" TEXT NOT NULL, "strategy" TEXT NOT NULL, "steps" INTEGER NOT NULL, "input_tokens" INTEGER NOT NULL, "output_tokens" INTEGER NOT NULL, "cache_read_tokens" INTEGER NOT NULL, "cache_write_tokens" INTEGER NOT NULL, "stop_reason" TEXT NOT NULL, "error_code" TEXT NOT NULL, "error_message" TEXT NOT NULL, "started_at" DATETIME NOT NULL, "finished_at" DATETIME, error_hint TEXT NOT NULL DEFAULT \'\', pid INTEGER, host TEXT NOT NULL DEFAULT \'\', FOREIGN KEY ("conversation_id") REFERENCES "conversation" ("id") ON DELETE CASCADE)',
    'CREATE INDEX "run_conversation_id" ON "run" ("conversation_id")',
    'CREATE TABLE "message" ("id" INTEGER NOT NULL PRIMARY KEY, "conversation_id" INTEGER NOT NULL, "run_id" INTEGER, "role" TEXT NOT NULL, "kind" TEXT NOT NULL, "content" TEXT NOT NULL, "text" TEXT NOT NULL, "selection_text" TEXT, "selection_page" INTEGER, "status" TEXT NOT NULL, "citations" TEXT, "created_at" DATETIME NOT NULL, "updated_at" DATETIME NOT NULL, FOREIGN KEY ("conversation_id") REFERENCES "conversation" ("id") ON DELETE CASCADE, FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE SET NULL)',
    'CREATE INDEX "message_conversation_id" ON "message" ("conversation_id")',
    'CREATE INDEX "message_run_id" ON "message" ("run_id")',
    'CREATE TABLE "note" ("id" INTEGER NOT NULL PRIMARY KEY, "book_id" INTEGER NOT NULL, "page" INTEGER, "text" TEXT NOT NULL, "source" TEXT NOT NULL, "created_at" DATETIME NOT NULL, "updated_at" DATETIME NOT NULL, quote TEXT, FOREIGN KEY ("book_id") REFERENCES "book" ("id") ON DELETE CASCADE)',
    'CREATE INDEX "note_book_id" ON "note" ("book_id")',
    'CREATE TABLE "page" ("id" INTEGER NOT NULL PRIMARY KEY, "book_id" INTEGER NOT NULL, "number" INTEGER NOT NULL, "label" TEXT NOT NULL, "chapter" INTEGER NOT NULL, "text" BLOB NOT NULL, block INTEGER, FOREIGN KEY ("book_id") REFERENCES "book" ("id") ON DELETE CASCADE)',
    'CREATE UNIQUE INDEX "page_book_id_number" ON "page" ("book_id", "number")',
    'CREATE TABLE "toc_entry" ("id" INTEGER NOT NULL PRIMARY KEY, "book_id" INTEGER NOT NULL, "ordinal" INTEGER NOT NULL, "title" TEXT NOT NULL, "level" INTEGER NOT NULL, "page" INTEGER NOT NULL, FOREIGN KEY ("book_id") REFERENCES "book" ("id") ON DELETE CASCADE)',
    'CREATE INDEX "toc_entry_book_id" ON "toc_entry" ("book_id")',
    'CREATE TABLE "tool_call" ("id" INTEGER NOT NULL PRIMARY KEY, "run_id" INTEGER NOT NULL, "message_id" INTEGER, "step" INTEGER NOT NULL, "tool_use_id" TEXT NOT NULL, "name" TEXT NOT NULL, "input" TEXT, "result_summary" TEXT NOT NULL, "is_error" INTEGER NOT NULL, "duration_ms" REAL NOT NULL, "created_at" DATETIME NOT NULL, detail TEXT, FOREIGN KEY ("run_id") REFERENCES "run" ("id") ON DELETE CASCADE, FOREIGN KEY ("message_id") REFERENCES "message" ("id") ON DELETE SET NULL)',
    'CREATE INDEX "tool_call_run_id" ON "tool_call" ("run_id")',
    'CREATE INDEX "tool_call_message_id" ON "tool_call" ("message_id")',
    "CREATE TABLE spoiler_stats (book_id INTEGER PRIMARY KEY REFERENCES book (id) ON DELETE CASCADE, version INTEGER NOT NULL, data BLOB NOT NULL)",
    "CREATE TABLE reading_state (book_id INTEGER PRIMARY KEY REFERENCES book (id) ON DELETE CASCADE, data TEXT NOT NULL, updated_at TEXT)",
    'CREATE TABLE "book" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "title" TEXT NOT NULL, "author" TEXT NOT NULL, "language" TEXT NOT NULL, "format" TEXT NOT NULL, "sha256" TEXT NOT NULL, "original_path" TEXT NOT NULL, "file_path" TEXT NOT NULL, "file_size" INTEGER NOT NULL, "page_count" INTEGER NOT NULL, "position" INTEGER NOT NULL, "finished" INTEGER NOT NULL, "status" TEXT NOT NULL, "added_at" DATETIME NOT NULL, "updated_at" DATETIME NOT NULL, "opened_at" DATETIME, read_to INTEGER NOT NULL DEFAULT 1, parser_version INTEGER NOT NULL DEFAULT 1)',
    'CREATE UNIQUE INDEX "book_sha256" ON "book" ("sha256")',
    'CREATE TABLE "conversation" ("id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "book_id" INTEGER NOT NULL, "title" TEXT NOT NULL, "created_at" DATETIME NOT NULL, "updated_at" DATETIME NOT NULL, quote TEXT, FOREIGN KEY ("book_id") REFERENCES "book" ("id") ON DELETE CASCADE)',
    'CREATE INDEX "conversation_book_id" ON "conversation" ("book_id")',
    "CREATE TABLE chunk_vectors (book_id INTEGER PRIMARY KEY REFERENCES book (id) ON DELETE CASCADE, model TEXT NOT NULL, dims INTEGER NOT NULL, first_chunk INTEGER NOT NULL, count INTEGER NOT NULL, data BLOB NOT NULL)",
    "CREATE TABLE companion_page (book_id INTEGER NOT NULL REFERENCES book (id) ON DELETE CASCADE, kind TEXT NOT NULL, page INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (book_id, kind, page))",
    "CREATE TABLE companion_item (book_id INTEGER NOT NULL REFERENCES book (id) ON DELETE CASCADE, kind TEXT NOT NULL, key TEXT NOT NULL, version INTEGER NOT NULL, data BLOB NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (book_id, kind, key))",
    "CREATE TABLE ocr_text (book_id INTEGER NOT NULL REFERENCES book (id) ON DELETE CASCADE, number INTEGER NOT NULL, sha256 TEXT NOT NULL, text TEXT NOT NULL, PRIMARY KEY (book_id, number))",
    "CREATE TABLE sentence_vectors (book_id INTEGER PRIMARY KEY REFERENCES book (id) ON DELETE CASCADE, model TEXT NOT NULL, dims INTEGER NOT NULL, first_chunk INTEGER NOT NULL, count INTEGER NOT NULL, data BLOB NOT NULL)",
    "CREATE TABLE sentence_windows (book_id INTEGER PRIMARY KEY REFERENCES book (id) ON DELETE CASCADE, model TEXT NOT NULL, dims INTEGER NOT NULL, first_chunk INTEGER NOT NULL, count INTEGER NOT NULL, done INTEGER NOT NULL, windows BLOB NOT NULL, data BLOB NOT NULL)",
    "CREATE TABLE sync_record (uid TEXT PRIMARY KEY, kind TEXT NOT NULL, local_id INTEGER, book TEXT NOT NULL DEFAULT '', counter INTEGER NOT NULL, device TEXT NOT NULL, base TEXT NOT NULL DEFAULT '', hash TEXT NOT NULL DEFAULT '', payload TEXT NOT NULL DEFAULT '{}', deleted INTEGER NOT NULL DEFAULT 0, outbox INTEGER NOT NULL DEFAULT 0, applied INTEGER NOT NULL DEFAULT 1)",
    "CREATE INDEX sync_record_local ON sync_record (kind, local_id)",
    "CREATE TABLE sync_seen (name TEXT PRIMARY KEY)",
    "CREATE TABLE sync_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE source_book (book_id INTEGER PRIMARY KEY REFERENCES book (id) ON DELETE CASCADE, source TEXT NOT NULL, key TEXT NOT NULL, series TEXT NOT NULL DEFAULT '', series_index REAL NOT NULL DEFAULT 0, tags TEXT NOT NULL DEFAULT '[]', cover TEXT NOT NULL DEFAULT '', modified TEXT NOT NULL DEFAULT '', UNIQUE (source, key))",
    "CREATE VIRTUAL TABLE cjk_index USING fts5(grams, tokenize='unicode61 remove_diacritics 2')",
    "CREATE TABLE page_block (book_id INTEGER NOT NULL REFERENCES book (id) ON DELETE CASCADE, first INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (book_id, first))",
    "CREATE VIEW page_plain (book_id, number, text) AS SELECT p.book_id, p.number, margin_page(p.text, b.data) FROM page p LEFT JOIN page_block b ON b.book_id = p.book_id AND b.first = p.block",
    "CREATE VIEW chunk_text (id, text) AS SELECT c.id, margin_chunk(c.text, CASE WHEN a.text IS NULL THEN NULL ELSE margin_page(a.text, ab.data) END, CASE WHEN b.text IS NULL THEN NULL ELSE margin_page(b.text, bb.data) END) FROM chunk c LEFT JOIN page a ON a.book_id = c.book_id AND a.number = c.start_page LEFT JOIN page_block ab ON ab.book_id = a.book_id AND ab.first = a.block LEFT JOIN page b ON b.book_id = c.book_id AND b.number = c.end_page LEFT JOIN page_block bb ON bb.book_id = b.book_id AND bb.first = b.block",
    "CREATE VIRTUAL TABLE chunk_index USING fts5(text, content='chunk_text', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2', detail=none)",
    "INSERT INTO sqlite_sequence (name, seq) VALUES ('book', 0)",
    "INSERT INTO sqlite_sequence (name, seq) VALUES ('conversation', 0)",
    "INSERT INTO chunk_index(chunk_index) VALUES('rebuild')",
)
