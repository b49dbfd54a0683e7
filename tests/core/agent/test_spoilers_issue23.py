"""Issue 23 (and issue 31 item 4): what the spoiler check must not let through, and what it
must not hold back. Each test here fails on the check as it was before the issue.

- case 2: page labels past the bound never become chips or stored citations; ranges are
  refused whole, never clamped; the sentence carrying one is checked;
- case 3: the check reads what the reader sees (Markdown, entities, invisible and combining
  characters, look-alike letters, a right-to-left override), and never cuts a word in two;
- case 4: front matter (a list of illustrations) never counts as read;
- case 5: a leak told in plain words is held back as "not from the pages you have read";
- case 7: the app's own words (passages mode) are never checked;
- case 8: ``history --json`` keeps held-back text out unless ``--reveal``; the counts are made
  at import;
- issue 31 item 4: "The answer: Holmes …" is no phrase of the book.
"""

from __future__ import annotations

import asyncio
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.agent.answer import UNSUPPORTED_NOTICE, AnswerState, notice_text
from core.agent.events import RunFinished, SpoilerHidden, TextDelta
from core.agent.service import AgentService
from core.agent.spoilers import (
    Segment,
    SpoilerGuard,
    SpoilerIndex,
    prepare_book,
    visible_text,
)
from core.books.importer import import_book
from core.paths import resolve_paths
from core.settings import AgentLimits, Settings
from core.store.conversations import ConversationInfo
from core.store.library import BookInfo, Library
from tests.conftest import BOOKS
from tests.core.agent.conftest import fast_factory
from tests.core.agent.spoiler_eval import TRICKS, evaluate_kinds, oracle, total
from tests.fakes.anthropic_server import FakeAnthropic, Reply

ALICE_READ_TO = 21  # the end of chapter III
META_READ_TO = 28  # the end of part I
KEY = "sk-ant-spoiler-test-key-000"


def collect(agen: Any) -> list[Any]:
    async def go() -> list[Any]:
        return [e async for e in agen]

    return asyncio.run(go())


def run(guard: SpoilerGuard, pieces: list[str]) -> list[Segment]:
    out: list[Segment] = []
    for piece in pieces:
        out.extend(guard.feed(piece))
        out.extend(guard.release())
    return out + guard.flush()


@pytest.fixture(scope="module")
def books(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Library, dict[str, int]]]:
    lib = Library.open(resolve_paths(tmp_path_factory.mktemp("spoilers23") / "home"))
    ids = {
        "alice": import_book(lib, BOOKS / "alice_in_wonderland.epub").book.id,
        "metamorphosis": import_book(lib, BOOKS / "metamorphosis.epub").book.id,
    }
    yield lib, ids
    lib.close()


@pytest.fixture(scope="module")
def alice(books: tuple[Library, dict[str, int]]) -> SpoilerIndex:
    lib, ids = books
    return SpoilerIndex.build(lib.db, ids["alice"])


@pytest.fixture(scope="module")
def metamorphosis(books: tuple[Library, dict[str, int]]) -> SpoilerIndex:
    lib, ids = books
    return SpoilerIndex.build(lib.db, ids["metamorphosis"])


# --- a small EPUB written by the test ---------------------------------------------------------


def make_epub(path: Path, title: str, sections: list[str]) -> Path:
    """An EPUB whose spine is ``sections`` (paragraphs separated by blank lines)."""
    items = "".join(
        f'<item id="s{i}" href="s{i}.xhtml" media-type="application/xhtml+xml"/>'
        for i in range(len(sections))
    )
    spine = "".join(f'<itemref idref="s{i}"/>' for i in range(len(sections)))
    opf = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<package xmlns="http://www.idpf.org/2007/opf" version="2.0" unique-identifier="id">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f'<dc:identifier id="id">{title}</dc:identifier><dc:title>{title}</dc:title>'
        "<dc:creator>A. Writer</dc:creator><dc:language>en</dc:language></metadata>"
        f"<manifest>{items}</manifest><spine>{spine}</spine></package>"
    )
    container = (
        '<?xml version="1.0"?><container version="1.0" '
        'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="content.opf" media-type="application/oebps-package+xml"/>'
        "</rootfiles></container>"
    )
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/epub+zip", zipfile.ZIP_STORED)
        z.writestr("META-INF/container.xml", container)
        z.writestr("content.opf", opf)
        for i, text in enumerate(sections):
            paras = "".join(f"<p>{p}</p>" for p in text.split("\n\n"))
            z.writestr(
                f"s{i}.xhtml",
                '<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
                f"<head><title>{i}</title></head><body>{paras}</body></html>",
            )
    return path


