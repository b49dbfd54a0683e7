"""When the sentence being written may be shown in part (issue 41): the spoiler check lets a
sentence out once it has ended and passed, so the first words of an answer waited for the
first full stop (about 50 tokens). A sentence may go out in pieces while it is written, but
each piece must itself pass the check a sentence gets: ``SpoilerGuard.prefix`` checks the
sentence so far, from its start, and shows it only when the check neither holds it nor finds
it doubtful; a doubtful or held prefix stops the pieces, and the rest waits for the sentence's
end as before. The check of a prefix is stricter than a sentence's (``SpoilerGuard.check``
with ``whole=False``): its support by the pages read is tested however few its words, and
whenever it has a word the book first uses after the bound ("The middle lodger spits"). At
the end the whole sentence is checked as before: what was shown stays, and a sentence then
held back has only its rest withheld (the ``Withheld`` item holds the rest).

On the evaluation set (tests/bench/bench_spoilers.py, streamed at 200 deltas a second) a
piece was shown first in 51 of the 421 leaks held by the lexical check (167 of their 4,629
words, 3.6 %; most an innocent start: "The family have | to take in three bearded
lodgers"), 16 of 442 (55 words, 1.1 %) with the test by meaning, while honest sentences show
27-33 % of their words before they end.

``Prefixes`` decides when to check and where to cut:

- only after whole words (a cut is a run of whitespace, so "**Windi**bank" is never split),
  and never inside a Markdown mark (``balanced``);
- ``lag`` words later than the check reads: the words after the cut are checked with it, so
  a name or a phrase of the book ("pack of cards") that begins in the piece and ends after it
  is read whole before its first word is shown (the figure of what still leaks, words shown
  from sentences then held back, is in tests/bench/bench_spoilers.py);
- at most every ``step`` words (``first`` for the first piece of a sentence) and never more
  often than every ``gap_s`` seconds, nor sooner than ``times`` the CPU time the last check
  took (a check costs 1-20 ms, most on a big book whose passages are not read yet: the
  checks of prefixes take at most a tenth of the time), or after ``slow_s`` seconds with at
  least one new word (a slow local model).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FIRST_WORDS = 3  # words checked before a sentence's first piece (plus the lag)
STEP_WORDS = 4  # new words before the next check
LAG_WORDS = 3  # words read by the check beyond what it lets out
GAP_S = 0.05  # at most one check of a sentence this often (the pane repaints every 50 ms)
SLOW_S = 0.3  # a slow stream: check after this long with any new word
BUDGET_TIMES = 10.0  # the next check waits this many times the last one's CPU (<= 10 % of it)

_WORD_THEN_SPACE = re.compile(r"\S+\s+")
_BULLET = re.compile(r"^\s*[*+-]\s", re.M)


def balanced(text: str) -> bool:
    """Whether ``text`` closes every Markdown mark it opens (emphasis, code, a link's text):
    a piece that ends inside one would show a stray mark before a held-back rest."""
    stars = _BULLET.sub("", text)
    return (
        text.count("`") % 2 == 0
        and stars.count("**") % 2 == 0
        and (stars.count("*") - 2 * stars.count("**")) % 2 == 0
        and text.count("[") <= text.count("]")
    )


@dataclass
class Prefixes:
    """Where the sentence being written may next be checked and cut (one per guard)."""

    first: int = FIRST_WORDS
    step: int = STEP_WORDS
    lag: int = LAG_WORDS
    gap_s: float = GAP_S
    slow_s: float = SLOW_S
    times: float = BUDGET_TIMES
    spent: float = 0.0  # CPU seconds the last check of a prefix took
    checked: int = 0  # words of the sentence the last check read
    at: float | None = None  # when the sentence began, or was last checked
    stalled: bool = False  # a prefix was held or doubtful: the rest waits for the end

    def reset(self, now: float | None) -> None:
        """A new sentence begins (``now``: when; None: when its first text comes)."""
        self.checked = 0
        self.at = now
        self.stalled = False

    def due(self, buffer: str, shown: int, now: float) -> tuple[int, int] | None:
        """(how far to check, how far to show) in ``buffer`` (the sentence so far, ``shown``
        characters of it out already), or None: not now."""
        if self.stalled or not buffer.strip():
            return None
        if self.at is None:
            self.at = now
        cuts = [m.end() for m in _WORD_THEN_SPACE.finditer(buffer)]
        words = len(cuts)
        if words <= self.lag or words <= self.checked:
            return None
        release = cuts[words - self.lag - 1]
        while release > shown and not balanced(buffer[:release]):
            release = max((c for c in cuts if c < release), default=0)
        if release <= shown:
            return None
        waited = now - self.at
        enough = words - self.checked >= (self.step if self.checked else self.first + self.lag)
        gap = max(self.gap_s, self.spent * self.times)  # a costly check: fewer of them
        if not (enough or waited >= self.slow_s) or (self.checked and waited < gap):
            return None
        self.checked, self.at = words, now
        return cuts[-1], release
