"""The write side of the Chinese and Japanese search index (``cjk_index``; how it is searched
and why: ``core.search.cjk``). Here, below search, because the import writes it in the same
transaction as the word index (``core.store.content_rows.insert_content``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

# Han ideographs (with extension A and compatibility forms), hiragana, katakana (with the
# phonetic extensions and the half-width forms), the iteration mark 々 and the prolonged
# sound mark ー, and Hangul syllables: scripts written without spaces between words.
RUN_CHARS = (
    "\u3005\u3007\u303b\u3041-\u3096\u309d-\u309f\u30a1-\u30fa\u30fc-\u30ff"
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\uac00-\ud7a3"
    "\U00020000-\U0003134f"
)


class LazyPattern:
    """A regular expression compiled when first used: a class of these ranges takes
    milliseconds to compile, which a command that never meets such text (``margin search
    --all`` with words in Latin letters) should not spend at start-up."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern)
        return self._compiled

    def search(self, text: str) -> re.Match[str] | None:
        return self.compiled.search(text)

    def match(self, text: str) -> re.Match[str] | None:
        return self.compiled.match(text)

    def sub(self, repl: Callable[[re.Match[str]], str], text: str) -> str:
        return self.compiled.sub(repl, text)

    def split(self, text: str) -> list[str]:
        return self.compiled.split(text)


RUN = LazyPattern(f"[{RUN_CHARS}]+")
HAS = LazyPattern(f"[{RUN_CHARS}]")

TABLE = "cjk_index"
EXISTS = f"SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '{TABLE}'"
INSERT = f"INSERT INTO {TABLE} (rowid, grams) VALUES (?, ?)"


# every byte that starts a UTF-8 character below U+3000, and every continuation byte: a
# text whose UTF-8 holds none but these has no character of RUN_CHARS (all from U+3005)
_BELOW_RUNS = bytes(range(0xE3))


def _may_have_runs(text: str) -> bool:
    """False when ``text`` certainly holds no character of RUN_CHARS: a test about five
    times faster than the pattern's (a 3 MB book's passages in 5 ms, against 17 ms and 7
    more to compile the pattern), since curly quotes make nearly every English passage
    fail ``isascii``."""
    if text.isascii():
        return False
    return bool(text.encode("utf-8", "surrogatepass").translate(None, _BELOW_RUNS))


def none_in(texts: Iterable[bytes]) -> bool:
    """True when none of ``texts`` (UTF-8) holds a character of RUN_CHARS: a book's pages,
    whose passages then need no test of their own (1 ms for a 3 MB book's pages, against
    5 for its passages one by one, issue 41)."""
    return not any(text.translate(None, _BELOW_RUNS) for text in texts)


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a character of a script written without spaces."""
    return not text.isascii() and HAS.search(text) is not None


def pairs(run: str) -> list[str]:
    return [run[i : i + 2] for i in range(len(run) - 1)]


def grams(text: str) -> str:
    """``text`` as it is indexed in ``cjk_index``: every run of such characters cut into
    its pairs and its last character, the words of other scripts kept as they are."""

    def cut(match: re.Match[str]) -> str:
        run = match.group(0)
        return " " + " ".join([*pairs(run), run[-1]]) + " "

    return RUN.sub(cut, text)


def index_rows(cursor: Any, rows: Iterable[tuple[int, str]]) -> int:
    """Write the passages (chunk id, text) that hold such characters to ``cjk_index``;
    returns how many. The one hook of the import."""
    wanted = [
        (rowid, grams(text)) for rowid, text in rows if _may_have_runs(text) and HAS.search(text)
    ]
    if wanted:
        cursor.executemany(INSERT, wanted)
    return len(wanted)


def unindex(db: Any, chunk_ids: Sequence[int] | Any) -> None:
    """Take chunks out of ``cjk_index`` (a list of ids, or a peewee query selecting them)."""
    if db.execute_sql(EXISTS).fetchone() is None:  # a library before the table (tests of
        return  # old schemas run today's code on them)
    if isinstance(chunk_ids, Sequence):
        ids = list(chunk_ids)
        if not ids:
            return
        db.execute_sql(
            f"DELETE FROM {TABLE} WHERE rowid IN ({','.join('?' * len(ids))})", tuple(ids)
        )
        return
    sql, params = chunk_ids.sql()
    db.execute_sql(f"DELETE FROM {TABLE} WHERE rowid IN ({sql})", params)