STORY = [
    "The old man counted his coins by the window while the fog pressed against the glass.",
    "His clerk warmed his hands over a single coal and copied letters in silence.",
    "Nobody in the street ever stopped to ask how he was, and he liked it that way.",
    "The bells of the church struck the hour, and the shops began to close their shutters.",
    "He ate his supper alone in a dark tavern and read the newspapers twice over.",
    "At home he climbed the wide stairs with a candle and locked the heavy door behind him.",
]


def chapter(n: int, extra: str = "") -> str:
    body = "\n\n".join(STORY[(n + k) % len(STORY)] for k in range(len(STORY)))
    return f"Chapter {n}\n\n{body}\n\n{extra}\n\n{body}"


# --- case 2: sources never point past the bound ------------------------------------------------


@pytest.fixture
def alice_21(library: Library, books_dir: Path) -> BookInfo:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    return library.set_position(book.id, ALICE_READ_TO)


def service_for(library: Library, fake: FakeAnthropic, provider: str) -> AgentService:
    settings = Settings(
        provider=provider,
        base_url=fake.url,
        model="claude-test",
        limits=AgentLimits(),
        strategy="tool-use",  # the scripted replies are a tool-using model's (no probe)
    )
    return AgentService(
        library, library.paths, settings, provider_factory=fast_factory, retry_delay=0.01
    )


