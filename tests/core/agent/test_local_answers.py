"""Local models answer from the book (issue 40, items 3–6): a prompt in a budget of tokens,
citations only from what the model read, invented sentences told apart from spoilers, and an
answer with no words marked and answered with the passages. The real SDK and provider
(``provider = "local"``) against the fake server on loopback, Alice read to p. 45."""

from __future__ import annotations

from typing import Any

from core.agent.answer import UNGROUNDED_NOTICE, notice_text
from core.agent.bare import EMPTY_STOP, NOTICE, is_bare
from core.agent.budget import BUDGETS, tokens
from core.agent.events import Notice, RunFinished
from core.agent.grounding import claims, supporting
from core.agent.types import Passage
from core.search import BookSearch
from core.store.library import BookInfo, Library
from tests.core.agent.test_local_models import ask, local_service
from tests.fakes.anthropic_server import FakeAnthropic, Reply

GRIN = "Why does the Cheshire Cat grin?"


def passages_sent(body: dict[str, Any]) -> list[str]:
    """The passages' texts in a request (search_result blocks or labelled text)."""
    out = []
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "search_result":
                out.append(" ".join(c["text"] for c in block["content"]))
            elif block.get("type") == "text" and block["text"].startswith("<passage"):
                out.append(block["text"])
    return out


def sent_text(body: dict[str, Any]) -> str:
    parts = []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            parts.append(content)
            continue
        for block in content:
            if block.get("type") == "text":
                parts.append(block["text"])
            for inner in block.get("content", []) if isinstance(block.get("content"), list) else []:
                if isinstance(inner, dict) and inner.get("type") == "text":
                    parts.append(inner["text"])
    return "\n".join(parts)


# 3. a local model reads the best sentences, within a budget of tokens ----------------------


def test_a_local_model_gets_the_best_sentences_within_the_readers_budget(
    library: Library, alice: BookInfo, fake_anthropic: FakeAnthropic
) -> None:
    sizes = {}
    for reading in ("speed", "breadth"):
        fake_anthropic.add(Reply.text("It is a Cheshire cat."))
        service = local_service(library, fake_anthropic, "always-retrieve")
        service.update_settings(
            __import__("dataclasses").replace(service.settings, local_reading=reading)
        )
        events = ask(service, alice, GRIN)
        assert isinstance(events[-1], RunFinished)
        body = fake_anthropic.message_requests[-1].body
        text = sent_text(body)
        # the answering sentence is there, whatever the budget
        assert "It’s a Cheshire cat,” said the Duchess" in text
        full = sum(tokens(p.text) for p in events[-1].result.passages)
        given = tokens(text) - tokens(GRIN) - 400  # less the instructions around them
        sizes[reading] = tokens(text)
        assert given <= BUDGETS[reading] * 1.15, (reading, given)
        assert full > BUDGETS["breadth"], "the passages found are longer than either budget"
    assert sizes["speed"] < sizes["breadth"]


# 4. citations only from the pages the model was given, checked against their text ---------


def grin_page(library: Library, alice: BookInfo) -> str:
    """The label of the passage the search finds with the Duchess's answer."""
    hits = BookSearch(library.db).search_book(alice.id, GRIN, limit=6, until_page=alice.read_to)
    hit = next(h for h in hits if "Cheshire cat,” said the Duchess" in h.text)
    first, last = hit.start_page, hit.end_page
    return f"[p. {first}]" if first == last else f"[pp. {first}–{last}]"


def test_a_citation_is_kept_only_when_a_given_passage_on_that_page_says_it(
    library: Library, alice: BookInfo, fake_anthropic: FakeAnthropic
) -> None:
    label = grin_page(library, alice)
    fake_anthropic.add(
        Reply.text(
            f"The Duchess says it is a Cheshire cat, and that is why it grins {label}. "
            f"The cat is purple and sings opera at night {label}. "
            "Alice met the Mad Hatter at the beach in the first chapter [p. 3]."
        ),
    )
    service = local_service(library, fake_anthropic, "always-retrieve")
    events = ask(service, alice, GRIN)
    result = events[-1].result
    given = {(p.first_page, p.last_page) for p in result.passages}
    assert not any(a <= 3 <= b for a, b in given), "p. 3 was never given"
    (kept,) = result.citations  # the invented claim on a given page and p. 3 are not sources
    assert label.strip("[]").split(" ")[1].split("–")[0] == str(kept.first_page)
    assert "Cheshire cat" in kept.quoted_text  # a sentence of the passage, for the reader
    stored = service.history(result.conversation_id)[-1]
    assert [c.first_page for c in stored.citations] == [kept.first_page]


