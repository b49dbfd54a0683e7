"""The answer check (issue 16): hide sentences that name what the reader cannot know yet.

The tools never read past the reader's bound, but a model may know a famous book from its
training and write the ending anyway. This module checks the answer itself, sentence by sentence
as it streams, before a sentence is shown: a sentence is hidden when it uses a word that is
*distinctive in this book* and that the book first uses only after ``read_to`` (the last page
read), unless the reader wrote it in the question or the selection.

A word counts when it is one of:

- a name: the book writes it with a capital letter (nearly) every time ("Queen", "Grete");
- a rare word: used less than about once per million words in general English ("hookah");
- a key word of this book: used here over 15 times more often than in general English and at
  least three times ("Hatter", "violin");
- a motif: a less common word (under about 30 per million in English) the book uses at least
  three times ("mushroom", "pepper").

A phrase counts too: two words or "X of Y" ("tea-party", "pack of cards"), each met before the
bound, that the book has together only after it, in at least three passages (a recurring name
or place). Two less common words that are each new after the bound count together when the book has
them within a few words of each other (one FTS5 NEAR query on the search index): a sentence
that paraphrases a later passage shares several of its words ("sewing ... underwear").

Common English words never count alone, whatever the book does with them ("therefore" first
used late in *Alice* hides nothing). The general frequencies are in
``core.agent.spoiler_words`` (Google Books Ngram counts, see there). Words are compared by their
SQLite FTS5 porter stem, the same stemming the search index uses, so "lodgers" matches
"lodger". Front matter does not count as read (issue 23): text that lists chapter titles before
the chapters themselves (a table of contents), a page headed "List of Illustrations",
"Contents" or "Index", and near the start a page that is only a list of short lines (a title
page, a list of plates): it names what is coming, it does not tell it. The book's title and
author are always known.

The check reads what the reader will see (``visible_text``): Markdown marks and links
rendered to their text, HTML entities decoded, NFKC, format characters (zero-width spaces and
joiners, soft hyphens, direction marks) and combining accents dropped, a right-to-left
override read in its shown order, look-alike letters folded to Latin (``spoiler_fold``: Latin
letters in disguise from Unicode's names; Cyrillic, Greek, Armenian, Lisu look-alikes). A
page label past the bound ("[p. 300]") is a term of its own. Phrases are never matched across
the model's punctuation ("The answer: Holmes" is no phrase of the book).

The semantic layer (issue 23, ``core.agent.spoiler_support``): a sentence that tells something
about the story (it names something of this book, or tells what someone does) and has enough
content words must be supported by what the reader has read. Lexically: the passages after
the bound that best match it (BM25) must not cover much more of its words (weighted by rarity)
than the passages within the bound do: those the check finds itself and those the answer used
(the tools' passages count as passages read, whatever the strategy sent the model). The
question and the selection count everywhere. An unsupported sentence is held back with its
own reason ("unsupported"), apart from the later-name notice.

Some decisions are *doubtful* (``Segment.doubtful``): a story sentence the pages read cover
poorly, that adds words (or a distinctive word) only later pages have, or combines known words
that only later pages have together; and a sentence held only for weak evidence (a motif, a
phrase, a pair of ordinary words); and a sentence shown that the later pages tell better,
lexically and by meaning (``VERIFY_GAP``: it changes nothing without a model). A sentence the
lexical test holds as unsupported is shown, doubtful, when the pages read are clearly closer
to it in meaning (``MEANING_VETO``). With a model connected, a short verification call decides
those (``core.agent.spoiler_verify``); with none, a doubtful story sentence is held when the
book's later chunks are clearly closer to it in meaning than the pages read
(``core.agent.spoiler_semantic``, on the chunk vectors search by meaning stores), else the
lexical decision stands. The sentence's own cues set the margin of that test
(``core.agent.spoiler_cues``: an outcome word or "in the end" lowers it; a question about the
ending does not count as read by meaning; a scene read that covers the sentence, or weak
evidence the pages read contradict, lets it through). A leak told in plain words still passes
when none of these tells it apart; the figures by kind, with and without a verifying model, are in
tests/bench/bench_spoilers.py and (before/after the test by meaning)
tests/bench/bench_spoiler_meaning.py.
The system prompt's rule (``prompts/spoiler_rule.md``) is the first line of defence; this is
the second.

Modules: ``spoiler_text`` (what the reader sees, stems, sentence ends), ``spoiler_stats`` (a
book's counts), ``spoiler_index`` (distinctive words, the FTS5 look-ups), ``spoiler_support``
(the semantic layer), ``spoiler_semantic`` (its test by meaning), ``spoiler_cues`` (the
sentence's own cues for it), ``spoiler_verify`` (the
model's verification); this one: the guard.

Use: build one ``SpoilerIndex`` per book (``SpoilerIndexCache`` keeps them), one
``SpoilerGuard`` per answer; ``feed`` the streamed text (and show its ``prefix``), then
``flush`` at the end. The pieces and the segments' rests put together are the text fed in.
"""

