"""Sentences and word stems of a passage, for finding where in it a question is answered
(search's re-ranking and passages mode's highlighted sentence)."""

from __future__ import annotations

import math
import re

# a sentence ends at . ! ? … (and closing quotes) before a word that does not start in lower
# case: “Why?” he asked. is one sentence. Chinese and Japanese end one at 。！？ (and their
# closing brackets), with no space after it: 「先生は？」と聞いた。 ends after 。 only when
# nothing but closing marks follow the ？ (CJK_END).
CJK_END = "。！？．｡"
_SENTENCE = re.compile(
    r"\S.*?(?:[.!?…]+[\"”’')\]]*(?=\s+[^\sa-z]|\s*$)"
    rf"|[{CJK_END}]+[」』”’）〕】\)\]]*(?![」』”’）〕】と])|$)",
    re.DOTALL,
)
_SPLIT = re.compile(r"[^\w’']+")
STOP = frozenset(
    "a an and are as at be but by did do does for from had has have he her his how i in is it "
    "its me my of on or she so that the their them then there they this to was we were what "
    "when where which who whom why will with would you your about into than not no".split()
)


# a full stop after these does not end a sentence: "Mr. Holmes", "Dr. Watson", "J. H. Watson"
ABBREVIATIONS = frozenset(
    "mr mrs messrs ms dr st mt prof rev col capt gen lt sgt sr jr hon esq no vol ch fig"
    " viz vs etc".split()
)
_LAST_WORD = re.compile(r"(?:^|[\s“\"‘'(\[])([A-Za-z]+)\.$")


def abbreviated(piece: str) -> bool:
    """Whether ``piece`` ends with an abbreviation or an initial ("Mr.", "J."), not a
    sentence's full stop."""
    found = _LAST_WORD.search(piece)
    if found is None:
        return False
    word = found.group(1)
    return word.lower() in ABBREVIATIONS or (len(word) == 1 and word.isupper() and word != "I")


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (spaces folded), each exact text of it."""
    out: list[str] = []
    glue = False
    for m in _SENTENCE.finditer(" ".join(text.split())):
        piece = m.group(0).strip()
        if not piece:
            continue
        if glue and out:
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
        glue = abbreviated(piece)
    return out


_PARAGRAPH = re.compile(r"\n\s*\n")
_OPEN_END = re.compile(r"[.!?…:;,—–\-\"”’'\)\]]$")
_SMALL = frozenset("a an and at by for in of on or the to with".split())
_HEADING_WORD = re.compile(r"^(?:chapter|stave|part|book|section)\b|^[ivxlcdm]+\.?$", re.I)


def paragraphs(text: str) -> list[str]:
    """The paragraphs of ``text`` (blank lines part them), spaces folded in each."""
    return [" ".join(p.split()) for p in _PARAGRAPH.split(text) if p.strip()]


def is_heading(paragraph: str) -> bool:
    """Whether a paragraph is a heading, a caption or an ornament, not prose: short, with
    no sentence's end, and a chapter's word ("CHAPTER IV", "Stave I", "II"), capitals for
    most of its words ("Incident of the Letter") or no letter at all ("* * *")."""
    text = paragraph.strip()
    if not text or len(text) > 100 or _OPEN_END.search(text) or "“" in text or '"' in text:
        return False
    if _HEADING_WORD.search(text):
        return True
    words = [w for w in _SPLIT.split(text) if w and w[0].isalpha()]
    if not words:
        return True
    big = [w for w in words if w.lower() not in _SMALL]
    return bool(big) and sum(w[0].isupper() for w in big) >= 0.8 * len(big)


def stems(text: str) -> set[str]:
    """Crude stems (the first five letters) of the meaningful words of ``text``."""
    return {w[:5] for w in _SPLIT.split(text.lower()) if len(w) > 2 and w.strip("’'") not in STOP}


ENDED = re.compile(r"[.!?…:;][\"”’')\]]*$")  # a sentence that ends here, not a cut


def matches(wanted: set[str], text: str) -> list[tuple[int, str]]:
    """(offset, stem) of every word of ``text`` that starts with one of the stems
    ``wanted``, in text order. Plain substring search (re-ranking runs on every search,
    and a regular expression with many alternatives is several times slower)."""
    lowered = text.lower()
    found: list[tuple[int, str]] = []
    for stem in wanted:
        at = lowered.find(stem)
        while at >= 0:
            if at == 0 or not lowered[at - 1].isalnum():
                found.append((at, stem))
            at = lowered.find(stem, at + len(stem))
    found.sort()
    return found


def weights(found: list[list[tuple[int, str]]]) -> dict[str, float]:
    """How telling each query stem is among the passages (inverse document frequency)."""
    count: dict[str, int] = {}
    for places in found:
        for stem in {stem for _, stem in places}:
            count[stem] = count.get(stem, 0) + 1
    n = len(found)
    return {t: math.log(1 + n / (1 + c)) for t, c in count.items()}


def closeness(places: list[tuple[int, str]], weight: dict[str, float], span: int = 250) -> float:
    """The largest share of the query's weight (among the stems found in any passage) held
    by different stems within ``span`` characters (about two sentences): a passage whose
    words cluster in one place beats one that scatters them."""
    total = sum(weight.values())
    if not total or not places:
        return 0.0
    best = 0.0
    start = 0
    for end in range(len(places)):
        while places[end][0] - places[start][0] > span:
            start += 1
        held = {stem for _, stem in places[start : end + 1]}
        best = max(best, sum(weight.get(t, 0.0) for t in held))
    return best / total