def test_an_unlabelled_sentence_gets_the_page_of_the_given_passage_that_says_it(
    library: Library, alice: BookInfo, fake_anthropic: FakeAnthropic
) -> None:
    """A small model answers right but labels no page: the page of the passage that says the
    sentence is attached, its sentence quoted; a sentence no passage says gets none."""
    label = grin_page(library, alice)
    fake_anthropic.add(
        Reply.text(
            "It is a Cheshire cat, said the Duchess, and that is why it grins. "
            "The cat is purple and sings opera at night."
        )
    )
    service = local_service(library, fake_anthropic, "always-retrieve")
    result = ask(service, alice, GRIN)[-1].result
    (kept,) = result.citations
    assert label.strip("[]").split(" ")[1].split("–")[0] == str(kept.first_page)
    assert "Cheshire cat,” said the Duchess" in kept.quoted_text
    given = next(p for p in result.passages if p.first_page == kept.first_page)
    assert kept.quoted_text in " ".join(given.text.split())  # exact words of the passage
    stored = service.history(result.conversation_id)[-1]
    assert [c.first_page for c in stored.citations] == [kept.first_page]


def test_a_page_is_attached_only_where_a_passage_bears_out_what_the_sentence_adds() -> None:
    p = Passage(1, 40, 41, "“It’s a Cheshire cat,” said the Duchess, “and that’s why. Pig!”")
    q = Passage(1, 7, 8, "There was a large mushroom growing near her, about the same height.")
    asked = "Why does the Cheshire Cat grin?"
    found = supporting("It is a Cheshire cat, the Duchess said.", [q, p], asked)
    assert found is not None and found[0] is p and found[1].startswith("“It’s a Cheshire cat")
    assert supporting("The Cheshire Cat grins.", [p, q], asked) is None  # the question echoed
    # shares the question's words and one more, but not what the sentence adds
    assert supporting("The Cheshire cat sings opera with the Duchess.", [p, q], asked) is None
    assert supporting("It grins on a mushroom.", [p], asked) is None  # no passage says it
    # names what the passage names, says what it does not
    r = Passage(1, 10, 11, "It was the White Rabbit returning to the Duchess, splendidly dressed.")
    turns = "What does the Duchess's baby turn into?"
    assert supporting("The Duchess's baby turns into a rabbit.", [r], turns) is None
    hookah = Passage(1, 28, 30, "The caterpillar was quietly smoking a long hookah.")
    smokes = "What is the caterpillar smoking?"
    assert supporting("The caterpillar is smoking a long pipe.", [hookah], smokes) is None
    assert supporting("The caterpillar is smoking a long hookah.", [hookah], smokes) is not None
    assert claims("It is a cat [p. 40]. ⟪hidden:1⟫ It grins.") == ["It is a cat .", "It grins."]
    # a sentence whose label is already a source gets no second page (a label may follow it)
    answer = "The Rabbit is late [p. 3]. It runs. [p. 5] It hides [pp. 7–8]."
    assert claims(answer, {(3, 3), (5, 5)}) == ["It hides ."]


