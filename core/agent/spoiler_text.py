"""The spoiler check's reading of text (issue 23): what the reader will see, word stems, and
where sentences end.

``visible_text`` reduces a Markdown answer to the letters the chat pane shows (marks and links
rendered, entities decoded, NFKC, format and combining characters dropped, a right-to-left
override read in its shown order, look-alike letters folded to Latin). Stems are SQLite FTS5's
porter stems, the search index's own. ``boundaries`` finds sentence ends in streamed text the
same way whatever the chunks.
"""

from __future__ import annotations

import html
import re
import sqlite3
import threading
import unicodedata
from collections.abc import Iterable

from core.agent.spoiler_fold import fold_latin, fold_scripts
from core.agent.spoiler_words import zipf

# A word as the FTS5 unicode61 tokenizer sees it: a run of letters and digits.
_WORD = re.compile(r"[^\W_]+")
_SPACES = re.compile(r"\s+")
_GAP = re.compile(r"\s+|-|\s*[-‐–]\s*")  # what may stand between the words of a phrase

# Words that tell an outcome (death, burial, marriage): a cue of the check, and what
# ``spoiler_support`` asks the pages read near a sentence to tell already.
OUTCOME = re.compile(
    r"\b(?:di(?:e|es|ed|ing)|dead|death|funerals?|graves?|gravestones?|buried|burial|"
    r"mourn(?:s|ed|ing)?|kill(?:s|ed|er)?|murder(?:s|ed|er)?|marr(?:y|ies|ied|iage)|"
    r"weddings?|husband|engagement|executed|hanged|starv(?:e|es|ed|ing)|"
    r"ever after|(?:for )?the rest of (?:his|her|their) li(?:fe|ves))\b",
    re.I,
)

# Common words the frequency list lacks (it has no contractions' pieces).
_EXTRA_COMMON = frozenset(
    "cannot don isn wasn didn doesn couldn wouldn shouldn aren weren hasn haven hadn won okay".split()
)


GENERAL_ZIPF = zipf()

# --- what the reader will see ---------------------------------------------------------------
# The check reads the sentence as the chat pane shows it, not its Markdown source: a name
# split by emphasis ("**Windi**bank"), an entity ("Windi&#98;ank"), an invisible character, a
# combining accent, a look-alike letter from another script or a right-to-left override all
# show the reader the same name.

_RTL_OVERRIDE = re.compile("\u202e([^\u202a-\u202e]*)(?:\u202c|$)")
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MD_MARKS = re.compile(r"[*_`~]+|^\s{0,3}(?:#{1,6}|>+|[-+*]|\d+[.)])\s+", re.M)
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>]*>")


def visible_text(text: str) -> str:
    """``text`` as the reader sees it, reduced to plain letters: Markdown marks and links
    rendered to their text, entities decoded, then NFKC, format characters (zero-width
    spaces and joiners, soft hyphens, direction marks) and combining accents dropped, a
    right-to-left override read in the order it is shown, look-alike letters folded to Latin
    (``core.agent.spoiler_fold``: Latin letters in disguise, from Unicode's names, before
    NFKD; Cyrillic and Greek look-alikes inside words that have Latin letters, after it)."""
    text = _MD_LINK.sub(r"\1", text)
    text = _HTML_TAG.sub("", text)
    text = _MD_MARKS.sub("", text)
    text = html.unescape(text)
    if text.isascii():
        return text  # nothing below changes plain ASCII
    text = _RTL_OVERRIDE.sub(lambda m: m.group(1)[::-1], text)
    text = unicodedata.normalize("NFKD", fold_latin(text))
    text = "".join(c for c in text if unicodedata.category(c) not in ("Mn", "Me", "Cf"))
    return fold_scripts(unicodedata.normalize("NFC", text))


