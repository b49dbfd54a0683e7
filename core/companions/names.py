"""Names as a book writes them, read one page at a time (no model, no list of names).

A page is scanned once: every run of capitalised words ("Miss Bingley", "Sir William Lucas",
"Lady Catherine de Bourgh") is a *form*; for each capitalised word the page counts how often
it is capitalised inside a sentence, at a sentence's start, and written in lower case (only
for words the book capitalises somewhere: ``capitalised_words``), after a preposition of
place ("at Netherfield") and beside a verb of speech ("said Elizabeth"). Each form keeps the
page's most telling sentence about it ("Mr. Bingley was good looking and gentleman-like…").

What is a name, and which forms are one person, is decided later over the pages read
(``core.companions.xray``): a page's scan depends on that page alone, so the X-Ray of pages
1–N never depends on a page after N.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

TITLES = frozenset(
    "Mr Mrs Miss Ms Mx Dr Sir Lady Lord Madam Madame Mademoiselle Monsieur Colonel Captain "
    "Col Capt General Major Lieutenant Sergeant Professor Reverend Rev Father Sister Brother "
    "Aunt Uncle Master Mistress King Queen Prince Princess Duke Duchess Count Countess Baron "
    "Baroness Dame Saint St Herr Frau Fräulein Signor Signora Don Doña Inspector Doctor".split()
)
ABBREVIATIONS = frozenset("Mr Mrs Ms Mx Dr St Col Capt Rev Messrs Gen Lieut Prof Sr Jr".split())
MALE_TITLES = frozenset("Mr Sir Lord Monsieur Herr Signor Don".split())
# English first names whose sex is plain (the short forms' full names and the commonest others)
FEMALE = frozenset(
    "elizabeth catherine katherine margaret mary anne jane sarah susan frances dorothy "
    "eleanor georgiana josephine caroline louisa charlotte lydia emma harriet maria fanny "
    "lucy julia sophia isabella amelia alice edith helen irene violet agnes martha ellen "
    "clara rose grace ann hannah kitty lizzy eliza".split()
)
MALE = frozenset(
    "william robert richard edward thomas james john charles henry alexander christopher "
    "benjamin joseph samuel frederick theodore george arthur francis walter hugh peter "
    "philip stephen david michael godfrey sherlock".split()
)
# lower-case words that may stand inside a name ("Catherine de Bourgh", "House of Commons")
CONNECTORS = frozenset("de du da van von der den la le di del y of".split())
# capitalised words that are never an entry on their own
NOT_NAMES = frozenset(
    "I I’m I'm I’ll I'll I’d I'd I’ve I've O Oh Ah Ay Aye Yes No Nay Well Chapter Volume Book "
    "Part Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April "
    "May June July August September October November December Christmas Easter Michaelmas "
    "English French Dutch German Italian Spanish Scotch Irish Welsh Latin Greek The A An Ma’am "
    "Ma'am Sir".split()
)
PLACE_BEFORE = frozenset(
    "at in to from near towards toward into through reach reached leave left visit visited "
    "round across".split()
)
SPEECH = frozenset(
    "said cried replied answered asked added continued exclaimed returned observed whispered "
    "shouted thought says cries replies answers asks".split()
)
_ROMAN = re.compile(r"^[IVXLCDM]+$")
_WORD = re.compile(r"[^\W\d_]+(?:[’'\-][^\W\d_]+)*")
_POSSESSIVE = re.compile(r"[’']s$")
# . ! ? … before a capital, or 。！？ (Chinese, Japanese) with their closing brackets
_END = re.compile(
    r"[.!?…]+[\"”’')\]]*(?=\s+[^\sa-z])|[。！？．｡]+[」』”’）〕】)\]]*(?![」』”’）〕】と])"
)
_ABBREVIATED = re.compile(r"\b(?:" + "|".join(sorted(ABBREVIATIONS)) + r")\.$")
_OPENERS = frozenset("“\"‘'(—–-[")
_DESCRIBES = re.compile(
    r"^(?:[’']s\s+\w+\s+)?(?:,\s+(?:a|an|the|who|whose|his|her|whom)\b|\s+(?:was|is|were|are|"
    r"had been|has been|seemed|appeared|looked|became|lived|lives)\b)"
)
_KIN = re.compile(
    r"\b(?:sister|brother|father|mother|daughter|son|wife|husband|friend|cousin|uncle|aunt|"
    r"niece|nephew|heir|widow|servant|master|owner|estate|fortune|years old|young|old|tall|"
    r"handsome|pretty|beautiful|proud|clever|rich|poor|lived|living|married|neighbour|"
    r"gentleman|lady|man|woman|girl|boy|called|named)\b",
    re.IGNORECASE,
)
DETERMINERS = frozenset(
    "the a an his her my your our their its this that these those some every each".split()
)
# words that may follow a noun at once ("the hookah was", "a teacup and"); any other
# lower-case word right after "a shrill" makes "shrill" a word describing it
FOLLOWERS = frozenset(
    "a an and are as at be but by could did do does for from had has have he her his i if in "
    "into is it its me my nor not of off on or out over she should so than that the their them "
    "then there they this to up upon was we were what when where which while who whom why will "
    "with would you your said says being been seemed stood lay sat went came ran took got made "
    "gave saw myself himself herself itself about above after again against along among around "
    "before behind below beneath beside between beyond down here just now once only still "
    "through till too toward towards under until very yet".split()
)
_VERB_ENDS = ("ed", "ing", "ly")  # "the chaise arrived", "the parlour repining"
THING = "~"  # a thing's key among the forms' best sentences ("~hookah")
MIN_SCORE = 2.0  # a sentence scored below this tells nothing about a name
SENTENCE_CHARS = (30, 400)  # shorter says nothing, longer is a paragraph


@dataclass
class PageScan:
    """What one page says about the names on it (JSON-ready through ``to_json``)."""

    forms: dict[str, int] = field(default_factory=dict)  # run as written → uses
    words: dict[str, list[int]] = field(default_factory=dict)  # word → [mid, start, lower]
    place: dict[str, int] = field(default_factory=dict)  # form → uses after "at", "in", …
    speech: dict[str, int] = field(default_factory=dict)  # form → uses beside "said", …
    best: dict[str, tuple[float, str]] = field(default_factory=dict)  # form → best sentence
    together: dict[str, int] = field(default_factory=dict)  # "a|b": paragraphs with both
    # rare word → [uses, after "the", after "the" and before the noun it describes]
    things: dict[str, list[int]] = field(default_factory=dict)
    # rare word → the words it stood before ("shrill" → voice, loud; "opium" → den, den)
    before: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {
            "f": self.forms,
            "w": self.words,
            "p": self.place,
            "s": self.speech,
            "b": {k: [round(v[0], 2), v[1]] for k, v in self.best.items()},
            "t": self.together,
            "x": self.things,
            "n": self.before,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> PageScan:
        best = data.get("b") or {}
        assert isinstance(best, dict)
        return cls(
            dict(data.get("f") or {}),  # type: ignore[call-overload]
            dict(data.get("w") or {}),  # type: ignore[call-overload]
            dict(data.get("p") or {}),  # type: ignore[call-overload]
            dict(data.get("s") or {}),  # type: ignore[call-overload]
            {k: (float(v[0]), str(v[1])) for k, v in best.items()},
            dict(data.get("t") or {}),  # type: ignore[call-overload]
            dict(data.get("x") or {}),  # type: ignore[call-overload]
            dict(data.get("n") or {}),  # type: ignore[call-overload]
        )


def _describes(sentence: str, tokens: list[tuple[int, int, str]], i: int) -> bool:
    """Whether token ``i`` stands before a noun it describes: the next word follows at once
    (a space between, or a comma as in "a shrill, loud voice"), in lower case, and is no word
    that follows a noun (a verb, a preposition, a pronoun)."""
    if i + 1 >= len(tokens):
        return False
    start, _end, word = tokens[i + 1]
    gap = sentence[tokens[i][1] : start]
    return (
        (gap.isspace() or gap.strip() == ",")
        and word.islower()
        and word not in FOLLOWERS
        and not word.endswith(_VERB_ENDS)
    )


def capitalised_words(texts: Iterable[str]) -> frozenset[str]:
    """The words a book writes with a capital somewhere (lower-cased): only their lower-case
    uses are worth counting."""
    found: set[str] = set()
    for text in texts:
        found.update(w for w in _WORD.findall(text) if w[0].isupper())
    return frozenset(w.lower() for w in found)


def clean_word(word: str) -> str:
    return _POSSESSIVE.sub("", word)


def form_key(form: str) -> str:
    """One spelling per form: "Mr Darcy", "Mr. Darcy" and "MR. DARCY" are one."""
    return " ".join(w.rstrip(".") for w in form.split()).casefold()


def is_title(word: str) -> bool:
    return word.rstrip(".") in TITLES


def split_sentences(text: str) -> list[str]:
    """The sentences of a paragraph (spaces folded): a full stop after "Mr" ends none."""
    out: list[str] = []
    start = 0
    for m in _END.finditer(text):
        if _ABBREVIATED.search(text, 0, m.end()) and m.group() == ".":
            continue
        out.append(text[start : m.end()].strip())
        start = m.end()
    if text[start:].strip():
        out.append(text[start:].strip())
    return out


def scan_page(
    text: str,
    capitalised: frozenset[str],
    nicknames: dict[str, str],
    exclude: frozenset[str] = frozenset(),
    rare: frozenset[str] = frozenset(),
) -> PageScan:
    """Scan one page's text (see the module docstring). ``nicknames`` maps a familiar name to
    its formal one (lower case), for counting paragraphs that have both; forms in ``exclude``
    (``form_key``: the book's author) are no entry; lower-case words in ``rare`` (rare in
    English) are counted as things ("hookah", "entail")."""
    scan = PageScan()
    for paragraph in text.split("\n\n"):
        seen_here: set[str] = set()
        depth = 0  # open quotation marks before the sentence: it is someone speaking
        if _is_heading(paragraph):
            continue  # "The Rabbit Sends in a Little Bill": a title, not the story
        for sentence in split_sentences(" ".join(paragraph.split())):
            _scan_sentence(sentence, scan, capitalised, seen_here, exclude, depth > 0, rare)
            depth = max(0, depth + sentence.count("“") - sentence.count("”"))
        for nick, formal in nicknames.items():
            if nick in seen_here and formal in seen_here:
                key = f"{nick}|{formal}"
                scan.together[key] = scan.together.get(key, 0) + 1
    return scan


def _scan_sentence(
    sentence: str,
    scan: PageScan,
    capitalised: frozenset[str],
    seen_here: set[str],
    exclude: frozenset[str],
    spoken: bool,
    rare: frozenset[str] = frozenset(),
) -> None:
    tokens = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(sentence)]
    runs: list[tuple[int, int]] = []  # token index ranges of capitalised runs
    i = 0
    while i < len(tokens):
        start, end, word = tokens[i]
        word = clean_word(word)
        initial = i == 0 or _opens(sentence, tokens[i - 1][1], start)
        if word[0].isupper():
            counts = scan.words.setdefault(word, [0, 0, 0])
            counts[1 if initial else 0] += 1
            seen_here.add(word.lower())
            j = i + 1
            while j < len(tokens) and _continues(sentence, tokens, j):
                nxt = clean_word(tokens[j][2])
                if nxt[0].isupper():
                    scan.words.setdefault(nxt, [0, 0, 0])[0] += 1
                    seen_here.add(nxt.lower())
                j += 1
            while j - 1 > i and tokens[j - 1][2] in CONNECTORS:
                j -= 1  # a run never ends on "of"
            runs.append((i, j))
            i = j
            continue
        lowered = word.lower()
        if lowered in capitalised and lowered == word:
            scan.words.setdefault(word.capitalize(), [0, 0, 0])[2] += 1
        if lowered == word and word in rare:
            counts = scan.things.setdefault(word, [0, 0, 0])
            if len(counts) < 3:
                counts.append(0)
            counts[0] += 1
            if i > 0 and tokens[i - 1][2].lower() in DETERMINERS:
                counts[1] += 1  # "the hookah", "a teacup": a thing, not a manner
                if _describes(sentence, tokens, i):
                    counts[2] += 1  # "a shrill voice", "the finer ones": it describes a noun
                    scan.before.setdefault(word, []).append(tokens[i + 1][2])
            score = _telling(sentence, start, end) - (1.5 if spoken else 0.0)
            if score >= MIN_SCORE and score > scan.best.get(THING + word, (0.0, ""))[0]:
                scan.best[THING + word] = (score, sentence)
        i += 1
    for a, b in runs:
        words = [clean_word(t[2]) for t in tokens[a:b]]
        form = " ".join(_title_form(w) for w in words)
        if len(words) == 1 and (words[0] in NOT_NAMES or len(words[0]) < 2):
            continue
        key = form_key(form)
        if any(key == x or key.endswith(" " + x) for x in exclude):
            continue
        if _ROMAN.match(words[-1]) and len(words) == 1:
            continue
        scan.forms[form] = scan.forms.get(form, 0) + 1
        before = tokens[a - 1][2].lower() if a > 0 else ""
        after = tokens[b][2].lower() if b < len(tokens) else ""
        if before in PLACE_BEFORE:
            scan.place[form] = scan.place.get(form, 0) + 1
        if before in SPEECH or after in SPEECH:
            scan.speech[form] = scan.speech.get(form, 0) + 1
        score = _telling(sentence, tokens[a][0], tokens[b - 1][1]) - (1.5 if spoken else 0.0)
        if score >= MIN_SCORE and score > scan.best.get(form, (0.0, ""))[0]:
            scan.best[form] = (score, sentence)


def _is_heading(paragraph: str) -> bool:
    words = _WORD.findall(paragraph)
    if not 2 <= len(words) <= 15 or paragraph.rstrip()[-1] in ".!?":
        return False
    capital = sum(1 for w in words if w[0].isupper())
    return capital >= 0.6 * len(words)


def _title_form(word: str) -> str:
    bare = word.rstrip(".")
    return bare + "." if bare in ABBREVIATIONS else bare if bare in TITLES else word


def _opens(sentence: str, prev_end: int, start: int) -> bool:
    """Whether the word at ``start`` starts a sentence inside ``sentence``: after an opening
    quote or a dash (“But …), or after a colon or semicolon's quoted speech."""
    between = sentence[prev_end:start]
    return any(c in _OPENERS for c in between) and not between.strip().endswith(",")


def _continues(sentence: str, tokens: list[tuple[int, int, str]], j: int) -> bool:
    """Whether token ``j`` goes on the run before it: a capitalised word (or a connector
    followed by one) separated by one space or a title's full stop."""
    between = sentence[tokens[j - 1][1] : tokens[j][0]]
    if between not in (" ", ". ") or (between == ". " and not is_title(tokens[j - 1][2])):
        return False
    word = tokens[j][2]
    if word in NOT_NAMES:
        return False
    if word[0].isupper():
        return True
    return word in CONNECTORS and j + 1 < len(tokens) and tokens[j + 1][2][0].isupper()


def _telling(sentence: str, start: int, end: int) -> float:
    """How much ``sentence`` tells about the name written at ``start:end`` in it."""
    if not SENTENCE_CHARS[0] <= len(sentence) <= SENTENCE_CHARS[1]:
        return 0.0
    score = 1.0
    if _DESCRIBES.match(sentence[end:]):
        score += 2.0
    if start < 25:
        score += 0.5  # the sentence is about it, not merely naming it
    score += min(2.0, 0.5 * len(_KIN.findall(sentence)))
    if any(q in sentence for q in '“”"'):
        score -= 1.5  # what someone says of a person is opinion, the narrator's is fact
    return score
