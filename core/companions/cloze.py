"""Flashcards that test something, made without a model from what the reader has read:

- a *cloze* card per highlight and per note: the passage with its rarest words blanked (the
  words general English uses least, by the answer check's frequency list: "entailed",
  "Netherfield", not "the" or "house"), the words on the back with the passage and its page;
- a *who-said-it* card per telling line of dialogue the book attributes to a person of the
  X-Ray ("“…,” said Elizabeth"): the line on the front, the speaker on the back.

Both only from pages 1..``read_to`` (``cards.cards`` passes the bound).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

BLANK = "_____"
RARE_ZIPF = 5.0  # words rarer than this in English (Zipf, by stem) may be blanked
MAX_BLANKS = 3
WHO_SAID_CARDS = 20  # at most this many who-said-it cards per book
LINE_WORDS = (6, 45)  # a line of dialogue this long makes a card
_WORD = re.compile(r"[A-Za-z][A-Za-z’'-]*[A-Za-z]")
_SAID = (
    "said cried replied answered asked added continued exclaimed returned observed whispered "
    "remarked rejoined"
)
_LINE = re.compile(
    r"“([^”]{20,400}?)[,!?]?”\s*(?:" + "|".join(_SAID.split()) + r")\s+"
    r"((?:Mr\.|Mrs\.|Miss|Lady|Sir|Lord|Dr\.|Colonel|Captain)?\s*[A-Z][\w’'-]+"
    r"(?:\s+[A-Z][\w’'-]+)?)"
    r"|“([^”]{20,400}?)[,!?]?”\s*(?:" + "|".join(_SAID.split()) + r")\s+(he|she)\b"
)


def rarity(words: Iterable[str]) -> dict[str, float]:
    """Zipf frequency in general English of each word (0 for words it does not know)."""
    from core.agent.spoilers import GENERAL_ZIPF, SpoilerIndex

    lower = {w.lower() for w in words}
    stems = SpoilerIndex(0, 0, {}, {}, frozenset()).stems(lower)
    return {w: GENERAL_ZIPF.get(stems.get(w, w), 0.0) for w in lower}


def cloze(text: str) -> tuple[str, tuple[str, ...]]:
    """``text`` with its rarest words blanked, and the words blanked (in order); no blanks
    when the passage has no rare word of four letters or more."""
    # lower-case words only: a name is no word to learn ("Alice", "Netherfield")
    words = [m for m in _WORD.finditer(text) if len(m.group(0)) >= 4 and m.group(0).islower()]
    if not words:
        return text, ()
    zipf = rarity(m.group(0) for m in words)
    ranked = sorted({m.group(0).lower() for m in words}, key=lambda w: (zipf[w], -len(w), w))
    wanted = max(1, min(MAX_BLANKS, len(words) // 10))
    chosen = {w for w in ranked[:wanted] if zipf[w] < RARE_ZIPF}
    if not chosen:
        return text, ()
    out, answers, at = [], [], 0
    for m in words:
        if m.group(0).lower() in chosen:
            out += [text[at : m.start()], BLANK]
            answers.append(m.group(0))
            at = m.end()
    out.append(text[at:])
    return "".join(out), tuple(answers)


def who_said(
    pages: Sequence[tuple[int, str]], people: dict[str, str]
) -> list[tuple[int, str, str, str]]:
    """(page, line, speaker's entry name, key) for lines of dialogue in ``pages`` that the
    book attributes by name to one of ``people`` (a form as written → the entry's name), at
    most ``WHO_SAID_CARDS``, spread over the pages and the speakers."""
    found: list[tuple[int, str, str, str]] = []
    for page, text in pages:
        for m in _LINE.finditer(text):
            line, who = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), "")
            speaker = people.get(" ".join(who.split()))
            if not speaker:
                continue
            n = len(line.split())
            if not LINE_WORDS[0] <= n <= LINE_WORDS[1] or speaker.split()[-1] in line:
                continue  # too short or too long, or the line names its own speaker
            key = hashlib.sha1(f"{page}:{line}".encode()).hexdigest()[:12]
            found.append((page, line.strip(), speaker, key))
    if len(found) <= WHO_SAID_CARDS:
        return found
    step = len(found) / WHO_SAID_CARDS
    return [found[int(i * step)] for i in range(WHO_SAID_CARDS)]