class _Stemmer:
    """Porter stems from SQLite's own FTS5 tokenizer (the search index's), cached.

    One private in-memory database per process; a lock makes it safe from any thread.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[str, str] = {}
        self._con = sqlite3.connect(":memory:", check_same_thread=False)
        self._con.execute(
            "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')"
        )
        self._con.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")

    def stems(self, words: Iterable[str]) -> dict[str, str]:
        """Lower-case word → stem for each word (words the tokenizer drops map to themselves)."""
        cache = self._cache
        wanted = set(words)
        missing = [w for w in wanted if w not in cache]
        if missing:
            with self._lock:
                missing = [w for w in missing if w not in cache]
                if missing:
                    with self._con:
                        self._con.executemany(
                            "INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(missing, 1)
                        )
                        rows = self._con.execute(
                            "SELECT doc, term FROM v WHERE offset = 0"
                        ).fetchall()
                        self._con.execute("DELETE FROM t")
                    found = dict(rows)
                    for i, word in enumerate(missing, 1):
                        cache[word] = found.get(i, word)
        return {w: cache[w] for w in wanted}


_STEMMER = _Stemmer()


def last_space(text: str, limit: int) -> int:
    """The offset just after the last whitespace before ``limit`` (or the first after it);
    0 when the text has none."""
    for k in range(min(limit, len(text)) - 1, -1, -1):
        if text[k].isspace():
            return k + 1
    for k in range(limit, len(text)):
        if text[k].isspace():
            return k + 1
    return 0


# --- sentence boundaries --------------------------------------------------------------------

_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st prof sr jr mt vs etc eg ie cf no nos p pp ch chap vol fig ed eds approx "
    "viz al co inc ltd jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
_CLOSERS = "\"'’”)]*_»"
_TERMINATORS = ".!?…"
_CJK_TERMINATORS = "。！？"  # Chinese and Japanese (core.search.sentences.CJK_END)
_CJK_CLOSERS = "」』”’）〕】"


def boundaries(text: str, start: int) -> list[int]:
    """Offsets where a new sentence begins, found from ``start`` on. A boundary is the first
    non-space character after a line break, or after sentence-final punctuation; it is only
    known once that character has arrived, so the same text split into any chunks gives the
    same boundaries."""
    found: list[int] = []
    n = len(text)
    i = start
    while i > 0 and text[i - 1] in _CJK_TERMINATORS + _CJK_CLOSERS:
        i -= 1  # a 。 that ended the text before: its boundary is decided now
    while i < n:
        ch = text[i]
        if ch in _CJK_TERMINATORS:  # 。！？ end a sentence with no space after them
            k = i + 1
            while k < n and text[k] in _CJK_CLOSERS:
                k += 1
            if k >= n:
                break  # a closing bracket may follow, or the next character decide
            if not text[k].isspace() and text[k] != "と":  # 「…？」と聞いた goes on
                found.append(k)
            i = k
            continue
        if not ch.isspace():
            i += 1
            continue
        j = i
        while j < n and text[j].isspace():
            j += 1
        if j >= n:
            break  # the whitespace may go on, or the next character decide
        if i > 0 and ("\n" in text[i:j] or _ends_sentence(text, i, text[j])):
            found.append(j)
        i = j
    return found


def _ends_sentence(text: str, space: int, following: str) -> bool:
    """Whether the text before ``space`` ends a sentence, the next character being ``following``."""
    k = space - 1
    while k >= 0 and text[k] in _CLOSERS:
        k -= 1
    if k < 0 or text[k] not in _TERMINATORS:
        return False
    if following.islower():
        return False  # "e.g. the", "… and then": the sentence goes on
    if text[k] == ".":
        if k >= 2 and text[k - 2 : k + 1] == "...":
            return not following.isdigit()
        m = k - 1
        while m >= 0 and text[m].isalnum():
            m -= 1
        word = text[m + 1 : k]
        if word.lower() in _ABBREVIATIONS:
            return False
        if len(word) == 1 and word.isupper():
            return False  # an initial: "J. Smith"
        if word.isdigit() and not text[text.rfind("\n", 0, m + 1) + 1 : m + 1].strip():
            return False  # "1. " opens a numbered list item
        if following.isdigit() and (not word or word.isdigit()):
            return False  # "3. 4" in a number or list
    return True
