"""The spoiler check's semantic layer, lexically (issue 23): how well the pages read support a
sentence that tells something about the story, against how well the later pages do.

A sentence's content words are weighed by rarity (the rarer in English, the heavier). Its
rarest words look for the passages that best match it (BM25, one FTS5 query on each side of
the bound), and the check measures:

- ``read`` and ``later``: the share of the sentence (by weight) in the best single passage
  within the bound, and after it. A later passage that covers much more than any passage read
  holds the sentence back as unsupported (``SpoilerGuard.check``).
- ``window``: the same within the bound for a passage with its neighbours (a scene runs over
  more than one passage of the index).
- ``added``: the words the best later passage (with its neighbours) has that no passage read
  near the sentence has: what the sentence tells that the pages read do not.
- ``pairs_read``, ``pairs_later``: pairs of the sentence's words, each met before the bound,
  that passages read have together, or only later passages have together: a new combination
  of known words ("sister" and "job", "father" and "apple") is what a plain-word leak tells.

The passages the answer used, the question and the selection count as read on both sides.
A sentence is *doubtful* (``Support.doubtful``) when it tells what happens later or at the end
("in the end", "later", "eventually"), when the pages read cover it poorly, when it adds two
or more words that only later pages have (or one less common or distinctive word), or a new
combination of known words; a model may then verify it (``core.agent.spoiler_verify``). Only
the clear case (``Support.unsupported``) is held back without a model. The thresholds were
chosen on the evaluation set (tests/core/agent/spoiler_data/): with a model that verifies
right, about one sentence in four is verified.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from core.agent.spoiler_index import PLAIN_ZIPF, SpoilerIndex
from core.agent.spoiler_text import GENERAL_ZIPF, OUTCOME

LATER_MATCH = 0.5  # a later passage has at least this share of the sentence (by rarity) ...
SUPPORT_MARGIN = 0.2  # ... and this much more than any passage the reader has read
SEARCH_WORDS = 5  # the rarest content words of a sentence look for its passages
SUPPORT_PASSAGES = 4  # the passages on each side that best match a sentence
PAIR_PASSAGES = 8  # ... and the passages whose pairs of words are compared
DOUBT_WINDOW = 0.5  # a sentence the best passage read covers less than this is doubtful
DOUBT_ADDED = 2  # ... or one that adds this many words only later pages have
ADDED_ZIPF = 4.5  # ... or one such word less common than this
PAIR_SHARE = 0.3  # ... or whose pairs of known words are this often together only later
MAX_PAIR_STEMS = 8  # pairs among at most this many words of a sentence (the rarest)


def weight(stem: str) -> float:
    """How much a word says: the rarer in general English, the more."""
    return max(0.5, 6.5 - GENERAL_ZIPF.get(stem, 0.0))


@dataclass(frozen=True)
class Support:
    read: float
    later: float
    window: float
    added: tuple[str, ...]
    pairs_read: int
    pairs_later: int
    distinctive_added: bool
    future: bool = False  # the sentence tells what happens later or at the end
    outcome_read: bool = (
        False  # its outcome words (die, marry...) are all in the pages read near it
    )
    short: bool = False  # too few content words to hold it back (it may only be verified)

    def unsupported(self) -> bool:
        """Whether to hold the sentence back: a later passage tells it much better than any
        passage read."""
        return self.later >= LATER_MATCH and self.later - self.read >= SUPPORT_MARGIN

    def doubtful(self) -> bool:
        """Whether a model should verify the sentence (it is not clearly held back)."""
        return (
            self.future
            or self.window < DOUBT_WINDOW
            or len(self.added) >= DOUBT_ADDED
            or self.distinctive_added
            or any(GENERAL_ZIPF.get(s, 0.0) < ADDED_ZIPF for s in self.added)
            or (self.pairs_later >= 1 and self.pairs_later >= PAIR_SHARE * self.pairs_all)
        )

    @property
    def pairs_all(self) -> int:
        return self.pairs_read + self.pairs_later


def search_words(content: dict[str, str]) -> list[str]:
    """The rarest content words: they say most, and common ones match half the book (time)."""
    ordered = sorted(content, key=lambda s: GENERAL_ZIPF.get(s, 0.0))
    return [content[s] for s in ordered[:SEARCH_WORDS]]


def measure(
    index: SpoilerIndex,
    content: dict[str, str],
    read_to: int,
    support: frozenset[str],
    used: list[frozenset[str]] = [],  # noqa: B006 (never changed)
) -> Support:
    """``content``: stem → word of the sentence's content words; ``support``: stems that
    count as read everywhere (the question, the selection, the title); ``used``: the word
    stems of the passages the answer used, read like the passages found here."""
    total = sum(weight(s) for s in content) or 1.0

    def cover(passage: frozenset[str]) -> float:
        return sum(weight(s) for s in content if s in passage or s in support) / total

    words = search_words(content)
    read_ids = index.passage_ids(words, read_to, later=False, limit=PAIR_PASSAGES)
    later_ids = index.passage_ids(words, read_to, later=True, limit=PAIR_PASSAGES)
    stems = index.passage_stems(read_ids + later_ids)
    read_p = [stems.get(i, frozenset()) for i in read_ids] + used
    later_p = [stems.get(i, frozenset()) for i in later_ids]
    read = max(map(cover, read_p[:SUPPORT_PASSAGES] + used), default=0.0)
    later = max(map(cover, later_p[:SUPPORT_PASSAGES]), default=0.0)

    read_windows = index.windows(read_ids[:SUPPORT_PASSAGES], read_to, later=False) + used
    later_windows = index.windows(later_ids[:SUPPORT_PASSAGES], read_to, later=True)
    window = max(map(cover, read_windows), default=0.0)
    seen = frozenset().union(*read_windows) if read_windows else frozenset()
    best_later = max(later_windows, key=cover, default=frozenset())
    added = tuple(s for s in content if s in best_later and s not in seen and s not in support)

    # pairs of words the pages read near the sentence have, each (a word they lack is in
    # ``added`` already)
    known = sorted(
        (
            s
            for s in content
            if index.first_page.get(s, read_to + 1) <= read_to
            and GENERAL_ZIPF.get(s, 0.0) < PLAIN_ZIPF
            and (s in seen or any(s in p for p in read_p))
        ),
        key=lambda s: GENERAL_ZIPF.get(s, 0.0),
    )[:MAX_PAIR_STEMS]
    pairs_read = pairs_later = 0
    for a, b in itertools.combinations(known, 2):
        if any(a in p and b in p for p in read_p) or any(a in p and b in p for p in read_windows):
            pairs_read += 1
        elif any(a in p and b in p for p in later_p):
            pairs_later += 1
    near = [seen, *read_p[:SUPPORT_PASSAGES]]
    outcomes = [s for s, word in content.items() if OUTCOME.fullmatch(word)]
    return Support(
        read,
        later,
        window,
        added,
        pairs_read,
        pairs_later,
        any(s in index.distinctive for s in added),
        outcome_read=bool(outcomes) and all(any(s in p for p in near) for s in outcomes),
    )