def part_one_chat(
    library: Library, books_dir: Path, fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> tuple[AgentService, ConversationInfo]:
    """The Metamorphosis read to the end of part I, and a conversation about it with Claude
    (the fake server)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    book = import_book(library, books_dir / "metamorphosis.epub").book
    library.set_position(book.id, META_READ_TO)
    service = service_for(library, fake, "anthropic")
    return service, service.create_conversation(book.id)


def test_page_labels_past_the_bound_never_become_chips(
    library: Library,
    alice_21: BookInfo,
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    service = service_for(library, fake_anthropic, "local")  # no native citations
    conv = service.create_conversation(alice_21.id)
    answer = (
        "Alice falls down the rabbit-hole [p. 3]. "
        "In the end it all ends well [p. 90]. "
        "The whole story is told in [pp. 5-400]. "
        "She cries a pool of tears [pp. 12-13]."
    )
    # the model reads the pages it cites: a label is a source only for a page it was given
    # (issue 40)
    fake_anthropic.add(
        Reply.tools(
            ("read_pages", {"start": 3, "end": 3}), ("read_pages", {"start": 12, "end": 13})
        ),
        Reply.text(answer),
    )
    events = collect(service.ask(conv.id, "What happens?"))
    assert isinstance(events[-1], RunFinished)
    state = AnswerState()
    for e in events:
        state.apply(e)
    pages = {(c.first_page, c.last_page) for c in state.citations}
    assert pages == {(3, 3), (12, 13)}  # p. 90 is past the bound; pp. 5-400 past the book
    assert all(c.last_page <= ALICE_READ_TO for c in state.citations)
    stored = service.history(conv.id)[-1]
    assert {(c.first_page, c.last_page) for c in stored.citations} == {(3, 3), (12, 13)}
    # the sentence carrying the later page is checked like any other: held back
    hidden = [e.withheld for e in events if isinstance(e, SpoilerHidden)]
    assert any("[p. 90]" in w.text for w in hidden)
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert "[p. 90]" not in shown and "rabbit-hole [p. 3]" in shown


def test_a_label_past_the_bound_is_a_term(alice: SpoilerIndex) -> None:
    guard = SpoilerGuard(alice, read_to=ALICE_READ_TO, question="")
    terms = guard.spoiler_terms("It ends well [pp. 80–82].")
    assert [(t.term, t.first_page) for t in terms] == [("pp. 80–82", 82)]
    assert guard.spoiler_terms("She cries [p. 12].") == ()


# --- case 3: what the reader sees -----------------------------------------------------------


@pytest.mark.parametrize("trick", sorted(TRICKS))
def test_a_later_name_written_with_a_trick_is_still_held(alice: SpoilerIndex, trick: str) -> None:
    _, apply = TRICKS[trick]
    sentence = f"Then Alice talks with the {apply('Caterpillar')}."
    guard = SpoilerGuard(alice, read_to=ALICE_READ_TO, question="", semantic=False)
    segments = run(guard, [sentence])
    assert "".join(s.text for s in segments) == sentence  # nothing lost, nothing changed
    assert any(s.hidden for s in segments), sentence


@pytest.mark.parametrize(
    ("shown", "plain"),
    [
        ("**Windi**bank", "Windibank"),
        ("Windi&#98;ank", "Windibank"),
        ("Windi\u200bbank", "Windibank"),
        ("Windi\u00adbank", "Windibank"),
        ("Windiba\u0301nk", "Windibank"),
        ("Wіndіbаnk", "Windibank"),  # Cyrillic і and а
        ("ＷＩＮＤＩＢＡＮＫ", "WINDIBANK"),
        ("\u202eknabidniW\u202c", "Windibank"),
        ("[Windibank](https://example.org)", "Windibank"),
    ],
)
def test_visible_text(shown: str, plain: str) -> None:
    assert visible_text(shown) == plain


def test_an_honest_answer_with_markup_is_not_held(alice: SpoilerIndex) -> None:
    guard = SpoilerGuard(alice, read_to=ALICE_READ_TO, question="")
    answer = "**Alice** follows the *White Rabbit* down the rabbit&#8209;hole.\n\n- She falls."
    assert not any(s.hidden for s in run(guard, [answer]))


def test_a_run_on_answer_is_never_cut_inside_a_word(alice: SpoilerIndex) -> None:
    # 200 characters with no space, the name straddling the 200th: once cut in two, each
    # half passed the check
    answer = "/".join(["rabbit"] * 28) + "/Caterpillar/" + "/".join(["hall"] * 10) + " and so on"
    assert answer.index("Caterpillar") < 200 < answer.index("Caterpillar") + 11
    guard = SpoilerGuard(alice, read_to=ALICE_READ_TO, question="", semantic=False)
    segments = run(guard, [answer[k : k + 7] for k in range(0, len(answer), 7)])
    assert "".join(s.text for s in segments) == answer
    held = [s for s in segments if "Caterpillar" in s.text]
    assert held and all(s.hidden for s in held)


# --- case 4: front matter never counts as read ---------------------------------------------


def test_names_in_a_list_of_illustrations_do_not_count_as_read(tmp_path: Path) -> None:
    sections = [
        "A Winter Tale\n\nBy A. Writer.",
        "List of Illustrations\n\nMr. Fezziwig’s Ball — Frontispiece\n\nThe Ghost at the Door"
        "\n\nThe Last of the Visitors\n\nFezziwig and the Fiddler",
        *[chapter(n) for n in range(1, 16)],
        *[
            chapter(n, "Old Fezziwig laughed, and Mrs. Fezziwig danced with the fiddler.")
            for n in range(16, 22)
        ],
    ]
    lib = Library.open(resolve_paths(tmp_path / "home"))
    book = import_book(lib, make_epub(tmp_path / "tale.epub", "A Winter Tale", sections)).book
    index = SpoilerIndex.build(lib.db, book.id)
    first = index.first_page[index.stems(["fezziwig"])["fezziwig"]]
    assert first > 12
    guard = SpoilerGuard(index, read_to=12, question="Who was his master?")
    terms = guard.spoiler_terms("Fezziwig was his kind old master.")
    assert [t.term for t in terms] == ["Fezziwig"]
    lib.close()


# --- case 5: plain words --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("book", "read_to", "question", "sentence"),
    [
        (
            "metamorphosis",
            META_READ_TO,
            "What happens to Gregor?",
            "The cleaning woman finds him lying dead one morning.",
        ),
        (
            "alice",
            ALICE_READ_TO,
            "Does Alice ever get home again?",
            "Yes: she does get home in the end, because the whole adventure was a dream.",
        ),
    ],
)
def test_a_leak_in_plain_words_is_held_as_not_from_the_pages_read(
    books: tuple[Library, dict[str, int]], book: str, read_to: int, question: str, sentence: str
) -> None:
    lib, ids = books
    index = SpoilerIndex.build(lib.db, ids[book])
    guard = SpoilerGuard(index, read_to=read_to, question=question)
    (segment,) = run(guard, [sentence])
    assert segment.hidden and segment.kind == "unsupported" and segment.terms == ()
    # without the semantic layer it passed
    assert (
        not SpoilerGuard(index, read_to=read_to, question=question, semantic=False)
        .check(sentence)
        .hidden
    )


def test_an_honest_sentence_about_the_pages_read_is_supported(metamorphosis: SpoilerIndex) -> None:
    guard = SpoilerGuard(metamorphosis, read_to=META_READ_TO, question="")
    for sentence in (
        "Gregor opens the door with his mouth, turning the key in the lock.",
        "His father drives him back into his room with a walking stick and a newspaper.",
    ):
        assert not guard.check(sentence).hidden, sentence


def test_the_unsupported_notice_is_its_own(
    library: Library,
    books_dir: Path,
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    service, conv = part_one_chat(library, books_dir, fake_anthropic, monkeypatch)
    fake_anthropic.add(
        Reply.text("Gregor wakes up changed. The cleaning woman finds him lying dead one morning.")
    )
    events = collect(service.ask(conv.id, "What happens to Gregor?"))
    (hidden,) = [e.withheld for e in events if isinstance(e, SpoilerHidden)]
    assert hidden.reason == "unsupported"
    assert notice_text(hidden) == UNSUPPORTED_NOTICE
    assert "not from the pages you have read" in notice_text(hidden)
    stored = service.history(conv.id)[-1]
    assert stored.withheld[0].reason == "unsupported"  # kept across a restart


# --- case 7: the app's own words ------------------------------------------------------------


def test_passages_mode_framing_is_never_held(
    library: Library, books_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    library.set_position(book.id, 3)  # "Passages" first appears on p. 6
    service = AgentService(library, library.paths, Settings(provider="passages"))
    conv = service.create_conversation(book.id)
    events = collect(service.ask(conv.id, "the White Rabbit with pink eyes"))
    assert isinstance(events[-1], RunFinished)
    assert not any(isinstance(e, SpoilerHidden) for e in events)
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert shown.startswith("**From the book**")


def test_the_selections_page_label_counts_as_read(alice: SpoilerIndex) -> None:
    selection = "“Have some wine,” the March Hare said in an encouraging tone."
    guard = SpoilerGuard(
        alice,
        read_to=ALICE_READ_TO,
        question="Explain this",
        selection=selection,
        selection_page=47,
    )
    assert not guard.check("The March Hare offers wine that is not there [p. 47].").hidden
    assert guard.check("Then the Queen shouts at everyone [p. 60].").hidden


# --- case 8: history --json, counts at import ----------------------------------------------


def test_history_json_keeps_held_back_text_out_unless_reveal(
    library: Library,
    alice_21: BookInfo,
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from core.cli import main

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    library.close()
    leak = "Later the Knave of Hearts is accused of stealing the tarts."
    fake_anthropic.add(Reply.text(f"Alice grows. {leak}"))
    assert main(["ask", str(alice_21.id), "What happens?", "--json"]) == 0
    out = capsys.readouterr().out
    assert "Knave" not in out and "tarts" not in out
    assert main(["history", "1", "--json"]) == 0
    out = capsys.readouterr().out
    assert "Knave" not in out and "tarts" not in out
    rows = json.loads(out)
    (item,) = rows[-1]["withheld"]
    assert item["read_to"] == ALICE_READ_TO and "text" not in item and "terms" not in item
    assert main(["history", "1", "--json", "--reveal"]) == 0
    out = capsys.readouterr().out
    assert "Knave" in out and json.loads(out)[-1]["withheld"][0]["terms"]


def test_a_cli_import_leaves_the_counts_to_the_window_or_the_first_question(
    library: Library, books_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 41: counting took a third of `margin import`; the window counts a book's
    statistics once it is opened (tests/desktop/test_window_library.py), a question asked
    first counts them itself."""
    from core.cli import main

    library.close()
    assert main(["import", str(books_dir / "metamorphosis.epub")]) == 0
    capsys.readouterr()
    lib = Library.open(resolve_paths())
    assert lib.db.execute_sql("SELECT count(*) FROM spoiler_stats").fetchone()[0] == 0
    book_id = lib.list_books()[0].id
    assert prepare_book(lib.db, book_id) is True
    assert prepare_book(lib.db, book_id) is False  # kept: nothing more to count
    lib.close()


# --- issue 31 item 4 ------------------------------------------------------------------------


def test_a_phrase_is_never_matched_across_the_models_punctuation(tmp_path: Path) -> None:
    early = "Holmes lit his pipe. I asked a question and waited for an answer from him."
    later = "I asked him again and got no answer. Holmes rose and went to the window."
    sections = [
        *[chapter(n, early) for n in range(1, 12)],
        *[chapter(n, later) for n in range(12, 20)],
    ]
    lib = Library.open(resolve_paths(tmp_path / "home"))
    book = import_book(lib, make_epub(tmp_path / "cases.epub", "Cases", sections)).book
    index = SpoilerIndex.build(lib.db, book.id)
    assert index.phrase("answer holmes")[1] >= 3  # the book has the pair, across its own stop
    guard = SpoilerGuard(index, read_to=10, question="Why does Holmes admire her?")
    assert guard.spoiler_terms("The answer: Holmes admires her for her wit.") == ()
    assert guard.spoiler_terms("In short. Holmes admires her.") == ()
    lib.close()


# --- the evaluation set by kind (fixture books) ---------------------------------------------


def test_evaluation_by_kind(books: tuple[Library, dict[str, int]]) -> None:
    """Regression guard at the figures measured on the fixture books (issue 23, second
    session; before issue 23: original 78 % / 1.8 %, plain 54 %, markup 54 %, look-alike
    50 %). With no model the lexical check decides alone; the aims (95 % caught, 2 % false
    alarms in every kind) are met by the trick kinds, and false alarms in all kinds."""
    lib, ids = books
    kinds = evaluate_kinds(lib.db, ids)
    assert kinds["markup"].leaks >= 100 and kinds["look-alike"].leaks >= 40
    everything = total(kinds)
    assert everything.leaks >= 300 and everything.honest >= 350
    details = "\n".join(m for r in kinds.values() for m in r.missed + r.alarms)
    for kind in ("markup", "look-alike"):
        assert kinds[kind].recall == 1.0 and kinds[kind].false_alarms == 0, details
    assert kinds["original"].recall >= 0.81, details  # 86/105
    assert kinds["original"].false_alarm_rate <= 0.02, details  # 3/164
    assert kinds["plain"].recall >= 0.68, details  # 45/66
    assert kinds["plain"].false_alarms == 0, details  # 0/54 (3 before: "until she" ...)
    assert everything.false_alarm_rate <= 0.01, details  # 3/386


def test_evaluation_with_a_verifying_model(books: tuple[Library, dict[str, int]]) -> None:
    """The same set when a model verifies the doubtful sentences and answers them right (the
    best a verification can do: a real model's accuracy is not measured here): 96 % of leaks
    caught, 0.3 % false alarms, about one sentence in four verified."""
    lib, ids = books
    kinds = evaluate_kinds(lib.db, ids, verify=oracle)
    everything = total(kinds)
    details = "\n".join(m for r in kinds.values() for m in r.missed + r.alarms)
    assert kinds["original"].recall >= 0.93, details  # 98/105
    assert kinds["plain"].recall >= 0.92, details  # 61/66
    assert everything.recall >= 0.95 and everything.false_alarm_rate <= 0.005, details
    assert everything.verified <= 0.25 * everything.sentences  # 166/725
