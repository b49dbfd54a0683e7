"""Issue 23, sixth session: gaps a held-out set found in the answer check, each with real
sentences on real books (a leak held, an honest twin shown).

1. Latin letters in disguise (small capitals, letters with hooks, parenthesised, circled,
   regional indicators...) are folded from Unicode's own names (core.agent.spoiler_fold), over
   whole ranges; Greek and Cyrillic words that are really Greek or Cyrillic stay as they are.
2. A later name the book uses once, or whose stem a common word shares ("Belle", p. 44 of A
   Christmas Carol, stem "bell" like the bells of p. 13), is held back.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterator

import pytest

from core.agent import spoiler_fold
from core.agent.spoiler_semantic import BookMeaning
from core.agent.spoilers import Segment, SpoilerGuard, SpoilerIndex, visible_text
from core.books.importer import import_book
from core.paths import resolve_paths
from core.store.library import Library
from tests.bench.spoiler_books import CAROL, HOLMES
from tests.conftest import BOOKS
from tests.core.agent.spoiler_eval import load_meanings

READ_TO = {"alice": 21, "metamorphosis": 28, "carol": 25, "holmes": 60}  # spoiler_eval's bounds
FILES = {"alice": BOOKS / "alice_in_wonderland.epub", "metamorphosis": BOOKS / "metamorphosis.epub"}
FILES |= {"carol": CAROL, "holmes": HOLMES}

# --- 1. look-alike letters, without a book --------------------------------------------------


def test_the_stored_fold_table_is_what_unicode_data_gives() -> None:
    version, table = spoiler_fold.stored_table()
    if unicodedata.unidata_version != version:
        pytest.skip("another Unicode version: python -m core.agent.spoiler_fold makes the table")
    assert table == spoiler_fold.derive()


FAMILIES = (
    "LATIN LETTER SMALL CAPITAL {}",
    "MODIFIER LETTER SMALL CAPITAL {}",
    "MODIFIER LETTER SMALL {}",
    "MODIFIER LETTER CAPITAL {}",
    "LATIN SUBSCRIPT SMALL LETTER {}",
    "CIRCLED LATIN CAPITAL LETTER {}",
    "CIRCLED LATIN SMALL LETTER {}",
    "PARENTHESIZED LATIN SMALL LETTER {}",
    "PARENTHESIZED LATIN CAPITAL LETTER {}",
    "NEGATIVE CIRCLED LATIN CAPITAL LETTER {}",
    "SQUARED LATIN CAPITAL LETTER {}",
    "NEGATIVE SQUARED LATIN CAPITAL LETTER {}",
    "REGIONAL INDICATOR SYMBOL LETTER {}",
    "FULLWIDTH LATIN CAPITAL LETTER {}",
    "FULLWIDTH LATIN SMALL LETTER {}",
    "LATIN SMALL LETTER {} WITH HOOK",
    "LATIN CAPITAL LETTER {} WITH HOOK",
    "LATIN SMALL LETTER {} WITH STROKE",
    "LATIN SMALL LETTER {} WITH PALATAL HOOK",
    "LATIN SMALL LETTER {} WITH RETROFLEX HOOK",
    "LATIN SMALL LETTER {} WITH TAIL",
    *(
        f"MATHEMATICAL {style} {case} {{}}"
        for style in (
            "BOLD",
            "ITALIC",
            "BOLD ITALIC",
            "SCRIPT",
            "BOLD SCRIPT",
            "FRAKTUR",
            "DOUBLE-STRUCK",
            "BOLD FRAKTUR",
            "SANS-SERIF",
            "SANS-SERIF BOLD",
            "SANS-SERIF ITALIC",
            "SANS-SERIF BOLD ITALIC",
            "MONOSPACE",
        )
        for case in ("CAPITAL", "SMALL")
    ),
)


def test_every_letter_of_each_look_alike_family_reads_as_its_latin_letter() -> None:
    checked = 0
    for family in FAMILIES:
        for letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ":
            try:
                char = unicodedata.lookup(family.format(letter))
            except KeyError:
                continue  # Unicode has no such letter ("LATIN LETTER SMALL CAPITAL X")
            # inside a word: "W<letter>ndibank" stays one word of plain letters
            assert (
                visible_text(f"W{char}nd") == f"W{letter.lower()}nd"
                or visible_text(f"W{char}nd") == f"W{letter}nd"
            ), (family.format(letter), visible_text(f"W{char}nd"))
            checked += 1
    assert checked > 700


_LATIN_LETTER = re.compile(
    r"^LATIN (?:CAPITAL |SMALL )?(?:LETTER |CAPITAL LETTER )(?:SMALL CAPITAL |DOTLESS |SCRIPT )?"
    r"([A-Z])(?: WITH .*)?$"
)


def test_every_latin_letter_in_unicode_reads_as_plain_latin() -> None:
    """Over all of Unicode: a character named "LATIN ... LETTER X [WITH ...]" is shown as
    plain Latin letters, never as a letter the check cannot match."""
    found = 0
    for cp in range(0x80, sys.maxunicode + 1):
        name = unicodedata.name(chr(cp), "")
        m = _LATIN_LETTER.match(name)
        if m is None:
            continue
        shown = visible_text(chr(cp))
        assert shown.isascii() and shown.isalpha(), (hex(cp), name, shown)
        assert m.group(1) in shown.upper(), (hex(cp), name, shown)
        found += 1
    assert found > 700


@pytest.mark.parametrize(
    ("shown", "plain"),
    [
        ("ʀᴏʏʟᴏᴛᴛ", "ROYLOTT"),  # small capitals read as capitals
        ("Røƴɭøƭƭ", "Roylott"),  # letters with hooks and strokes
        ("⒭⒪⒴⒧⒪⒯⒯", "roylott"),  # parenthesised: never "(r)(o)..."
        ("🅡🅞🅨🅛🅞🅣🅣", "ROYLOTT"),
        ("🇷🇴🇾🇱🇴🇹🇹", "ROYLOTT"),
        ("𝑅𝑜𝑦𝑙𝑜𝑡𝑡", "Roylott"),
        ("Wɑtsɩn", "Watsin"),  # Latin alpha and iota
        ("Wіndіbank", "Windibank"),  # Cyrillic "і" inside a Latin word
        ("Holmes meets Соре.", "Holmes meets Cope."),  # all look-alikes, in an English text
        ("Holmes meets ꓪꓲꓠꓓꓲꓐꓮꓠꓗ.", "Holmes meets WINDIBANK."),  # Lisu capitals
        ("Hօlmes", "Holmes"),  # an Armenian "օ"
    ],
)
def test_a_disguised_word_reads_as_its_latin_skeleton(shown: str, plain: str) -> None:
    assert visible_text(shown) == plain


@pytest.mark.parametrize(
    "text",
    [
        "Алиса падает в кроличью нору, а Грегор просыпается насекомым.",
        "Η Αλίκη πέφτει στην τρύπα του κουνελιού.",
        "Ὁ Σκρούτζ δὲν ἀγαπᾷ τὰ Χριστούγεννα.",
        "Ալիսը ընկնում է ճագարի բունը։",
    ],
)
def test_words_really_in_greek_or_cyrillic_are_not_made_latin(text: str) -> None:
    shown = visible_text(text)
    assert not re.search(r"[A-Za-z]", shown), shown  # no letter turned into a Latin one
    assert not re.search(r"[A-Za-z]", spoiler_fold.fold_scripts(text))


# --- with the real books --------------------------------------------------------------------

Books = tuple[Library, dict[str, int]]


@pytest.fixture(scope="module")
def books(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Books]:
    lib = Library.open(resolve_paths(tmp_path_factory.mktemp("gaps") / "home"))
    ids = {name: import_book(lib, path).book.id for name, path in FILES.items() if path.is_file()}
    yield lib, ids
    lib.close()


def check(books: Books, name: str, text: str, question: str = "What happened so far?") -> Segment:
    lib, ids = books
    if name not in ids:
        pytest.skip(f"{name}: its EPUB is built by tests/bench/spoiler_books.py")
    guard = SpoilerGuard(
        SpoilerIndex.build(lib.db, ids[name]),
        read_to=READ_TO[name],
        question=question,
        meaning=BookMeaning(),  # no vectors made: the lexical check, as before they load
    )
    segments = guard.feed(text) + guard.flush()
    assert len(segments) == 1
    return segments[0]


@pytest.mark.parametrize(
    "leak",
    [
        "Dr. ʀᴏʏʟᴏᴛᴛ threatens Holmes in Baker Street.",
        "Dr. Røƴɭøƭƭ threatens Holmes in Baker Street.",
        "Dr. ⒭⒪⒴⒧⒪⒯⒯ threatens Holmes in Baker Street.",
        "Dr. 🇷🇴🇾🇱🇴🇹🇹 threatens Holmes in Baker Street.",
    ],
)
def test_a_later_name_in_disguised_letters_is_held(books: Books, leak: str) -> None:
    segment = check(books, "holmes", leak)
    assert segment.hidden and [t.first_page for t in segment.terms] == [192]  # Roylott


@pytest.mark.parametrize(
    "honest",
    [
        "Holmes and ᴡᴀᴛꜱᴏɴ visit the pawnbroker's shop.",
        "Holmes and Wɑtson visit the pawnbroker's shop.",
    ],
)
def test_a_name_already_met_in_disguised_letters_is_shown(books: Books, honest: str) -> None:
    assert not check(books, "holmes", honest).hidden


@pytest.mark.parametrize(
    "honest",
    ["Алиса падает в кроличью нору.", "Η Αλίκη πέφτει στην τρύπα του κουνελιού."],
)
def test_an_answer_in_greek_or_cyrillic_is_no_false_alarm(books: Books, honest: str) -> None:
    assert not check(books, "alice", honest).hidden


# --- 2. a later name used once, or sharing a common word's stem -----------------------------


@pytest.mark.parametrize(
    "leak",
    [
        "Belle releases him from their engagement because he loves money more.",
        "He once loved a girl called Belle, who left him.",
        "ʙᴇʟʟᴇ releases him from their engagement because he loves money more.",
    ],
)
def test_a_later_name_the_book_uses_once_is_held(books: Books, leak: str) -> None:
    segment = check(books, "carol", leak)
    assert segment.hidden and segment.kind == "later"
    assert [(t.term.lower(), t.first_page) for t in segment.terms][:1] == [("belle", 44)]


@pytest.mark.parametrize(
    "honest",
    [
        "Scrooge hears a bell ringing in the house.",  # the same stem, met on p. 13
        "Bells ring in the old church tower.",  # a sentence's first word, capitalised
        "The belle of the ball is not in this part of the story.",  # lower case: no name
    ],
)
def test_the_common_word_of_the_same_stem_is_shown(books: Books, honest: str) -> None:
    assert not check(books, "carol", honest).hidden


def test_a_name_used_once_before_the_bound_is_shown(books: Books) -> None:
    lib, ids = books
    if "carol" not in ids:
        pytest.skip("carol: its EPUB is built by tests/bench/spoiler_books.py")
    index = SpoilerIndex.build(lib.db, ids["carol"])
    assert index.name_forms["belle"] == 44
    early = sorted(f for f, page in index.name_forms.items() if page <= READ_TO["carol"])
    assert "marley" in early
    assert not check(books, "carol", "Marley's ghost warns Scrooge in his rooms.").hidden


# --- 3. plain-word leaks sent for verification; 4. what A Christmas Carol's misses taught -----


@pytest.fixture(scope="module")
def meanings(books: Books) -> BookMeaning:
    lib, ids = books
    return load_meanings(lib.db, ids.values())


def checked(
    books: Books, meanings: BookMeaning, name: str, text: str, *, wide: bool = True
) -> Segment:
    lib, ids = books
    if name not in ids:
        pytest.skip(f"{name}: its EPUB is built by tests/bench/spoiler_books.py")
    guard = SpoilerGuard(
        SpoilerIndex.build(lib.db, ids[name]),
        read_to=READ_TO[name],
        question="What has happened so far?",
        meaning=meanings,
    )
    guard.verify_wide = wide
    segments = guard.feed(text) + guard.flush()
    assert len(segments) == 1
    return segments[0]


PLAIN_WORD_LEAKS = [
    ("metamorphosis", "The family take in paying guests to make ends meet."),
    ("metamorphosis", "An apple sinks into his back and rots there."),
    ("metamorphosis", "Gregor learns that his father kept back some money from the old business."),
    ("alice", "The last witness called at the trial is Alice herself."),
]


@pytest.mark.parametrize(("book", "leak"), PLAIN_WORD_LEAKS)
def test_a_plain_word_leak_goes_to_verification(
    books: Books, meanings: BookMeaning, book: str, leak: str
) -> None:
    """Leaks told in the book's plain words, none of them a later name: the wide check marks
    each doubtful, so a connected model verifies it before the reader sees it (with no model
    it is shown unless the check holds it outright)."""
    assert checked(books, meanings, book, leak).doubtful


@pytest.mark.parametrize(("book", "leak"), PLAIN_WORD_LEAKS)
def test_the_narrow_check_alone_lets_a_plain_word_leak_through(
    books: Books, meanings: BookMeaning, book: str, leak: str
) -> None:
    """Why the wide check exists: the names-and-phrases check alone neither holds nor doubts
    these. Kept apart from the test above, so a change to the narrow check reads as itself.
    Its outcome depends on the whole library the statistics come from: without the two
    Standard Ebooks fixtures (once outside the repository) the Gregor sentence was held as
    unsupported, which is why the old combined test failed on a fresh machine."""
    narrow = checked(books, meanings, book, leak, wide=False)
    assert not narrow.hidden and not narrow.doubtful


@pytest.mark.parametrize(
    ("book", "honest"),
    [
        (
            "metamorphosis",
            "His father drives him back into his room with a walking stick and a newspaper.",
        ),
        ("metamorphosis", "Gregor is a travelling salesman who sells cloth."),
        ("alice", "She scolds herself sharply for crying like a baby."),
        ("carol", "He eats his dinner alone in a melancholy tavern."),
    ],
)
def test_an_honest_sentence_about_pages_read_costs_no_verification(
    books: Books, meanings: BookMeaning, book: str, honest: str
) -> None:
    segment = checked(books, meanings, book, honest)
    assert not segment.hidden and not segment.doubtful


def test_two_uncommon_words_new_after_the_bound_hold_a_sentence(
    books: Books, meanings: BookMeaning
) -> None:
    """A Christmas Carol at the end of Stave I: "youngest" (p. 58) and "lame" (p. 56) are both
    uncommon and both first used later, though never near each other in the book."""
    leak = "His clerk's youngest son is lame and may not live unless things change."
    segment = checked(books, meanings, "carol", leak)
    assert segment.hidden and {t.term for t in segment.terms} == {"youngest", "lame"}
    assert all(t.weak for t in segment.terms)  # a model may still show it
    honest = "Scrooge's clerk has a large family to feed on fifteen shillings a week."
    assert not checked(books, meanings, "carol", honest).hidden


@pytest.mark.parametrize(
    "honest",
    [
        "Scrooge is a lonely, greedy old man who hates Christmas.",
        "Scrooge is a greedy old man who hates Christmas.",
    ],
)
def test_a_description_the_pages_read_match_in_meaning_is_shown(
    books: Books, meanings: BookMeaning, honest: str
) -> None:
    """ "greedy" is first on p. 40 and "lonely" on p. 31: later pages share more of the words,
    but the pages read (Stave I) are clearly closer in meaning. Before, held as unsupported."""
    assert checked(books, meanings, "carol", honest, wide=False).hidden
    segment = checked(books, meanings, "carol", honest)
    assert not segment.hidden and segment.doubtful  # a connected model may still hold it


def test_a_leak_the_lexical_test_holds_stays_held(books: Books, meanings: BookMeaning) -> None:
    leak = "The cleaning woman finds him lying dead one morning."
    segment = checked(books, meanings, "metamorphosis", leak)
    assert segment.hidden and segment.kind == "unsupported"
