"""Find in book: every place a phrase appears, in book order (no ranking), for the reader's
Find panel. Scans the stored page texts with one regular expression; a match may run from
one page onto the next (it belongs to the page where it starts).

Options: ``whole_word`` (no match inside a longer word) and ``exact`` (the phrase exactly as
typed, case and punctuation included; otherwise case is ignored and the words may be
separated by any spaces, line breaks or punctuation).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from core.errors import MarginError

SNIPPET_CHARS = 60
MAX_MATCHES = 5000


@dataclass(frozen=True)
class FindMatch:
    page: int  # the stored page where the match starts
    offset: int  # character offset of the match in that page's text
    text: str  # the words as they appear in the book
    nth: int  # 0 for the first match on its page, 1 for the second…
    before: str  # a little text before the match (for the results list)
    after: str
    end_page: int  # the page where it ends (the same page unless it runs on)


def compile_query(query: str, *, whole_word: bool = False, exact: bool = False) -> re.Pattern[str]:
    """The regular expression for ``query``; a ``MarginError`` for an empty query."""
    words = query.split()
    if not words:
        raise MarginError("empty_find", "Type a word or a phrase to find in the book.")
    if exact:
        body = r"\s+".join(re.escape(w) for w in words)
        flags = 0
    else:
        body = r"[\W_]+".join(re.escape(w) for w in words)
        flags = re.IGNORECASE
    if whole_word:
        body = rf"(?<!\w){body}(?!\w)"
    return re.compile(body, flags)


def find_in_pages(
    pages: Iterable[tuple[int, str]],
    query: str,
    *,
    whole_word: bool = False,
    exact: bool = False,
    limit: int = MAX_MATCHES,
) -> list[FindMatch]:
    """Every match of ``query`` in ``pages`` ((number, text) in book order), in book order."""
    pattern = compile_query(query, whole_word=whole_word, exact=exact)
    numbers: list[int] = []
    starts: list[int] = []
    parts: list[str] = []
    position = 0
    for number, text in pages:
        numbers.append(number)
        starts.append(position)
        parts.append(text)
        position += len(text) + 2
    whole = "\n\n".join(parts)
    matches: list[FindMatch] = []
    index = 0
    last_page = -1
    nth = 0
    for found in pattern.finditer(whole):
        begin, end = found.span()
        while index + 1 < len(starts) and starts[index + 1] <= begin:
            index += 1
        end_index = index
        while end_index + 1 < len(starts) and starts[end_index + 1] < end:
            end_index += 1
        page = numbers[index]
        nth = nth + 1 if page == last_page else 0
        last_page = page
        matches.append(
            FindMatch(
                page=page,
                offset=begin - starts[index],
                text=found.group(0),
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
