"""Notice an answer that repeats itself while it streams.

Small local models can fall into a loop: one sentence (or a few) over and over until the
length limit, minutes of the reader waiting for nothing. ``RepetitionCheck`` reads the
answer as it arrives and says where to cut it once it is clearly looping:

* a **repeating window of words**: the last words are the same block of ``period`` words
  at least ``MIN_COPIES`` times in a row, covering at least ``MIN_LOOP_WORDS`` words (so a
  short phrase said twice or three times — "Off with her head! Off with her head!" — is
  not a loop, while "very very very …" thirty times is);
* the **same sentence or line** (at least ``MIN_SENTENCE_WORDS`` words) for the
  ``MIN_COPIES``-th time anywhere in the answer, its copies adding up to at least
  ``MIN_LOOP_WORDS_SENTENCES`` words (a loop that varies between copies; a song's refrain
  quoted from the book — "Soup of the evening, beautiful Soup!" four times — is not one).

The cut keeps the text before the loop plus one copy. Words are compared in lower case,
without punctuation or numbers (a loop that numbers its copies is still a loop).
"""

from __future__ import annotations

import re

MIN_COPIES = 3
MIN_LOOP_WORDS = 30
MIN_SENTENCE_WORDS = 5
MIN_LOOP_WORDS_SENTENCES = 40
MAX_PERIOD = 80  # words in one repeated block, at most
NOTE = "\n\n*(Stopped: the model was repeating itself.)*"
NOTICE = "Stopped: the model was repeating itself."
STOP_REASON = "repetition"  # the run's stop_reason when its answer was cut

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*", re.UNICODE)
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s)|\n")


class RepetitionCheck:
    """Fed one answer's text as it streams; ``cut`` is set once the answer loops."""

    def __init__(self) -> None:
        self.text = ""
        self.cut: int | None = None  # keep ``text[:cut]`` once the answer loops
        self._words: list[str] = []
        self._ends: list[int] = []  # where each word ends in ``text``
        self._parsed = 0  # ``text`` is split into words up to here
        self._sentence_start = 0
        self._sentences: dict[tuple[str, ...], list[int]] = {}  # words → start offsets

    def feed(self, text: str) -> bool:
        """Add streamed text; True when the answer is looping (then ``cut`` is set)."""
        if self.cut is not None:
            return True
        self.text += text
        # only whole words: the last one may still be growing
        end = self._parsed
        for match in _WORD.finditer(self.text, self._parsed):
            if match.end() == len(self.text):
                break
            self._words.append(match.group().lower())
            self._ends.append(match.end())
            end = match.end()
            if self._loop_at_tail():
                return True
        self._parsed = end
        return self._sentence_loop()

    # a repeating window of words ---------------------------------------------------------

    def _loop_at_tail(self) -> bool:
        words = self._words
        n = len(words)
        for period in range(1, min(MAX_PERIOD, n // MIN_COPIES) + 1):
            if words[n - 1] != words[n - 1 - period]:
                continue  # the common case: one comparison per period
            need = max(period * MIN_COPIES, MIN_LOOP_WORDS)
            if need > n or any(words[i] != words[i - period] for i in range(n - need + period, n)):
                continue
            start = n - need
            while start > 0 and words[start - 1] == words[start - 1 + period]:
                start -= 1  # back to where the loop began
            self.cut = self._after_word(start + period - 1)
            return True
        return False

    def _after_word(self, index: int) -> int:
        """The end of word ``index`` with the punctuation that closes it."""
        pos = self._ends[index]
        while (
            pos < len(self.text) and not self.text[pos].isspace() and not self.text[pos].isalnum()
        ):
            pos += 1
        return pos

    # the same sentence again -------------------------------------------------------------

    def _sentence_loop(self) -> bool:
        for match in _SENTENCE_END.finditer(self.text, self._sentence_start):
            start, self._sentence_start = self._sentence_start, match.end()
            key = tuple(w.lower() for w in _WORD.findall(self.text[start : match.end()]))
            if len(key) < MIN_SENTENCE_WORDS:
                continue
            seen = self._sentences.setdefault(key, [])
            seen.append(start)
            if len(seen) >= MIN_COPIES and len(seen) * len(key) >= MIN_LOOP_WORDS_SENTENCES:
                self.cut = len(self.text[: seen[1]].rstrip())
                return True
        return False