from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass

from core.agent import spoiler_cues
from core.agent.spoiler_disguise import Disguises
from core.agent.spoiler_index import (
    MIN_KNOWN_FOR_PAIRS,
    MIN_LENGTH,
    SpoilerIndex,
    SpoilerIndexCache,
)
from core.agent.spoiler_prefix import Prefixes
from core.agent.spoiler_semantic import MEANINGS, BookMeaning, Meaning
from core.agent.spoiler_stats import STATS_VERSION, BookStats, prepare_book
from core.agent.spoiler_support import Support, measure, search_words
from core.agent.spoiler_terms import ReaderWords, SpoilerTerm, later_terms
from core.agent.spoiler_text import (
    _EXTRA_COMMON,
    _WORD,
    GENERAL_ZIPF,
    boundaries,
    last_space,
    visible_text,
)

__all__ = [
    "STATS_VERSION",
    "BookStats",
    "Segment",
    "SpoilerGuard",
    "SpoilerIndex",
    "SpoilerIndexCache",
    "SpoilerTerm",
    "prepare_book",
    "visible_text",
]

# The semantic layer: a sentence about the story must be supported by what the reader has read.
FUNCTION_ZIPF = 6.0  # words this common say nothing about the story ("the", "was", "he")
MIN_STORY_WORDS = 5  # a sentence with fewer content words is not checked for support
# A sentence that tells what happens later or at the end is doubtful (a model may verify it),
# with fewer content words too: "In the end Gregor dies."
_FUTURE = re.compile(
    r"\b(?:in|at|by|towards?) the (?:very )?end\b|\blater\b|\bfinally\b|\beventually\b|"
    r"\bafterwards?\b|\bever after\b|\bturns? out\b|\bends? up\b|\bin the last\b",
    re.I,
)
MIN_FUTURE_WORDS = 2
# A sentence that scopes itself to the pages read ("so far", "not yet") is never held by the
# test by meaning (unless it also tells what happens later): it tells what was read.
_SO_FAR = re.compile(
    r"\bso far\b(?! (?:away|off|from|beyond|as)\b)|\buntil now\b|\bup to (?:now|here)\b|"
    r"\b(?:not|n't|never|cannot)\s+(?:\w+\s+)?yet\b",
    re.I,
)
# A sentence shown that a model should still verify (issue 23, sixth session): the later pages
# cover it better than the pages read, or are closer to it in meaning by this much (chosen on
# the tune files: tests/bench/bench_spoiler_gaps.py). With no model this changes nothing shown.
VERIFY_GAP = 0.05
# A sentence the lexical test holds as unsupported is shown (and verified, with a model) when
# the pages read are closer to it in meaning than the later ones by this much.
MEANING_VETO = 0.05
ASK_AGAIN_S = 0.5  # while a book's vectors load, a guard asks for them at most this often
_STORY_PRONOUNS = frozenset("he she they his her him them their hers".split())


