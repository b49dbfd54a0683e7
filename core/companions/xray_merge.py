"""One person, one X-Ray entry: the entries ``entities.find_entities`` made from the page scans
are merged by evidence in the text of the pages read, places are kept apart from people, and
the reader's own merges, splits, renames and hides are applied last.

Evidence, each read only from pages 1..``read_to``:

- *a short form* of an English first name ("Lizzy", "Eliza" → Elizabeth; "Kitty" →
  Catherine; ``entities.NICKNAMES``) goes with the one entry named by its full form;
- *a full name* written out ("Caroline Bingley", "Charlotte Lucas") puts the first name with
  the titled entry of that surname whose sex the pages show (she/her or he/his after the first
  name: "Miss"/"Mrs." or "Mr."), when there is one such entry;
- *"the eldest"*: "Miss Bennet" alone is the eldest daughter; the first name the pages give
  next after "eldest" ("her eldest daughter … Jane") is hers;
- *a title of address* ("your Majesty") belongs to the one royal the pages name ("the King",
  "King of Bohemia"), and *an assumed name* ("address me as the Count Von Kramm", "calling
  himself …") to the person the pages reveal next ("I am the King");
- *a name said to someone*: a first name only the characters use ("Louisa", "Charles"),
  opening a reply, is the name of the one who spoke before (``xray_address``), when that
  one is known only by title and surname ("Mrs. Hurst") and of the same sex, and no other
  such name is said to them;
- *places are not people*: a name ending in a word for a house or a street ("Lucas Lodge",
  "Baker Street") is a place of its own, and so is "St. James" when written "St. James’s"; a
  word made from a place ("Bohemian" from "Bohemia") describes, it names no one.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from core.companions.entities import NICKNAMES, Found
from core.companions.names import FEMALE, MALE, form_key
from core.companions.xray_address import address_votes

PLACE_WORDS = frozenset(
    "Lodge Park Hall House Street Square Place Court Abbey Castle Manor Lane Road Church "
    "Cottage Farm Villa Terrace Gardens Palace Inn Mews Crescent Row Bridge Wood Hill".split()
)
ROYAL = ("King", "Queen", "Emperor", "Empress", "Prince", "Princess", "Duke", "Duchess")
ADDRESS = {  # a title of address → the royal titles it is said to
    "majesty": ("King", "Queen", "Emperor", "Empress"),
    "highness": ("Prince", "Princess"),
    "grace": ("Duke", "Duchess"),
}
_ASSUMED = re.compile(
    r"(?:address me as|under the name of|calling himself|calls himself|called himself|"
    r"calling herself|calls herself|called herself|styles? himself)\s+(?:the\s+)?"
    r"([A-Z][\w’'-]+(?:\s+(?:[A-Z][\w’'-]+|von|van|de))*)"
)
_REVEAL = re.compile(r"\bI am (?:the\s+)?([A-Z][\w’'-]+(?:\s+of\s+[A-Z]\w+)?)")
_ROYAL_OF = re.compile(r"\b(" + "|".join(ROYAL) + r") of ([A-Z][\w-]+)")
_SHE = re.compile(r"\b(she|her|herself)\b", re.I)
_HE = re.compile(r"\b(he|him|his|himself)\b", re.I)
_FEMALE_TITLES = ("Miss", "Mrs.", "Mrs", "Lady", "Madam")
_MALE_TITLES = ("Mr.", "Mr", "Sir", "Lord")


@dataclass
class _Group:
    name: str
    kind: str
    names: Counter[str]
    pages: dict[int, list[Any]]  # page → [uses, form]
    description: list[tuple[int, str]]
    keys: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, f: Found) -> _Group:
        names = Counter({f.name: 2, **dict.fromkeys(f.aliases, 1)})
        pages = {p: [n, form] for p, n, form in f.mentions}
        return cls(f.name, f.kind, names, pages, list(f.description), [f.key])

    def absorb(self, other: _Group) -> None:
        self.names.update(other.names)
        for page, (n, form) in other.pages.items():
            mine = self.pages.setdefault(page, [0, form])
            mine[0] += n
        self.description = sorted({*self.description, *other.description})[:2]
        self.keys += other.keys
        if "person" in (self.kind, other.kind):
            self.kind = "person"

    def found(self) -> Found:
        aliases = tuple(
            sorted((n for n in self.names if n != self.name), key=lambda n: -self.names[n])
        )
        mentions = tuple((p, int(v[0]), str(v[1])) for p, v in sorted(self.pages.items()))
        return Found(self.keys[0], self.name, self.kind, aliases, mentions, tuple(self.description))


def _words(text: str, name: str) -> list[re.Match[str]]:
    return list(re.finditer(r"(?<![\w’'])" + re.escape(name) + r"(?![\w-])", text))


def merge_by_evidence(found: Sequence[Found], texts: Sequence[tuple[int, str]]) -> list[Found]:
    """``found`` (people, places and things of the pages read) with one entry per person,
    by the evidence of ``texts`` (the pages read, in order). Things are left as they are."""
    groups = [_Group.of(f) for f in found if f.kind != "thing"]
    things = [f for f in found if f.kind == "thing"]
    text = "\n".join(t for _, t in texts)
    places = {g.name for g in groups if g.kind == "place"}
    groups = [g for g in groups if not _made_from_place(g.name, places)]
    groups += _places_apart(groups, texts)
    for g in groups:
        saint = re.escape(g.name)
        if g.name.startswith("St. ") and re.search(rf"{saint}[’']s\b|\b(of|at) {saint}\b", text):
            g.kind = "place"
    _merge_nicknames(groups)
    _merge_full_names(groups, text)
    _merge_eldest(groups, text)
    _merge_royal(groups, text, texts)
    _merge_addressed(groups, text, texts)
    for g in groups:
        if g.kind == "other" and g.name.casefold() in FEMALE | MALE | NICKNAMES.keys():
            g.kind = "person"  # "Charles", "Kitty": a first name names someone
        full = [n for n in g.names if _is_full_name(n, g)]
        if full and g.kind == "person" and not g.name.startswith("the "):
            g.name = max(full, key=lambda n: (g.names[n], len(n)))
    merged = [g.found() for g in groups if g.keys and g.pages]
    merged.sort(key=lambda f: (-sum(m[1] for m in f.mentions), f.mentions[0][0]))
    return merged + things


def _is_full_name(name: str, g: _Group) -> bool:
    parts = name.split()
    if len(parts) != 2 or parts[0].rstrip(".") in {t.rstrip(".") for t in ROYAL} | {"St"}:
        return False
    titled = {n.split()[-1] for n in g.names if n.split()[0].rstrip(".") in _TITLE_WORDS}
    return parts[0][0].isupper() and parts[1] in titled and parts[0] not in _TITLE_WORDS


_TITLE_WORDS = frozenset({"Mr", "Mrs", "Miss", "Lady", "Sir", "Lord", "Madam", "Dr", "Colonel"})
# words before a surname that name no one else of the family ("Uncle Scrooge", "Master Peter")
_NOT_FIRST = _TITLE_WORDS | {"Master", "Uncle", "Aunt", "Cousin", "Old", "Young", "Little"}


def _made_from_place(name: str, places: set[str]) -> bool:
    """ "Bohemian" beside the place "Bohemia": a word that describes."""
    if " " in name:
        return False
    return any(
        name in (p + "n", p + "an", p + "ian", p[:-1] + "ian", p + "ese", p + "ish")
        for p in places
        if " " not in p
    )


def _places_apart(groups: list[_Group], texts: Sequence[tuple[int, str]]) -> list[_Group]:
    """A person's form that names a house or a street becomes a place of its own."""
    made: list[_Group] = []
    for g in groups:
        if g.kind != "person":
            continue
        for alias in [n for n in g.names if n.split()[-1] in PLACE_WORDS and n != g.name]:
            del g.names[alias]
            pages: dict[int, list[Any]] = {}
            for page, text in texts:
                n = len(_words(text, alias))
                if n:
                    pages[page] = [n, alias]
                    if page in g.pages:
                        g.pages[page][0] = max(0, g.pages[page][0] - n)
            g.pages = {p: v for p, v in g.pages.items() if v[0] > 0}
            if pages:
                made.append(_Group(alias, "place", Counter({alias: 1}), pages, [], [alias]))
    return made


