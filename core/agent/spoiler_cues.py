"""Cues in a sentence's own words for the spoiler check's test by meaning (issue 23, fifth
session): what lowers or raises the bar for holding a story sentence back with no model.

A plain-word leak often tells an *outcome*: someone dies, is buried, mourned, married
("Gregor dies quietly that night", "the family mourn the little boy who has died"). The words
are common, so the lexical layer cannot place them, and the test by meaning alone needs a later
chunk clearly closer than anything read (``spoiler_semantic.MARGINS``). A sentence with an
outcome word is doubtful (like one that says "in the end"), and any later chunk closer to it
than everything read holds it (``OUTCOME_MARGIN``); one that tells what happens later ("in the
end", "finally") needs a smaller margin (``FUTURE_MARGIN``) unless the end it names is that of
a chapter or part (the reader's own bound: "at the end of chapter III she is left alone").

A question about the ending ("Does Gregor ever turn back into a man?", "what will become of
him") does not count as read *by meaning* (``asks_ahead``): an answer that tells the ending is
close in meaning to the question that asked for it, and would pass as "read". Its words still
count as read for the lexical layer.

Two cues let a sentence through (the false alarms of the evaluation set, read one by one):

- ``scene_read``: the pages read cover the sentence well (its best scene within the bound has
  ``SCENE_READ`` of its words by rarity, and no later passage has more): unless it tells an
  outcome or what happens later, the test by meaning does not hold it, whatever a later
  chunk's vector says ("His mother sends his sister for
  the doctor and his father sends the maid for a locksmith", Metamorphosis part I).
- ``weak_contradicted``: a sentence held only on weak evidence (a motif, a phrase, a pair of
  ordinary words: ``SpoilerTerm.weak``) that a passage read covers at least as well as any
  later one (``WEAK_READ`` or more) and that no later chunk is closer to in meaning is shown
  ("The thieves were digging a tunnel from the cellar to the bank", read to the end of The
  Red-Headed League). It stays doubtful: a connected model still decides.

Chosen on the tune files (the issue-16 files and ``cases.txt``), judged on ``cases_new.txt``
and ``cases_sem.txt``: tests/bench/bench_spoiler_cues.py prints both, before and after.
"""

from __future__ import annotations

import re

from core.agent.spoiler_support import Support
from core.agent.spoiler_text import OUTCOME

OUTCOME_MARGIN = 0.0  # an outcome sentence: any later chunk closer than everything read holds it
FUTURE_MARGIN = 0.03  # a sentence that tells what happens later or at the end
SCENE_READ = 0.7  # a scene read covers this much of a sentence: the meaning test never holds it
WEAK_READ = 0.5  # weak evidence is contradicted by a passage read covering this much

FUTURE = re.compile(
    r"\b(?:in|at|by|towards?) the (?:very )?end\b|\blater\b|\bfinally\b|\beventually\b|"
    r"\bafterwards?\b|\bever after\b|\bturns? out\b|\bends? up\b|\bin the last\b",
    re.I,
)
# "at the end of chapter III", "by the end of part one": the end of a part the reader has read
SECTION_END = re.compile(
    r"\b(?:in|at|by|towards?) the (?:very )?end of (?:the )?(?:\w+ )?"
    r"(?:chapter|part|stave|section)\b",
    re.I,
)


# a question about what comes: "what will become of him", "in the end", "does she ever ..."
ASKS_AHEAD = re.compile(
    r"\b(?:in the end|eventually|at last|finally|become of|becomes of|ends? up|end(?:s|ing)?\b"
    r"|go(?:es)? on|happens? (?:next|later|after)|ever\b|later\b|afterwards)",
    re.I,
)


def asks_ahead(question: str) -> bool:
    """Whether the reader asks about what comes after (the ending, an outcome)."""
    return ASKS_AHEAD.search(question) is not None


def outcome(shown: str) -> bool:
    """Whether the sentence tells an outcome (death, burial, marriage) in plain words."""
    return OUTCOME.search(shown) is not None


def future(shown: str) -> bool:
    """Whether the sentence tells what happens later, not counting the end of a chapter."""
    return FUTURE.search(SECTION_END.sub(" ", shown)) is not None


def margin(shown: str, base: float, support: Support | None = None) -> float:
    """The meaning test's margin for this sentence: the model's (``base``), or less for an
    outcome or a sentence that tells what happens later. An outcome the pages read near the
    sentence already tell (``Support.outcome_read``: "Marley was dead" on the first page, a
    wedding the reader has read) is no cue: the margin stays the model's."""
    if outcome(shown) and not (support is not None and support.outcome_read):
        return min(base, OUTCOME_MARGIN)
    if future(shown):
        return min(base, FUTURE_MARGIN)
    return base


def scene_read(support: Support | None) -> bool:
    """Whether a scene read covers the sentence well and no later passage covers more."""
    return support is not None and support.window >= SCENE_READ and support.read >= support.later


def weak_contradicted(support: Support | None, gap: float | None) -> bool:
    """Whether weak evidence against a sentence is contradicted: a passage read covers it as
    well as any later one, and no later chunk is closer in meaning (``gap`` at most 0)."""
    return (
        support is not None
        and gap is not None
        and support.read >= WEAK_READ
        and support.read > support.later
        and gap <= 0.0
    )
