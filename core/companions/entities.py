"""Which capitalised words are names, and which forms are one person, place or thing —
decided only from the scans of the pages read (``names.PageScan``).

- a word is a name when the pages read capitalise it inside sentences at least twice and
  seldom write it in lower case ("Bingley" yes; "However", "Park" no);
- a run of words is cut to its names ("Poor Elizabeth" → "Elizabeth");
- a titled form is an entry of its own ("Mr. Darcy", "Miss Bingley", "Mrs. Bennet");
- "Elizabeth Bennet" and "Miss Elizabeth" go with "Elizabeth"; "Sir William" with "Sir
  William Lucas"; a bare surname with the titled form it mostly has ("Darcy" → "Mr. Darcy"; a
  man's title first when there are several, as the older novels name men by surname);
- a familiar name goes with its formal one ("Lizzy", "Eliza" → "Elizabeth") only where the
  book shows it: both in the same paragraph at least twice, or both with the same surname.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from core.companions.names import (
    MALE,
    MALE_TITLES,
    NOT_NAMES,
    THING,
    TITLES,
    PageScan,
    form_key,
)

# titles that never stand for a person on their own ("the Queen" does, "Mr." does not)
_BARE_TITLES = frozenset("Mr Mrs Miss Ms Mx Dr St Sir Rev Col Capt Madam Master Saint".split())
_SURNAME_TITLES = frozenset("mr mrs ms dr colonel captain col capt messrs".split())
NAME_SHARE = 0.8  # a name is capitalised at least this share of its uses
MIN_MID = 2  # … and capitalised inside a sentence at least this often
MIN_USES = 2  # an entry is named at least this often in the pages read
TOGETHER = 2  # paragraphs where a familiar and a formal name meet before they are one
DESCRIPTION_SENTENCES = 2
MIN_THING_USES = 4  # a thing is used this often in the pages read …
MAX_THINGS = 20  # … and only the most used are entries
THING_SHARE = 0.6  # … mostly after "the", "a", "his" (a noun)
DESCRIBING_SHARE = 0.5  # … and not half the time before a noun it describes ("a shrill voice")

# familiar name → formal name (lower case): English hypocorisms, common in novels
NICKNAMES: dict[str, str] = {
    nick: formal
    for formal, nicks in {
        "elizabeth": "lizzy lizzie eliza liz beth betsy bess betty libby lisa",
        "catherine": "kitty kate katie cathy",
        "katherine": "kitty kate katie kathy",
        "margaret": "meg maggie peggy madge",
        "william": "will bill billy willy",
        "robert": "bob rob bobby",
        "richard": "dick",
        "edward": "ned ted teddy",
        "thomas": "tom tommy",
        "james": "jim jem jamie",
        "john": "jack johnny",
        "charles": "charlie",
        "henry": "harry hal",
        "mary": "polly molly mamie",
        "anne": "annie nan nancy",
        "jane": "jenny janie",
        "sarah": "sally",
        "susan": "sue susie",
        "frances": "fanny",
        "dorothy": "dolly dot",
        "eleanor": "nell nelly",
        "alexander": "alex sandy",
        "christopher": "kit",
        "benjamin": "ben",
        "joseph": "joe",
        "samuel": "sam",
        "georgiana": "georgy",
        "frederick": "fred freddy",
        "josephine": "jo josie",
        "theodore": "teddy theo",
    }.items()
    for nick in nicks.split()
}


@dataclass(frozen=True)
class Found:
    """An entry as the pages read show it (``xray.Entry`` adds what it needs to show)."""

    key: str
    name: str
    kind: str  # "person", "place", "thing" or "other"
    aliases: tuple[str, ...]
    mentions: tuple[tuple[int, int, str], ...]  # (page, uses, a form written there)
    description: tuple[tuple[int, str], ...]  # (page, sentence)


FIRST_NAMES = frozenset(NICKNAMES) | frozenset(NICKNAMES.values())


class _Totals:
    def __init__(self, scans: Sequence[tuple[int, PageScan]]) -> None:
        self.words: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        self.forms: Counter[str] = Counter()
        self.place: Counter[str] = Counter()
        self.speech: Counter[str] = Counter()
        self.together: Counter[str] = Counter()
        for _page, scan in scans:
            for word, counts in scan.words.items():
                total = self.words[word]
                for i in range(3):
                    total[i] += counts[i]
            self.forms.update(scan.forms)
            self.place.update(scan.place)
            self.speech.update(scan.speech)
            self.together.update(scan.together)

    def capital_only(self, word: str) -> bool:
        """Capitalised wherever the pages read have it, more than once (a first name that
        only ever starts sentences)."""
        mid, start, lower = self.words.get(word, (0, 0, 0))
        return lower == 0 and mid + start >= MIN_MID and word not in NOT_NAMES

    def is_name(self, word: str) -> bool:
        mid, start, lower = self.words.get(word, (0, 0, 0))
        if word in NOT_NAMES or len(word) < 2 or word.rstrip(".") in _BARE_TITLES:
            return False
        if word.isupper() and len(word) > 1 and mid < 3:
            return False  # SHOUTED words, headings
        return mid >= MIN_MID and (mid + start) >= NAME_SHARE * (mid + start + lower)


def _resolve(form: str, totals: _Totals) -> str:
    """The form cut to its names: leading words that are neither a name nor a title go (a
    sentence's first word), and a run that keeps no name is not a name."""
    words = form.split()
    while words and not totals.is_name(words[0]) and words[0].rstrip(".") not in TITLES:
        if len(words) > 1 and totals.is_name(words[1]) and totals.capital_only(words[0]):
            break  # "John Clay" at a sentence's start: "John" is never written in lower case
        words.pop(0)
    while words and (words[-1].rstrip(".") in TITLES or words[-1][0].islower()):
        words.pop()
    if not any(totals.is_name(w) for w in words):
        return ""
    if len(words) == 1 and words[0].rstrip(".") in TITLES and not totals.is_name(words[0]):
        return ""
    return " ".join(words)


def find_entities(scans: Sequence[tuple[int, PageScan]]) -> list[Found]:
    """The entries of the pages scanned (all of them read), most named first."""
    totals = _Totals(scans)
    resolved: dict[str, str] = {}  # form as scanned → resolved display form
    uses: Counter[str] = Counter()  # resolved key → uses
    display: dict[str, Counter[str]] = defaultdict(Counter)
    for form, n in totals.forms.items():
        r = _resolve(form, totals)
        if not r:
            continue
        resolved[form] = r
        uses[form_key(r)] += n
        display[form_key(r)][r] += n

    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while key in parent:
            key = parent[key]
        return key

    def join(child: str, into: str) -> None:
        a, b = root(child), root(into)
        if a != b:
            parent[a] = b

    named_so: set[str] = set()
    titled = {k for k in uses if k.split()[0].capitalize() in TITLES and len(k.split()) > 1}
    singles = {k for k in uses if len(k.split()) == 1}
    surnames = {k.split()[-1] for k in titled if k.split()[0] in _SURNAME_TITLES}
    firsts = Counter(
        k.split()[0]
        for k in uses
        if k not in titled and len(k.split()) > 1 and k.split()[0] not in surnames
    )
    full_by_first: dict[str, set[str]] = defaultdict(set)  # first name → its full names
    full_by_last: dict[str, set[str]] = defaultdict(set)  # surname → its full names
    for key in uses:
        parts = key.split()
        if len(parts) == 2 and key not in titled:
            full_by_first[parts[0]].add(key)
            if parts[1] in surnames:
                full_by_last[parts[1]].add(key)
    for key in list(uses):
        parts = key.split()
        if key in titled:
            rest = parts[1:]
            if len(rest) >= 2 and " ".join(rest) in uses:
                if not (
                    parts[0].rstrip(".") == "mrs" and rest[0] in MALE
                ):  # "Mrs. Henry Baker": his wife
                    join(key, " ".join(rest))  # "Miss Elizabeth Bennet" → "Elizabeth Bennet"
            elif len(rest) == 1 and parts[0] in ("miss", "master") and rest[0] in singles:
                if rest[0] not in surnames and (firsts[rest[0]] or uses[rest[0]] > uses[key]):
                    join(key, rest[0])  # "Miss Elizabeth" → "Elizabeth" (a first name)
                    named_so.add(rest[0])
            else:
                longer = [k for k in titled if k != key and k.startswith(key + " ")]
                if len(longer) == 1:  # "Sir William" → "Sir William Lucas"
                    join(key, longer[0])
        elif len(parts) == 2 and parts[0] in singles and parts[0] not in surnames:
            second = display[key].most_common(1)[0][0].split()[-1]
            # a known first name before a surname that is also a word ("John Clay", clay)
            a_word = not totals.is_name(second) and parts[0] not in FIRST_NAMES
            if len(full_by_first[parts[0]]) == 1 or a_word:
                join(key, parts[0])  # "Elizabeth Bennet" → "Elizabeth", "Netherfield Park" →
                # "Netherfield" (not "Lucas Lodge"; nor "John Clay" beside "John Cobb")
        elif len(parts) == 2 and parts[1] in surnames and len(full_by_last[parts[1]]) == 1:
            join(key, parts[1])  # "Sherlock Holmes" → "Holmes" (→ "Mr. Holmes")
    for word in singles:
        if firsts[word] or word in named_so:
            continue  # a first name ("Elizabeth", "Alice"), its own entry
        forms = {k: uses[k] for k in titled if k.split()[-1] == word and len(k.split()) == 2}
        if not forms:
            continue
        total = sum(forms.values())
        male = [k for k in forms if k.split()[0].capitalize() in MALE_TITLES]
        best = max(forms, key=lambda k: forms[k])
        if male and max(forms[k] for k in male) >= 0.3 * total:
            join(word, max(male, key=lambda k: forms[k]))
        elif forms[best] >= 0.75 * total and not (
            best.split()[0] in ("mrs", "lady") and _a_man_named(word, uses)
        ):  # "Cratchit" is Bob Cratchit's, not his wife's, though she is "Mrs. Cratchit"
            join(word, best)
    for key, n in totals.together.items():
        nick, formal = key.split("|")
        if n >= TOGETHER and nick in singles and formal in singles:
            join(nick, formal)
    for nick in singles:
        formal_name = NICKNAMES.get(nick, "")
        if formal_name in singles and _share_surname(nick, formal_name, uses):
            join(nick, formal_name)

    groups: dict[str, list[str]] = defaultdict(list)
    for key in uses:
        groups[root(key)].append(key)
    return _entries(groups, scans, resolved, uses, display, totals)


def _a_man_named(surname: str, uses: Counter[str]) -> bool:
    """A man's full name with this surname is used ("Bob Cratchit")."""
    return any(
        len(parts) == 2 and parts[1] == surname and (NICKNAMES.get(parts[0], parts[0]) in MALE)
        for parts in (k.split() for k in uses)
    )


def _share_surname(nick: str, formal: str, uses: Counter[str]) -> bool:
    surnames = {k.split()[-1] for k in uses if k.split()[0] == formal and len(k.split()) == 2}
    return any(f"{nick} {s}" in uses for s in surnames)


def _entries(
    groups: dict[str, list[str]],
    scans: Sequence[tuple[int, PageScan]],
    resolved: dict[str, str],
    uses: Counter[str],
    display: dict[str, Counter[str]],
    totals: _Totals,
) -> list[Found]:
    group_of = {key: root for root, keys in groups.items() for key in keys}
    surnames = {
        k.split()[-1] for k in uses if len(k.split()) > 1 and k.split()[0] in _SURNAME_TITLES
    }
    pages: dict[str, dict[int, list[object]]] = defaultdict(dict)
    best: dict[str, list[tuple[float, int, str]]] = defaultdict(list)
    place: Counter[str] = Counter()
    speech: Counter[str] = Counter()
    for form, r in resolved.items():
        place[group_of[form_key(r)]] += totals.place.get(form, 0)
        speech[group_of[form_key(r)]] += totals.speech.get(form, 0)
    for page, scan in scans:
        for form, n in scan.forms.items():
            r = resolved.get(form, "")
            if not r:
                continue
            g = group_of[form_key(r)]
            seen = pages[g].setdefault(page, [0, r, 0])
            seen[0] = int(seen[0]) + n  # type: ignore[call-overload]
            if n > int(seen[2]):  # type: ignore[call-overload]
                seen[1], seen[2] = r, n
            telling = scan.best.get(form)
            if telling is not None:
                best[g].append((telling[0], page, telling[1]))
    found: list[Found] = []
    for g, keys in groups.items():
        total = sum(uses[k] for k in keys)
        if total < MIN_USES or not pages[g]:
            continue
        names = Counter[str]()
        for k in keys:
            names.update(display[k])
        titled_forms = [n for n in names if n.split()[0].rstrip(".") in TITLES]
        full = [  # a first name and a surname ("Elizabeth Bennet"), not "Longbourn House"
            n
            for n in names
            if len(n.split()) > 1
            and n.split()[0].rstrip(".") not in TITLES
            and n.split()[-1].casefold() in surnames
        ]
        if full:
            name = max(full, key=lambda n: (names[n], len(n)))
        elif g in {form_key(n) for n in titled_forms}:
            name = max(titled_forms, key=lambda n: (form_key(n) == g, names[n]))
        else:
            name = max(names, key=lambda n: names[n])
        kind = "other"
        if titled_forms:
            kind = "person"
        elif place[g] >= 0.3 * total:
            kind = "place"
        elif speech[g] >= 2:
            kind = "person"
        first = min(pages[g])
        # an introduction tells most: the sentences near the first appearance count more
        told = sorted(best[g], key=lambda t: (-(t[0] + (1.0 if t[1] <= first + 3 else 0)), t[1]))
        chosen: list[tuple[int, str]] = []
        for _score, page, sentence in told:
            if sentence not in (s for _, s in chosen):
                chosen.append((page, sentence))
            if len(chosen) == DESCRIPTION_SENTENCES:
                break
        mentions = tuple(
            (page, int(v[0]), str(v[1]))  # type: ignore[call-overload]
            for page, v in sorted(pages[g].items())
        )
        aliases = tuple(sorted((n for n in names if n != name), key=lambda n: -names[n]))
        found.append(
            Found(g, name, kind, aliases, mentions, tuple(sorted(chosen, key=lambda c: c[0])))
        )
    found.sort(key=lambda f: (-sum(m[1] for m in f.mentions), f.mentions[0][0]))
    return found + _things(scans, totals)


def _things(scans: Sequence[tuple[int, PageScan]], totals: _Totals) -> list[Found]:
    """Things: words rare in English that the pages read come back to ("hookah", "entail"),
    a plural with its singular, most used first (after the names); not a word that stands
    as often as not before a noun it describes ("a shrill voice")."""
    uses: Counter[str] = Counter()
    for _page, scan in scans:
        for word, (n, *_counts) in scan.things.items():
            uses[word] += n

    def base(word: str) -> str:
        return word[:-1] if word.endswith("s") and word[:-1] in uses else word

    total: Counter[str] = Counter()
    after: Counter[str] = Counter()
    pages: dict[str, dict[int, Counter[str]]] = defaultdict(dict)
    best: dict[str, list[tuple[float, int, str]]] = defaultdict(list)
    describing: Counter[str] = Counter()
    described: dict[str, set[str]] = defaultdict(set)  # the nouns it stood before
    for page, scan in scans:
        for word, nouns in scan.before.items():
            described[base(word)].update(nouns)
        for word, (n, det, *rest) in scan.things.items():
            key = base(word)
            total[key] += n
            after[key] += det
            describing[key] += rest[0] if rest else 0
            pages[key].setdefault(page, Counter())[word] += n
            telling = scan.best.get(THING + word)
            if telling is not None:
                best[key].append((telling[0], page, telling[1]))
    found: list[Found] = []
    for key, n in total.most_common():
        if len(found) == MAX_THINGS or n < MIN_THING_USES:
            break
        if len(pages[key]) < 2 or totals.is_name(key.capitalize()):
            continue
        if after[key] < THING_SHARE * n:
            continue  # "agreeable", "cannot": not something one points at
        many = describing[key]
        if many >= max(2, DESCRIBING_SHARE * after[key]) and (
            not described[key] or len(described[key]) >= DESCRIBING_SHARE * many
        ):
            continue  # "a shrill voice", "a solemn air": it describes things, is none
        # (before one noun again and again it is half of a name: "the opium den")
        first = min(pages[key])
        told = sorted(best[key], key=lambda t: (-(t[0] + (1.0 if t[1] <= first + 3 else 0)), t[1]))
        chosen: list[tuple[int, str]] = []
        for _score, page, sentence in told:
            if sentence not in (c[1] for c in chosen):
                chosen.append((page, sentence))
            if len(chosen) == DESCRIPTION_SENTENCES:
                break
        mentions = tuple(
            (page, sum(words.values()), words.most_common(1)[0][0])
            for page, words in sorted(pages[key].items())
        )
        variants = {w for words in pages[key].values() for w in words} - {key}
        found.append(
            Found(
                f"thing:{key}",
                key,
                "thing",
                tuple(sorted(variants)),
                mentions,
                tuple(sorted(chosen, key=lambda c: c[0])),
            )
        )
    return found
