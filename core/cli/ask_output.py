"""What ``margin ask`` prints of an answer while it streams.

A small local model can loop: the same sentences over and over until the loop guard cuts the
answer (``core.agent.repetition``), and the saved answer keeps one copy. The command line
prints nothing the saved answer does not hold: a sentence the answer already said waits until
a new sentence follows it (then it was a plain repeat, printed), and is never printed when
the answer ends there (the loop the guard cut). Everything else prints as it arrives, a
sentence at a time.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_SENTENCE = re.compile(r".+?(?:[.!?…]+[\"'”’)\]]*(?=\s)|\n)|.+$", re.DOTALL)
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_MARK = re.compile(r"⟪[^⟫]*$")  # a marker cut in two
MIN_WORDS = 5  # shorter sentences ("Yes.") may repeat freely


def _key(sentence: str) -> tuple[str, ...]:
    return tuple(w.lower() for w in _WORD.findall(sentence))


class AnswerPrinter:
    """Fed the answer's raw text so far (markers of held-back sentences included); returns
    what to print now. ``render`` turns raw text into what the reader sees."""

    def __init__(self, render: Callable[[str], str]) -> None:
        self.render = render
        self.printed = ""  # raw text printed so far
        self._seen: set[tuple[str, ...]] = set()

    def feed(self, text: str) -> str:
        if not text.startswith(self.printed):
            return ""
        rest = text[len(self.printed) :]
        upto = 0
        pos = 0
        for match in _SENTENCE.finditer(rest):
            piece = match.group(0)
            complete = match.end() < len(rest) or piece.endswith("\n")
            if not complete:
                break
            pos = match.end()
            key = _key(piece)
            if len(key) < MIN_WORDS or key not in self._seen:
                upto = pos  # a new sentence: it, and any repeats before it, print now
            self._seen.add(key)
        return self._out(rest[:upto])

    def finish(self, final: str) -> str:
        """The end: the rest of the saved answer (``final``), never a copy it cut."""
        if final.startswith(self.printed):
            return self._out(final[len(self.printed) :])
        return ""

    def _out(self, raw: str) -> str:
        cut = _MARK.search(raw)
        if cut is not None:
            raw = raw[: cut.start()]
        if not raw:
            return ""
        self.printed += raw
        return self.render(raw)
