"""Find in book: every place a phrase appears, in book order (no ranking), for the reader's
Find panel. Scans the stored page texts with one regular expression; a match may run from
one page onto the next (it belongs to the page where it starts).

Options: ``whole_word`` (no match inside a longer word) and ``exact`` (the phrase exactly as
typed, case and punctuation included; otherwise case is ignored and the words may be
separated by any spaces, line breaks or punctuation).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from core.errors import MarginError

SNIPPET_CHARS = 60
MAX_MATCHES = 5000
SNIPPETS = 500


@dataclass(frozen=True)
class FindMatch:
    page: int  # the stored page where the match starts
    offset: int  # character offset of the match in that page's text
    text: str  # the words as they appear in the book
    nth: int  # 0 for the first match on its page, 1 for the second…
    before: str  # a little text before the match (for the results list)
    after: str
    end_page: int  # the page where it ends (the same page unless it runs on)


def compile_query(
    query: str, *, whole_word: bool = False, exact: bool = False, folded: bool = False
) -> re.Pattern[str]:
    """The regular expression for ``query``; a ``MarginError`` for an empty query.
    ``folded``: the text it will run on is already lower-case (much faster than IGNORECASE,
    which makes ``re`` compare every character)."""
    words = query.split()
    if not words:
        raise MarginError("empty_find", "Type a word or a phrase to find in the book.")
    if exact:
        body = r"\s+".join(re.escape(w) for w in words)
        flags = 0
    else:
        body = r"[\W_]+".join(re.escape(w.lower() if folded else w) for w in words)
        flags = 0 if folded else re.IGNORECASE
    if whole_word:
        body = rf"(?<!\w){body}(?!\w)"
    return re.compile(body, flags)


class BookText:
    """A book's page texts joined once, ready for many searches (the Find panel keeps one)."""

    def __init__(self, pages: Iterable[tuple[int, str]]) -> None:
        self.numbers: list[int] = []
        self.starts: list[int] = []
        parts: list[str] = []
        position = 0
        for number, text in pages:
            self.numbers.append(number)
            self.starts.append(position)
            parts.append(text)
            position += len(text) + 2
        self.whole = "\n\n".join(parts)
        lowered = self.whole.lower()
        # lower() may change the length of a few characters (İ): then offsets would shift
        self.lowered = lowered if len(lowered) == len(self.whole) else None

    def find(
        self,
        query: str,
        *,
        whole_word: bool = False,
        exact: bool = False,
        limit: int = MAX_MATCHES,
        snippets: int = SNIPPETS,
    ) -> list[FindMatch]:
        """Matches in book order; the first ``snippets`` carry the text around them (the
        results list shows those; the others are reached with Next/Previous)."""
        folded = not exact and self.lowered is not None
        pattern = compile_query(query, whole_word=whole_word, exact=exact, folded=folded)
        haystack = self.lowered if folded and self.lowered is not None else self.whole
        whole, starts, numbers = self.whole, self.starts, self.numbers
        matches: list[FindMatch] = []
        index = 0
        last_page = -1
        nth = 0
        for found in pattern.finditer(haystack):
            begin, end = found.span()
            index = bisect_right(starts, begin, lo=index) - 1
            end_index = bisect_right(starts, end - 1, lo=index) - 1
            page = numbers[index]
            nth = nth + 1 if page == last_page else 0
            last_page = page
            if len(matches) >= snippets:
                matches.append(
                    FindMatch(
                        page,
                        begin - starts[index],
                        whole[begin:end],
                        nth,
                        "",
                        "",
                        numbers[end_index],
                    )
                )
                if len(matches) >= limit:
                    break
                continue
            matches.append(
                FindMatch(
                    page=page,
                    offset=begin - starts[index],
                    text=whole[begin:end],
                    nth=nth,
                    before=_clean(
                        whole[max(0, begin - SNIPPET_CHARS) : begin],
                        cut=begin > SNIPPET_CHARS,
                        left=True,
                    ),
                    after=_clean(
                        whole[end : end + SNIPPET_CHARS],
                        cut=end + SNIPPET_CHARS < len(whole),
                        left=False,
                    ),
                    end_page=numbers[end_index],
                )
            )
            if len(matches) >= limit:
                break
        return matches


def find_in_pages(pages: Iterable[tuple[int, str]], query: str, **options: Any) -> list[FindMatch]:
    """Every match of ``query`` in ``pages`` ((number, text) in book order), in book order;
    ``options`` as for ``BookText.find``."""
    return BookText(pages).find(query, **options)


def _clean(text: str, *, cut: bool, left: bool) -> str:
    words = text.split()
    if not words:
        return ""
    # drop the word cut in half at the far end
    if cut and left and len(words) > 1 and not text[0].isspace():
        words = words[1:]
    if cut and not left and len(words) > 1 and not text[-1].isspace():
        words = words[:-1]
    return " ".join(words)