@dataclass(frozen=True)
class Segment:
    """A sentence of the answer (or the tail). ``hidden`` segments keep their full text."""

    text: str
    hidden: bool
    terms: tuple[SpoilerTerm, ...] = ()
    kind: str = "later"  # why it is hidden: "later" (names what comes later) or "unsupported"
    doubtful: bool = False  # a model may overrule the decision (``SpoilerGuard.check``)
    shown: int = 0  # leading characters the reader was shown while it was written (``prefix``)

    @property
    def rest(self) -> str:
        """What the reader has not seen of it yet: shown, or held back behind the marker."""
        return self.text[self.shown :]


class SpoilerGuard:
    """Checks one answer as it streams. Not thread-safe: one guard per answer."""

    meaning_exemptions = True  # a sentence scoped to the pages read passes the meaning test
    cues = True  # the sentence's own cues (``core.agent.spoiler_cues``); off: as before them
    verify_wide = True  # shown sentences the later pages tell better go to a model too
    disguises = True  # later names in disguise (``core.agent.spoiler_disguise``); off: as before
    prefixes = True  # a sentence may go out in checked pieces while written (``prefix``)

    def __init__(
        self,
        index: SpoilerIndex,
        *,
        read_to: int | None,
        question: str,
        selection: str = "",
        selection_page: int | None = None,
        semantic: bool = True,
        meaning: BookMeaning | None = MEANINGS,
    ) -> None:
        """``read_to`` is the last page read (``Book.spoiler_bound``); ``None`` (the reader
        lifted the bound or finished the book) lets everything through. ``meaning``: where
        the book's vectors come from for the test by meaning (``core.agent.spoiler_semantic``;
        None: lexical only)."""
        if read_to is not None and read_to < 0:
            raise ValueError(f"read_to must be a page number (0 or more), not {read_to}.")
        self.index = index
        self.read_to = read_to
        question, selection = visible_text(question), visible_text(selection)
        asked = [w.lower() for w in _WORD.findall(f"{question}\n{selection}")]
        asked_stems = index.stems(asked)
        self._known_pairs = {
            (asked_stems[a], asked_stems[b])
            for i, a in enumerate(asked)
            for b in asked[i + 1 : i + 3]
        }
        self._known = set(
            index.stems(w.lower() for w in _WORD.findall(f"{question}\n{selection}")).values()
        ) | set(index.known)
        self._support = frozenset(self._known)  # the reader's own words count everywhere
        self._used: list[frozenset[str]] = []  # passages the answer used: read, like the pages
        # the page of a selection the reader supplied counts as read for this answer's labels
        self._selection_page = selection_page
        self.semantic = semantic
        self._meaning = meaning if semantic and read_to is not None else None
        if self._meaning is not None and index.db is not None:
            self._meaning.request(index.db, index.book_id)  # in the background; lexical till then
        self._ready: Meaning | None = None
        self._asked = -ASK_AGAIN_S  # when the book's vectors were last asked for
        self._read = [t for t in (question, selection) if t.strip()]  # read, for the meaning test
        # a question about how the story ends is not read, by meaning (``spoiler_cues.asks_ahead``)
        self._read_ahead = [t for t in (selection,) if t.strip()]
        self._asks_ahead = spoiler_cues.asks_ahead(question)
        self._passages: list[str] = []  # the passages the answer used (the meaning test)
        self._buffer = ""
        self._shown = 0  # characters of the buffer shown already (``prefix``)
        self._prefixes = Prefixes()
        self._disguises = Disguises(self)
        self._pairs = read_to is not None and (
            sum(1 for page in index.first_page.values() if page <= read_to) >= MIN_KNOWN_FOR_PAIRS
        )
        self._words = ReaderWords(
            index, read_to, selection_page, self._known, self._known_pairs, self._pairs
        )

    @property
    def reader_words(self) -> ReaderWords:
        """What this answer's reader knows (for ``later_terms``)."""
        return self._words

    @property
    def pending(self) -> str:
        """The text held back: the sentence being written (what was not shown of it)."""
        return self._buffer[self._shown :]

    def feed(self, text: str) -> list[Segment]:
        """Add streamed text; return the sentences that are complete, checked."""
        if not text:
            return []
        resume = len(self._buffer)
        while resume > 0 and self._buffer[resume - 1].isspace():
            resume -= 1  # a boundary is decided by the whole run of spaces after a sentence
        self._buffer += text
        segments: list[Segment] = []
        start = 0
        for end in boundaries(self._buffer, resume):
            segments.append(self._checked(self._buffer[start:end]))
            start = end
        self._buffer = self._buffer[start:]
        if start:
            self._prefixes.reset(None)
        return segments

    def release(self, limit: int = 200) -> list[Segment]:
        """When the sentence being written grows past ``limit`` characters (a list without
        full stops, a run-on answer), check and return it up to its last space, so the
        stream never stalls behind one endless "sentence"."""
        if len(self._buffer) <= limit:
            return []
        cut = last_space(self._buffer, limit)
        if cut <= 0:  # no space yet: never cut a word (a name) in two, wait for one
            return []
        piece, self._buffer = self._buffer[:cut], self._buffer[cut:]
        self._prefixes.reset(None)
        return [self._checked(piece)]

    def flush(self) -> list[Segment]:
        """The end of the answer: check and return what is left."""
        rest, self._buffer = self._buffer, ""
        self._prefixes.reset(None)
        return [self._checked(rest)] if rest else []

    def prefix(self, now: float | None = None) -> Segment | None:
        """The next piece of the sentence being written, once the sentence so far passes the
        check neither held nor doubtful (``spoiler_prefix``); else None."""
        if not self.prefixes:
            return None
        found = self._prefixes.due(
            self._buffer, self._shown, time.monotonic() if now is None else now
        )
        if found is None:
            return None
        upto, release = found
        started = time.thread_time()
        segment = self.check(self._buffer[:upto], whole=False)
        self._prefixes.spent = time.thread_time() - started
        if segment.hidden or segment.doubtful:
            self._prefixes.stalled = True
            return None
        piece = self._buffer[self._shown : release]
        self._shown = release
        return Segment(piece, False)

    def _checked(self, sentence: str) -> Segment:
        """A sentence that ended, checked whole; ``shown``: how much of it is out already."""
        segment = self.check(sentence)
        shown = min(self._shown, len(sentence))
        self._shown -= shown
        return dataclasses.replace(segment, shown=shown) if shown else segment

    def add_support(self, text: str) -> None:
        """Text the answer may draw on (a passage the tools returned within the bound): it
        counts as a passage read, like those the check finds itself."""
        shown = visible_text(text)
        self._passages.append(shown)
        words = _WORD.findall(shown)
        self._used.append(frozenset(self.index.stems(w.lower() for w in words).values()))

    def check(self, sentence: str, *, whole: bool = True) -> Segment:
        """One sentence, checked on its own: first for what comes later, then for support.
        ``doubtful``: a model may overrule the decision (a sentence held only for words the
        book uses as motifs, phrases or pairs may be shown; a story sentence the pages read
        do not clearly support may be held). ``whole=False``: the sentence so far (``prefix``),
        checked more strictly: tested for support however few its words (``support``)."""
        terms = self.spoiler_terms(sentence)
        text = sentence  # the sentence as the reader reads it, for the semantic layer
        if not terms and self.disguises:
            # a later name in disguise: held, and a model may verify it (never shown silently)
            hidden = self._disguises.terms(sentence)
            if whole:  # (a prefix's words: the whole sentence comes later)
                self._disguises.remember(sentence)
            if hidden:
                return Segment(sentence, True, hidden, doubtful=True)
            text = self._disguises.reading(sentence)
        elif self.disguises and whole:
            self._disguises.remember(sentence)  # a name split across sentences
        if terms:
            weak = all(t.weak for t in terms)
            if weak and self.cues and self.semantic and self._weak_contradicted(sentence):
                return Segment(sentence, False, doubtful=True)  # a model may still hold it
            return Segment(sentence, True, terms, doubtful=weak)
        if not self.semantic:
            return Segment(sentence, False)
        return dataclasses.replace(self._supported(text, whole), text=sentence)

    def _supported(self, sentence: str, whole: bool = True) -> Segment:
        """The semantic layer's decision on a sentence with no later word."""
        support = self.support(sentence, whole)
        if support is None:
            return Segment(sentence, False, doubtful=self._worth_verifying(sentence, None))
        if support.unsupported() and not support.short:
            found = self._gap(sentence) if self.verify_wide else None
            if found is not None and found[0] < -MEANING_VETO:
                # the later pages share more of its words, but the pages read are clearly
                # closer in meaning ("Scrooge is a greedy old man who hates Christmas": "greedy"
                # is first on p. 40): shown; a model may still hold it
                return Segment(sentence, False, doubtful=True)
            return Segment(sentence, True, (), "unsupported")
        doubtful = support.doubtful()
        if doubtful and self.later_in_meaning(sentence, support):
            return Segment(sentence, True, (), "unsupported", doubtful=True)
        return Segment(
            sentence, False, doubtful=doubtful or self._worth_verifying(sentence, support)
        )

    def _worth_verifying(self, sentence: str, support: Support | None) -> bool:
        """Whether a sentence shown (the check found no reason to hold it) should still go to
        a model's verification: the best later passages cover it better than the best passages
        read (and the pages read are not clearly closer in meaning), or the later pages are
        closer to it in meaning (by ``VERIFY_GAP``). A plain-word leak ("The family take in
        paying guests") often looks like this and nothing more. With no model connected,
        nothing changes for the reader; while the book's vectors load, nothing is added."""
        if not self.verify_wide or self.read_to is None or self.read_to >= self.index.page_count:
            return False
        if support is None and len(self._content(sentence)) < MIN_FUTURE_WORDS:
            return False  # "Yes.", "In short:": nothing to verify
        found = self._gap(sentence)
        if found is None:
            return False  # the book's vectors are not ready: as before
        if support is not None and support.later > support.read:
            return found[0] > -VERIFY_GAP  # ... unless the pages read are closer in meaning
        return found[0] > VERIFY_GAP

    def later_in_meaning(self, sentence: str, support: Support | None = None) -> bool:
        """Whether the pages after the bound explain ``sentence`` clearly better, by meaning,
        than the pages read, the question, the selection and the passages the answer used
        (``core.agent.spoiler_semantic``); False while the book's vectors are not ready.
        ``support``: the sentence's lexical support, when known (a sentence a scene read
        covers well is not held: ``spoiler_cues.scene_read``)."""
        found = self._gap(sentence)
        if found is None:
            return False
        gap, base = found
        shown = visible_text(sentence)
        if self.cues:
            lowered = spoiler_cues.margin(shown, base, support)
            if lowered == base and spoiler_cues.scene_read(support):
                return False  # (a sentence that tells an outcome or the end is still tested)
            base = lowered
        if gap <= base:
            return False
        # a sentence that says itself it tells only what was read ("so far") is not held
        scoped = _SO_FAR.search(shown) is not None and _FUTURE.search(shown) is None
        return not (self.meaning_exemptions and scoped)

    def _gap(self, sentence: str) -> tuple[float, float] | None:
        """The meaning test's gap for ``sentence`` and the model's margin; None when the
        book's vectors are not ready (or the sentence has no word the model knows)."""
        if self._meaning is None or self.read_to is None:
            return None
        meaning = self._ready
        if meaning is None:
            now = time.monotonic()
            if now - self._asked < ASK_AGAIN_S:
                return None  # not ready a moment ago: no look-up per sentence meanwhile
            self._asked = now
            meaning = self._meaning.get(self.index.db, self.index.book_id)
            if meaning is None:
                return None
            self._ready = meaning
        read = self._read_ahead if self.cues and self._asks_ahead else self._read
        gap = meaning.gap(visible_text(sentence), self.read_to, read, self._passages)
        return None if gap is None else (gap, meaning.margin)

    def _weak_contradicted(self, sentence: str) -> bool:
        """Whether a sentence held only on weak evidence is contradicted by the pages read,
        in meaning and lexically (``spoiler_cues.weak_contradicted``). The meaning first: it
        is cheap, and without the book's vectors the rule does not apply (no FTS look-ups)."""
        found = self._gap(sentence)
        if found is None or found[0] > 0.0:
            return False
        return spoiler_cues.weak_contradicted(self.support(sentence), found[0])

    def support_passages(self, sentence: str, limit: int = 3) -> list[str]:
        """The text of the passages within the bound that best match ``sentence``: what a
        verification call is shown."""
        index = self.index
        if self.read_to is None or index.db is None:
            return []
        content = self._content(sentence)
        if not content:
            return []
        ids = index.passage_ids(search_words(content), self.read_to, later=False, limit=limit)
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = dict(
            index.db.execute_sql(
                f"SELECT id, text FROM chunk_text WHERE id IN ({marks})", ids
            ).fetchall()
        )
        return [str(rows[i]) for i in ids if i in rows]

    def _content(self, sentence: str) -> dict[str, str]:
        """Stem → word of the sentence's content words (no function words)."""
        words = [w.lower() for w in _WORD.findall(visible_text(sentence))]
        stems = self.index.stems(words)
        return {
            stems[w]: w
            for w in words
            if len(w) >= MIN_LENGTH
            and not w.isdigit()
            and w not in _EXTRA_COMMON
            and GENERAL_ZIPF.get(stems[w], 0.0) < FUNCTION_ZIPF
        }

    def support(self, sentence: str, whole: bool = True) -> Support | None:
        """How well what the reader has read supports a sentence that tells something about
        the story (it names something of this book, or tells what someone does), against how
        well the later pages do (``core.agent.spoiler_support``). The passages the answer
        used, the question and the selection count as read. ``None``: not a sentence to
        check (no bound, too few content words, not about the story). ``whole=False``: a
        sentence so far, tested with as few words as a sentence telling the future, and when
        it has a word first used after the bound."""
        index = self.index
        if self.read_to is None or self.read_to >= index.page_count:
            return None
        shown = visible_text(sentence)
        words = [w.lower() for w in _WORD.findall(shown)]
        content = self._content(sentence)
        future = _FUTURE.search(shown) is not None or (self.cues and spoiler_cues.outcome(shown))
        if len(content) < (MIN_FUTURE_WORDS if future or not whole else MIN_STORY_WORDS):
            return None
        first = index.first_page
        story = any(w in _STORY_PRONOUNS for w in words) or any(
            s in index.distinctive and first.get(s) is not None for s in content
        )  # a prefix: also a word the book has only after the bound (even a common one)
        story = story or (not whole and any(first.get(s, 0) > self.read_to for s in content))
        if not story and not future:
            return None
        found = measure(index, content, self.read_to, self._support, self._used)
        short = whole and len(content) < MIN_STORY_WORDS
        return dataclasses.replace(found, future=future, short=short)

    def spoiler_terms(self, sentence: str) -> tuple[SpoilerTerm, ...]:
        """The words of ``sentence`` the reader cannot know yet, in order, each once
        (``core.agent.spoiler_terms``)."""
        return later_terms(self._words, sentence)