def test_a_paraphrase_meets_the_books_irregular_and_short_forms(
    library: Library, books_dir: Any
) -> None:
    # real sentences of Metamorphosis and Alice (bench_attach.py holds more)
    from core.books.importer import import_book

    meta = import_book(library, books_dir / "metamorphosis.epub").book
    alice = import_book(library, books_dir / "alice_in_wonderland.epub").book
    (p,) = [
        Passage(meta.id, x.number, x.number, x.text)
        for x in library.pages(meta.id, 1, meta.page_count)
        if "woke from troubled dreams" in x.text
    ]
    asked = "What has Gregor become when he wakes up?"  # "wakes" against the book's "woke"
    found = supporting("Gregor has become a vermin when he wakes up.", [p], asked)
    assert found is not None and "horrible vermin" in found[1]
    assert supporting("Gregor has become a bird when he wakes up.", [p], asked) is None
    pages = library.pages(alice.id, 1, alice.page_count)
    (bottle,) = [
        Passage(alice.id, x.number, x.number, x.text)
        for x in pages
        if "“DRINK ME,” beautifully" in " ".join(x.text.split())
    ]
    asked = "What is written on the little bottle Alice finds?"  # two of three new words held
    assert supporting("The label on the bottle says POISON.", [bottle], asked) is None
    (game,) = [
        Passage(alice.id, x.number, x.number, x.text) for x in pages if "live flamingoes" in x.text
    ]
    asked = "What does Alice use as a mallet in the croquet game?"  # "uses" meets "use"
    found = supporting("Alice uses a flamingo as her mallet.", [game], asked)
    assert found is not None and "flamingoes" in found[1]


def test_an_answer_written_without_the_book_lists_no_sources(
    library: Library, alice: BookInfo, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.add(Reply.text("The cat grins because it is happy [p. 5]."))
    service = local_service(library, fake_anthropic, "llm-only")
    events = ask(service, alice, GRIN)
    result = events[-1].result
    assert not result.passages and not result.citations
    stored = service.history(result.conversation_id)[-1]
    assert not stored.citations


# 5. an invented sentence is "not from the book", never a spoiler notice ----------------------


def test_an_invented_sentence_is_hidden_as_not_from_the_book(
    library: Library, alice: BookInfo, fake_anthropic: FakeAnthropic
) -> None:
    invented = "The Mock Turtle and the Gryphon dance the Lobster Quadrille with the cat."
    fake_anthropic.add(Reply.text(f"The cat grins. {invented}"))
    events = ask(local_service(library, fake_anthropic, "llm-only"), alice, GRIN)
    result = events[-1].result
    assert result.withheld, "the guard held the sentence back"
    assert all(w.reason == "ungrounded" for w in result.withheld)
    assert notice_text(result.withheld[0]) == UNGROUNDED_NOTICE
    assert "after p." not in notice_text(result.withheld[0])


# 6. an empty or citation-only answer is marked and answered with the passages --------------


def test_a_citation_only_answer_is_marked_and_the_passages_shown(
    library: Library, alice: BookInfo, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.add(Reply.text("[pp. 39–40]"))
    service = local_service(library, fake_anthropic, "always-retrieve")
    events = ask(service, alice, GRIN)
    assert isinstance(events[-1], RunFinished)
    result = events[-1].result
    assert result.stop_reason == EMPTY_STOP
    assert NOTICE in [e.text for e in events if isinstance(e, Notice)]
    assert "no answer in words, only a page label" in result.answer
    assert "Cheshire cat" in result.answer  # what the book says, from the passages given
    assert result.citations and all(c.quoted_text for c in result.citations)
    stored = service.history(result.conversation_id)[-1]
    assert stored.stop_reason == EMPTY_STOP and "Cheshire cat" in stored.text


def test_an_empty_answer_is_marked_too(
    library: Library, alice: BookInfo, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.add(Reply.text(" "))
    events = ask(local_service(library, fake_anthropic, "always-retrieve"), alice, GRIN)
    assert events[-1].result.stop_reason == EMPTY_STOP
    assert "no answer in words." in events[-1].result.answer


def test_what_counts_as_bare() -> None:
    assert is_bare("") and is_bare("[pp. 30–31]") and is_bare("[p. 3] [p. 4].")
    assert is_bare("See [p. 3].")
    assert not is_bare("It is a Cheshire cat [p. 40].")
    assert not is_bare("Yes.") and not is_bare("fine") and not is_bare("It grins [p. 40].")
