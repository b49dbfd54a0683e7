"""A book's content in the library: writing a parsed book (pages, contents, chunks and the
search index, in one transaction), reading it again, removing it, and repairing the index.
The only writer of chunks and the index."""

from __future__ import annotations

import logging
import re
import sqlite3
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

import peewee as pw

from core.domain.book import ChunkContent as BookChunk
from core.domain.book import ParsedBook
from core.errors import StorageError
from core.progress import CancelToken
from core.store import cjk_index
from core.store import models as m
from core.store.content_rows import insert_content
from core.store.page_blocks import page_content
from core.store.records import PARSER_VERSION, BookInfo, LibraryBase, page_texts

log = logging.getLogger("core.store.library")
# the search index is merged after removing passages when they were at least a quarter of
# the passages left (``BookContent._compact_index``)
COMPACT_SHARE = 4


class BookContent(LibraryBase):
    def delete_book(self, book_id: int) -> None:
        """Remove a book with its pages, chunks, highlights, notes and conversations."""
        book = self.get_book(book_id)
        from core.store.conversations import Conversations

        conversation_ids = [
            c.id
            for c in m.Conversation.select(m.Conversation.id).where(m.Conversation.book == book_id)
        ]
        Conversations(self.db).stop_answers(conversation_ids)  # answers in other processes
        with self.db.atomic():
            self._delete_rows([book_id])
        for conversation_id in conversation_ids:  # their event logs go with them
            self.paths.event_log(conversation_id).unlink(missing_ok=True)
        from core.paths import companions_log_name

        (self.paths.event_logs / companions_log_name(book_id)).unlink(missing_ok=True)
        if book.file_path:
            copy = Path(book.file_path)
            if copy.is_relative_to(self.paths.books):
                copy.unlink(missing_ok=True)

    def _delete_rows(self, book_ids: list[int]) -> None:
        """The one place that removes books' rows with their search index (call inside a
        transaction): FTS5 rows have no foreign key to cascade."""
        if not book_ids:
            return
        removed = m.Chunk.select().where(m.Chunk.book.in_(book_ids)).count()
        rebuild = not self._unindex(book_ids)
        m.Book.delete().where(m.Book.id.in_(book_ids)).execute()
        if rebuild:
            self.repair_index()
        else:
            self._compact_index(removed)

    def _unindex(self, book_ids: list[int]) -> bool:
        """Take books' chunks out of the search index (inside a transaction). An external-
        content index needs each chunk's text to do so: when some of it is damaged, returns
        False, and the caller rebuilds the index once those chunks are gone."""
        chunk_ids = m.Chunk.select(m.Chunk.id).where(m.Chunk.book.in_(book_ids))
        try:
            with self.db.atomic():  # a savepoint: a failure leaves the index as it was
                m.ChunkIndex.delete().where(m.ChunkIndex.rowid.in_(chunk_ids)).execute()
                cjk_index.unindex(self.db, chunk_ids)
        except (pw.DatabaseError, sqlite3.DatabaseError) as exc:
            text = str(exc)
            if not any(s in text for s in ("user-defined function", "malformed", "corrupt")):
                raise
            log.warning("damaged chunk text or index (books %s): the index is rebuilt", book_ids)
            return False
        return True

    def _compact_index(self, removed: int) -> None:
        """Removing rows from an FTS5 index adds "delete" entries beside the old ones; both go
        only when FTS5 merges its segments. Deleting the 16 MiB EPUB from a library grew its
        index from 9 to 14 MB, and every re-read of a book added its index again. So the
        index is merged into one segment (FTS5 'optimize', about 50 MB of index a second)
        when what was removed is a large part of what remains: the merge then costs at most
        a few times the removal itself (which reads every removed passage's text)."""
        if removed <= 0:
            return
        remaining = m.Chunk.select().count()
        if removed * COMPACT_SHARE >= remaining:
            self.db.execute_sql("INSERT INTO chunk_index(chunk_index) VALUES('optimize')")

    def _rebuild_index(self) -> None:
        self.db.execute_sql("INSERT INTO chunk_index(chunk_index) VALUES('rebuild')")

    # Repair ---------------------------------------------------------------------------

    def index_damaged(self) -> bool:
        """Whether the search index disagrees with the books' text or cannot be read (FTS5's
        own integrity check against its content)."""
        try:
            self.db.execute_sql(
                "INSERT INTO chunk_index(chunk_index, rank) VALUES('integrity-check', 1)"
            )
        except (pw.DatabaseError, sqlite3.DatabaseError) as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise
            log.warning("the search index is damaged", exc_info=True)
            return True
        return False

    def repair_index(self) -> bool:
        """Build the search index again from the books' stored text (it is derived data:
        nothing else is touched). When rebuilding fails (the index's own tables damaged),
        the index is created afresh with the same definition and filled. Returns False when
        it had to stay empty because some stored text is damaged too (``damaged_text``)."""
        try:
            with self.db.atomic():
                self._rebuild_index()
            return True
        except (pw.DatabaseError, sqlite3.DatabaseError):
            log.warning("rebuilding the search index failed; creating it afresh", exc_info=True)
        row = self.db.execute_sql(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'chunk_index'"
        ).fetchone()
        try:
            with self.db.atomic():
                self.db.execute_sql("DROP TABLE IF EXISTS chunk_index")
                self.db.execute_sql(row[0])
        except (pw.DatabaseError, sqlite3.DatabaseError):
            # its own bookkeeping rows are damaged (the structure record, _data id 10, or the
            # config/version row): FTS5 cannot even open it to drop it (issue 46 item 6)
            log.warning("the search index cannot be opened; its tables are reset", exc_info=True)
            self._reset_index_tables(str(row[0]))
        try:
            with self.db.atomic():
                self._rebuild_index()
        except (pw.DatabaseError, sqlite3.DatabaseError):
            log.warning("the search index stays empty: stored text is damaged", exc_info=True)
            return False
        return True

    def _reset_index_tables(self, definition: str) -> None:
        """Give the index's own tables the rows of a new, empty index of the same definition
        (made beside it and dropped), so FTS5 opens it again and can rebuild it."""
        twin = "margin_index_reset"
        sql = re.sub(
            r"(?i)^(\s*CREATE\s+VIRTUAL\s+TABLE\s+)[\"'`\[]?chunk_index[\"'`\]]?",
            rf"\g<1>{twin}",
            definition,
        )
        tables = {
            str(r[0])
            for r in self.db.execute_sql("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        with self.db.atomic():
            if twin in tables:
                self.db.execute_sql(f"DROP TABLE {twin}")
            self.db.execute_sql(sql)
            for part in ("data", "idx", "config", "docsize", "content"):
                if f"chunk_index_{part}" in tables:
                    self.db.execute_sql(f"DELETE FROM chunk_index_{part}")
                    self.db.execute_sql(
                        f"INSERT INTO chunk_index_{part} SELECT * FROM {twin}_{part}"
                    )
            self.db.execute_sql(f"DROP TABLE {twin}")

    def damaged_text(self, book_id: int) -> bool:
        """Whether some of a book's stored pages or search passages no longer unpack."""
        rows = self.db.execute_sql(
            "SELECT p.text, b.data FROM page p LEFT JOIN page_block b"
            " ON b.book_id = p.book_id AND b.first = p.block WHERE p.book_id = ?",
            (book_id,),
        )
        try:
            for packed, block in rows:
                page_content(packed, block)
            self.db.execute_sql(
                "SELECT count(length(t.text)) FROM chunk c JOIN chunk_text t ON t.id = c.id "
                "WHERE c.book_id = ?",
                (book_id,),
            ).fetchone()
        except (ValueError, zlib.error, pw.DatabaseError, sqlite3.DatabaseError):
            log.warning("book %d has damaged stored text", book_id, exc_info=True)
            return True
        return False

    def add_book(
        self,
        *,
        parsed: ParsedBook,
        chunks: Sequence[BookChunk],
        sha256: str,
        original_path: str,
        file_path: str,
        file_size: int,
        title: str,
        before_commit: Callable[[], None] = lambda: None,
        cancel: CancelToken | None = None,
        progress: Callable[[float, str], None] = lambda fraction, message: None,
    ) -> int:
        """Write a parsed book — the book, its pages, contents, chunks and search index — in
        ONE transaction; ``before_commit`` runs last inside it (the importer renames its copy
        there, so a book row never exists without its file). Returns the book's id."""
        with self.db.atomic():
            now = m.utcnow()
            row = m.Book.create(
                title=title,
                author=parsed.author.strip(),
                language=parsed.language.strip(),
                format=parsed.format.value,
                sha256=sha256,
                original_path=original_path,
                file_path=self._stored_path(file_path),
                file_size=file_size,
                page_count=len(parsed.pages),
                page=1,
                read_to=1,
                status="importing",
                parser_version=PARSER_VERSION,
                added_at=now,
                updated_at=now,
            )
            book_id = int(row.id)
            if cancel is not None:
                cancel.check()
            progress(0.92, "Indexing for search")
            insert_content(self.db.cursor(), book_id, parsed, chunks)
            if cancel is not None:
                cancel.check()
            m.Book.update(status="ready").where(m.Book.id == book_id).execute()
            before_commit()
        return book_id

    def replace_content(
        self, book_id: int, *, parsed: ParsedBook, chunks: Sequence[BookChunk]
    ) -> BookInfo:
        """Read a book again (a newer reader): its pages, contents, chunks and search index
        replaced in one transaction; highlights, notes, threads, citations, the page on
        screen and ``read_to`` are found again by their words (``anchoring.reanchor``), and
        what is not found is marked lost (``Library.lost_anchors``)."""
        book = self.get_book(book_id)
        count = len(parsed.pages)
        try:
            old_pages = page_texts(self.db, book_id)
        except StorageError:  # damaged text: nothing to find the old places by
            log.warning("book %d: old pages unreadable, places kept by number", book_id)
            old_pages = []
        with self.db.atomic():
            removed = m.Chunk.select().where(m.Chunk.book == book_id).count()
            rebuild = not self._unindex([book_id])
            for model in (m.Chunk, m.Page, m.TocEntry):
                model.delete().where(model.book == book_id).execute()
            self.db.execute_sql("DELETE FROM page_block WHERE book_id = ?", (book_id,))
            self.db.execute_sql("DELETE FROM spoiler_stats WHERE book_id = ?", (book_id,))
            if rebuild:  # the damaged chunks are gone: index what is left, then the new ones
                self.repair_index()
            insert_content(self.db.cursor(), book_id, parsed, chunks)
            if not rebuild:
                self._compact_index(removed)
            page, read_to = max(1, min(book.page, count)), max(1, min(book.read_to, count))
            if old_pages:  # highlights, notes, threads, citations, positions: by their words
                from core.store.anchoring import reanchor  # not on a CLI command's start-up

                moved = reanchor(
                    self.db,
                    book_id,
                    old_pages,
                    [(p.number, p.text) for p in parsed.pages],
                    page=book.page,
                    read_to=book.read_to,
                )
                page, read_to = moved.page, moved.read_to
            m.Book.update(
                page_count=count,
                page=page,
                read_to=read_to,
                parser_version=PARSER_VERSION,
                updated_at=m.utcnow(),
            ).where(m.Book.id == book_id).execute()
        return self.get_book(book_id)

    def remove_unfinished(self) -> int:
        """Remove books an interrupted import left "importing"; returns how many."""
        with self.db.atomic():
            stale = [b.id for b in m.Book.select(m.Book.id).where(m.Book.status != "ready")]
            self._delete_rows(stale)
        return len(stale)
