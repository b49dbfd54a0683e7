"""``margin search --all QUERY`` read with the standard ``sqlite3`` module alone.

The command's search takes a few milliseconds; the rest of Margin (peewee, the app object,
the message types and their dataclasses) took five times the interpreter's own start-up to
import (issue 41). This reads the library for reading only, through the same queries as the
window's library search (``core.search.everywhere``), and prints what the full command
prints (tests/core/cli/test_search_all_quick.py compares the two). Anything it does not
answer alone — another option, a library that does not exist yet or does not open, a query
that fails — returns None before printing a word, and the full command runs and explains.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

from core.cli.output import print_json, say
from core.labels import cited_pages
from core.search.everywhere import left_out, library_passages
from core.search.rows import chunk_range, chunk_rows
from core.store.packing import page_text, unpack_chunk
from core.store.page_blocks import margin_page

LARGEST_NUMBER = 1_000_000_000  # as ``core.cli.context.number``
BOOKS = "SELECT id, title FROM book WHERE status = 'ready'"
LABELS = "SELECT number, label FROM page WHERE book_id = ? ORDER BY number"


class Options:
    def __init__(self) -> None:
        self.data_dir: str | None = None
        self.words: list[str] = []
        self.limit = 10
        self.beyond_read = False
        self.json = False


def parse(args: list[str]) -> Options | None:
    """The options of ``[--data-dir DIR] search --all [--beyond-read] [--limit N] [--json]
    QUERY [MORE]`` exactly as written; None for anything else (argparse's abbreviations,
    ``--``, ``--help``, a bad number: the full command's parser answers those)."""
    got = Options()
    rest = iter(args)
    seen_command = False
    for word in rest:
        value: str | None = None
        if word.startswith("--") and "=" in word:
            word, value = word.split("=", 1)
        if not seen_command:
            if word == "--data-dir":
                got.data_dir = value if value is not None else next(rest, None)
                if got.data_dir is None:
                    return None
            elif word == "search" and value is None:
                seen_command = True
            else:
                return None
        elif word == "--limit":
            text = value if value is not None else next(rest, None)
            try:
                got.limit = int(text or "")
            except ValueError:
                return None
            if not 1 <= got.limit <= LARGEST_NUMBER:
                return None
        elif value is not None:
            return None
        elif word == "--all":
            pass
        elif word == "--beyond-read":
            got.beyond_read = True
        elif word == "--json":
            got.json = True
        elif word.startswith("-") or len(got.words) == 2:
            return None
        else:
            got.words.append(word)
    return got if seen_command and got.words else None


def database_path(data_dir: str | None) -> Path:
    """The library file ``core.paths.resolve_paths`` names (explicit folder > ``MARGIN_HOME``
    > the platform's user data folder)."""
    chosen = data_dir or os.environ.get("MARGIN_HOME")
    if chosen:
        return Path(chosen).expanduser().resolve() / "library.sqlite3"
    import platformdirs

    return Path(platformdirs.user_data_dir("Margin", appauthor=False)) / "library.sqlite3"


class Reader:
    """The library for reading only, as ``everywhere.Chunks`` reads it."""

    def __init__(self, path: Path) -> None:
        # (a URI's own characters escaped by hand: urllib.parse costs milliseconds to import)
        name = str(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")
        self.connection = sqlite3.connect(f"file:{name}?mode=ro", uri=True, timeout=15)
        # the stored text's unpackers, as every connection of the app has them (the word
        # index reads passages through the view ``chunk_text``)
        self.connection.create_function("margin_text", 1, page_text, deterministic=True)
        self.connection.create_function("margin_chunk", 3, unpack_chunk, deterministic=True)
        self.connection.create_function("margin_page", 2, margin_page, deterministic=True)
        self.db = self

    def execute_sql(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        return self.connection.execute(sql, params)

    def chunk_range(self, book_id: int, until_page: int | None = None) -> tuple[int, int] | None:
        return chunk_range(self, book_id, until_page)

    def _rows(self, ids: list[int], book_id: int | None) -> dict[int, tuple[Any, ...]]:
        return chunk_rows(self, ids, book_id)

    def labels(self, book_id: int) -> list[str]:
        """``Library.page_labels``: each page's printed label, else its number."""
        rows = self.connection.execute(LABELS, (book_id,)).fetchall()
        return [label or str(number) for number, label in rows]


def quick(args: list[str]) -> int | None:
    """Run ``margin search --all`` when it can be answered here; its exit status, or None
    for the full command to run."""
    options = parse(args)
    if options is None:
        return None
    path = database_path(options.data_dir)
    if not path.is_file():
        return None  # a new library: the full command makes it (and says nothing matches)
    try:
        lines = _answer(Reader(path), options)
    except Exception:  # damaged, busy, read-only, older or newer: the full command says
        return None  # what happened, for people, and logs it
    try:
        if options.json:
            print_json(lines)
        else:
            for line in lines:
                say(line)
        sys.stdout.flush()
    except BrokenPipeError:
        return 0
    return 0


def _answer(reader: Reader, options: Options) -> Any:
    """What the command prints: the lines, or the JSON value (``cmd_search``'s output)."""
    query = " ".join(options.words)
    grouped = library_passages(
        reader, query, per_book=min(options.limit, 20), bounded=not options.beyond_read
    )
    titles = dict(reader.connection.execute(BOOKS).fetchall())
    if options.json:
        keys = ("chunk_id", "book_id", "start_page", "end_page", "chapter", "text")
        return [
            {
                "book_id": book_id,
                "title": titles.get(book_id, ""),
                "passages": [
                    {**dict(zip(keys, row, strict=True)), "snippet": snippet, "score": score}
                    for row, snippet, score in passages
                ],
            }
            for book_id, passages in grouped
        ]
    left = 0 if options.beyond_read else left_out(reader, query, {b for b, _ in grouped})
    more = (
        f"{left} book{'s' if left != 1 else ''} you have not read that far also "
        f"match{'es' if left == 1 else ''} (--beyond-read includes them)."
    )
    lines: list[str] = []
    if not grouped:
        where = "" if options.beyond_read else " (up to where you have read each book)"
        lines.append(f'No passages in your library match "{query}"{where}.')
        return [*lines, more] if left else lines
    for book_id, passages in grouped:
        title = titles.get(book_id)
        lines.append(f"{title if title is not None else f'book {book_id}'}  [{book_id}]")
        labels = reader.labels(book_id)
        for row, snippet, _ in passages:
            lines.append(f"{cited_pages(row[2], row[3], labels):>12}  {' '.join(snippet.split())}")
        lines.append("")
    return [*lines, more] if left else lines