def _find(groups: list[_Group], name: str) -> list[_Group]:
    wanted = form_key(name)
    return [g for g in groups if g.keys and any(form_key(n) == wanted for n in g.names)]


def _join(child: _Group, into: _Group) -> None:
    if child is not into and child.keys and into.keys:
        into.absorb(child)
        child.keys = []


def _first_names(g: _Group) -> set[str]:
    out = set()
    for n in g.names:
        parts = n.split()
        if parts and parts[0].rstrip(".") not in _TITLE_WORDS:
            out.add(parts[0].casefold())
        if len(parts) == 3 and parts[0].rstrip(".") in ("Miss", "Master", "Lady"):
            out.add(parts[1].casefold())
    return out


_ALSO = {  # short forms of more than one full name (the table keeps one)
    "kitty": {"catherine", "katherine"},
    "kate": {"catherine", "katherine"},
    "katie": {"catherine", "katherine"},
    "teddy": {"edward", "theodore"},
}


def _merge_nicknames(groups: list[_Group]) -> None:
    for g in list(groups):
        if not g.keys or " " in g.name:
            continue
        nick = g.name.casefold()
        formal = {NICKNAMES[nick]} if nick in NICKNAMES else set()
        formal |= _ALSO.get(nick, set())
        if not formal:
            continue
        holders = [  # a short form is a family's word: never for "Lady Catherine"
            h
            for h in groups
            if h is not g
            and h.keys
            and formal & _first_names(h)
            and h.name.split()[0].rstrip(".") not in _TITLE_WORDS
        ]
        if len(holders) == 1:
            _join(g, holders[0])


