"""The search index without positions, as the migration ``_index_without_positions`` (issue
41) makes it: a frozen copy of its definitions (a change in the live code never changes what
the step does).

``chunk_index`` becomes FTS5 ``detail=none`` (which passages hold a word, not where: a third
of ``detail=full``'s size; phrases and NEAR are checked on the passages' text,
core/search/positions.py). The view ``chunk_text`` it reads passages from joins the pages and
their blocks itself: through the view ``page_plain`` (a join, on the right of a LEFT JOIN)
SQLite could not flatten it and decoded every page of the library for each passage read,
about 14 ms a passage for one 250 KiB book (FTS5 reads passages one by one to delete a
book's or to rank without positions).
"""

from __future__ import annotations

import peewee as pw

CHUNK_TEXT_VIEW = (
    "CREATE VIEW chunk_text (id, text) AS "
    "SELECT c.id, margin_chunk(c.text, "
    "CASE WHEN a.text IS NULL THEN NULL ELSE margin_page(a.text, ab.data) END, "
    "CASE WHEN b.text IS NULL THEN NULL ELSE margin_page(b.text, bb.data) END) FROM chunk c "
    "LEFT JOIN page a ON a.book_id = c.book_id AND a.number = c.start_page "
    "LEFT JOIN page_block ab ON ab.book_id = a.book_id AND ab.first = a.block "
    "LEFT JOIN page b ON b.book_id = c.book_id AND b.number = c.end_page "
    "LEFT JOIN page_block bb ON bb.book_id = b.book_id AND bb.first = b.block"
)
CHUNK_INDEX = (
    "CREATE VIRTUAL TABLE chunk_index USING fts5(text, content='chunk_text', "
    "content_rowid='id', tokenize='porter unicode61 remove_diacritics 2', detail=none)"
)


def migrate(db: pw.SqliteDatabase) -> None:
    """The view and the index made again, and the index filled from every book's passages.
    A library with a passage that no longer unpacks keeps an empty index (search repairs
    it, as ``BookContent.repair_index`` does, once the book is read again)."""
    db.execute_sql("DROP TABLE IF EXISTS chunk_index")
    db.execute_sql("DROP VIEW IF EXISTS chunk_text")
    db.execute_sql(CHUNK_TEXT_VIEW)
    db.execute_sql(CHUNK_INDEX)
    try:
        with db.atomic():
            db.execute_sql("INSERT INTO chunk_index(chunk_index) VALUES('rebuild')")
    except (pw.DatabaseError, ValueError):
        pass  # damaged stored text: the index stays empty until that book is read again