def _sex(text: str, name: str) -> str:
    """ "f" or "m" by the pronouns in the few words after ``name`` in ``text``."""
    she = he = 0
    for m in _words(text, name)[:40]:
        after = text[m.end() : m.end() + 80]
        she += len(_SHE.findall(after))
        he += len(_HE.findall(after))
    return "f" if she > he else "m" if he > she else ""


def _sex_of(g: _Group, text: str) -> str:
    """ "f" or "m": by its title, its first name, or else the pronouns after it."""
    for n in g.names:
        first = n.split()[0]
        if first in _FEMALE_TITLES or first.casefold() in FEMALE:
            return "f"
        if first in _MALE_TITLES or first.casefold() in MALE:
            return "m"
    return _sex(text, g.name)


def _merge_full_names(groups: list[_Group], text: str) -> None:
    while _merge_one_full_name(groups, text):
        pass


def _merge_one_full_name(groups: list[_Group], text: str) -> bool:
    """Merge the first first name a full name ties to its titled entry; False if none."""
    for g in list(groups):
        if not g.keys or g.kind == "place":
            continue
        singles = [n for n in g.names if " " not in n and n[0].isupper()]
        fulls = [n for n in g.names if len(n.split()) == 2 and n.split()[0] in singles]
        for first in singles:
            surnames = {
                m.group(1) for m in re.finditer(re.escape(first) + r" ([A-Z][a-z]+)\b", text)
            }
            surnames |= {n.split()[1] for n in fulls if n.split()[0] == first}
            for surname in surnames:
                kin = [  # another full name of the family (Jane and Elizabeth Bennet)
                    h
                    for h in groups
                    if h is not g
                    and h.keys
                    and any(
                        len(n.split()) == 2
                        and n.split()[1] == surname
                        and n.split()[0].rstrip(".") not in _NOT_FIRST
                        for n in h.names
                    )
                    and _sex_of(h, text) == _sex_of(g, text)
                ]
                if kin or any(n.split()[0] in _TITLE_WORDS for n in g.names):
                    continue
                sex = _sex_of(g, text)
                titles = _FEMALE_TITLES if sex == "f" else _MALE_TITLES if sex == "m" else ()
                titled = [
                    h
                    for t in titles
                    for h in _find(groups, f"{t} {surname}")
                    if h is not g and not (_first_names(h) - {surname.casefold()})
                ]
                unmarried = [h for h in titled if h.name.startswith("Miss ")]
                if len({id(h) for h in titled}) > 1 and len(unmarried) == 1:
                    titled = unmarried  # a daughter's full name; "Lady", "Mrs." are wives
                if len({id(h) for h in titled}) == 1:
                    titled[0].names[f"{first} {surname}"] += 1
                    _join(g, titled[0])
                    return True
    return False


def _merge_eldest(groups: list[_Group], text: str) -> None:
    for g in list(groups):
        parts = g.name.split()
        if not g.keys or len(parts) != 2 or parts[0] != "Miss":
            continue
        family = [
            h
            for h in groups
            if h is not g and h.keys and any(n.split()[-1] == parts[1] for n in h.names)
        ]
        firsts = {f: h for h in family for f in _first_names(h) if f != parts[1].casefold()}
        votes: Counter[int] = Counter()
        for m in re.finditer(r"\beldest\b", text):
            after = text[m.end() : m.end() + 200]
            for word in re.findall(r"\b[A-Z][a-z]+\b(?![’'])", after):
                if word.casefold() in firsts:
                    votes[id(firsts[word.casefold()])] += 1
                    break
        if votes:
            best, n = votes.most_common(1)[0]
            if n >= 1 and list(votes.values()).count(n) == 1:
                _join(g, next(h for h in family if id(h) == best))


def _merge_addressed(groups: list[_Group], text: str, texts: Sequence[tuple[int, str]]) -> None:
    names = {n for g in groups if g.keys and g.kind != "place" for n in g.names}
    said_to: dict[str, set[int]] = {}
    entry: dict[int, _Group] = {}
    for name, speaker in address_votes(texts, names):
        for g in _find(groups, speaker)[:1]:
            said_to.setdefault(name, set()).add(id(g))
            entry[id(g)] = g
    claims: Counter[int] = Counter(next(iter(t)) for t in said_to.values() if len(t) == 1)
    for name, targets in said_to.items():
        holders = _find(groups, name)
        if len(targets) != 1 or len(holders) != 1 or claims[next(iter(targets))] != 1:
            continue
        named, target = holders[0], entry[next(iter(targets))]
        surnames = {n.split()[-1].casefold() for n in target.names}
        if (
            named is target
            or named.kind == "place"
            or any(" " in n for n in named.names)
            or not any(n.split()[0].rstrip(".") in _TITLE_WORDS for n in target.names)
            or _first_names(target) - surnames
            or not _sex_of(named, text)
            or _sex_of(named, text) != _sex_of(target, text)
        ):
            continue
        _join(named, target)


def _merge_royal(groups: list[_Group], text: str, texts: Sequence[tuple[int, str]]) -> None:
    met = list(_ROYAL_OF.finditer(text))
    for title in ROYAL:
        bare = len(re.findall(r"\bthe " + title + r"\b(?! of)", text))
        titled = [m for m in met if m.group(1) == title]
        if bare < 2 and not titled:
            continue
        name = f"the {title} of {titled[0].group(2)}" if titled else f"the {title}"
        royal = _find(groups, name) or _find(groups, f"the {title}")
        if royal:
            target = royal[0]
        else:
            pages: dict[int, list[Any]] = {}
            for page, page_text in texts:
                n = len(re.findall(r"\bthe " + title + r"\b", page_text))
                if n:
                    pages[page] = [n, f"the {title}"]
            if not pages:
                continue
            target = _Group(name, "person", Counter({name: 2}), pages, [], [form_key(name)])
            groups.append(target)
        for m in titled[:1]:  # "Wilhelm … von Ormstein, Grand Duke of …, and King of Bohemia"
            before = text[max(0, m.start() - 160) : m.start()]
            before = re.split(r"[.!?]\s", before)[-1]
            named = [g for g in groups if g.keys and g is not target]
            for g in named:
                if any(re.search(re.escape(n) + r",", before) for n in g.names if " " not in n):
                    _join(g, target)
        for word, titles in ADDRESS.items():
            if title in titles:
                for g in _find(groups, word.capitalize()):
                    _join(g, target)
    for m in _ASSUMED.finditer(text):
        assumed = _find(groups, m.group(1)) or _find(groups, m.group(1).removeprefix("the "))
        reveal = _REVEAL.search(text, m.end(), m.end() + 12000)
        if not assumed or reveal is None:
            continue
        who = reveal.group(1)
        holders = _find(groups, who) or _find(groups, f"the {who}")
        holders = holders or [g for g in groups if g.keys and g.name.startswith(f"the {who}")]
        if holders:
            _join(assumed[0], holders[0])


@dataclass(frozen=True)
class Edits:
    """The reader's own changes to a book's X-Ray, kept per book and applied last."""

    merges: tuple[tuple[str, str], ...] = ()  # (a name of the entry merged, into a name)
    splits: tuple[tuple[str, str], ...] = ()  # (entry name, alias made an entry of its own)
    renames: tuple[tuple[str, str], ...] = ()  # (a name of the entry, its new name)
    hidden: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "merges": [list(m) for m in self.merges],
            "splits": [list(s) for s in self.splits],
            "renames": [list(r) for r in self.renames],
            "hidden": list(self.hidden),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Edits:
        data = data or {}

        def pairs(key: str) -> tuple[tuple[str, str], ...]:
            return tuple((str(a), str(b)) for a, b in data.get(key, ()))

        return cls(
            pairs("merges"), pairs("splits"), pairs("renames"), tuple(data.get("hidden", ()))
        )

    def add(self, what: str, *names: str) -> Edits:
        if what == "hide":
            return replace(self, hidden=(*self.hidden, names[0]))
        if what == "unhide":
            gone = form_key(names[0])
            return replace(self, hidden=tuple(h for h in self.hidden if form_key(h) != gone))
        pair = (names[0], names[1])
        field_name = {"merge": "merges", "split": "splits", "rename": "renames"}[what]
        return replace(self, **{field_name: (*getattr(self, field_name), pair)})


def apply_edits(
    found: Iterable[Found], edits: Edits, texts: Sequence[tuple[int, str]]
) -> list[Found]:
    """``found`` with the reader's merges, splits, renames and hides applied, in that order
    (an edit naming an entry the pages read do not have yet waits until they do)."""
    groups = [_Group.of(f) for f in found]
    for entry, alias in edits.splits:
        for g in _find(groups, entry):
            if alias in g.names and alias != g.name:
                del g.names[alias]
                pages: dict[int, list[Any]] = {}
                for page, text in texts:
                    n = len(_words(text, alias))
                    if n and page in g.pages:
                        pages[page] = [n, alias]
                        g.pages[page][0] = max(0, g.pages[page][0] - n)
                g.pages = {p: v for p, v in g.pages.items() if v[0] > 0} or g.pages
                if pages:
                    kind = g.kind
                    groups.append(_Group(alias, kind, Counter({alias: 1}), pages, [], [alias]))
    for child, into in edits.merges:
        a, b = _find(groups, child), _find(groups, into)
        if a and b:
            _join(a[0], b[0])
    for old, new in edits.renames:
        for g in _find(groups, old):
            g.names[new] += max(g.names.values()) + 1
            g.name = new
    hidden = {form_key(h) for h in edits.hidden}
    return [
        g.found()
        for g in groups
        if g.keys and g.pages and not any(form_key(n) in hidden for n in g.names)
    ]
