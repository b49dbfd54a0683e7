"""Recap and X-Ray notes with a model, against the fake Anthropic server through the real SDK:
asked once per chapter and kept, checked at the bound, costs kept, budget refused, Stop."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from core.agent.service import AgentService
from core.companions import model, recap, xray
from core.progress import CancelToken
from core.settings import Settings
from core.store.library import BookInfo, Library
from tests.core.companions.conftest import KEY
from tests.fakes.anthropic_server import FakeAnthropic, Reply


def run(library: Library, book: BookInfo, job: model.Plan, service: AgentService, **kw: Any) -> Any:
    index = service.spoilers.get(library.db, book.id)
    return asyncio.run(model.run(library.db, book.id, job, service.provider(), index, **kw))


def test_recap_asked_once_per_chapter_and_checked_at_the_bound(
    library: Library, story: BookInfo, service: AgentService, fake_anthropic: FakeAnthropic
) -> None:
    library.set_read_to(story.id, 3)  # chapters I and II read; III (Wickham) not yet
    job = model.plan(library.db, story.id, "claude-haiku-4-5", notes=False)
    assert [c.title for c in job.calls] == ["CHAPTER I", "CHAPTER II"]
    assert job.describe().startswith("About ") and "~$0.0" in job.describe()
    fake_anthropic.add(
        Reply.text("Mr. Bingley took Netherfield. Elizabeth walked there in the mud."),
        Reply.text(
            "Jane fell ill at Netherfield after the ball. Later Mr. Wickham charms everyone."
        ),
    )
    used = run(library, story, job, service)
    assert used.input_tokens == 200 and used.output_tokens == 40  # the fake's figures
    sent = fake_anthropic.message_requests
    assert len(sent) == 2
    assert "Wickham" not in str(sent[0].body) + str(sent[1].body)  # only each chapter's text
    made = recap.recap(library.db, story.id)
    texts = [c.text for c in made.chapters]
    assert texts[0].startswith("Mr. Bingley took Netherfield")
    assert "Jane fell ill" in texts[1] and "Wickham" not in texts[1]  # the later name withheld
    # kept: nothing is asked again, and the cost is there
    assert model.plan(library.db, story.id, "claude-haiku-4-5", notes=False).calls == ()
    spent, cost = model.spent(library.db, story.id)
    assert (spent.input_tokens, spent.output_tokens) == (200, 40)
    assert cost is not None and cost > 0
    library.set_read_to(story.id, 4)
    job = model.plan(library.db, story.id, "claude-haiku-4-5", notes=False)
    assert [c.title for c in job.calls] == ["CHAPTER III"]


def test_xray_notes_within_the_bound(
    library: Library, story: BookInfo, service: AgentService, fake_anthropic: FakeAnthropic
) -> None:
    library.set_read_to(story.id, 3)
    job = model.plan(library.db, story.id, "claude-haiku-4-5", recap=False)
    assert job.calls and all(c.kind == "xray_note" for c in job.calls)
    assert all(max(c.meta["pages"]) <= 3 for c in job.calls)
    fake_anthropic.responder = lambda body: Reply.text("Someone the reader has met.")
    run(library, story, job, service)
    made = xray.current(library.db, story.id)
    assert all(e.note == "Someone the reader has met." for e in made.entries)
    library.set_read_to(story.id, 2)  # a note written from page 3 is not shown at page 2
    lowered = xray.current(library.db, story.id)
    from_page_3 = {c.meta["entry"] for c in job.calls if max(c.meta["pages"]) == 3}
    assert lowered.read_to == 2 and from_page_3
    for entry in lowered.entries:
        assert bool(entry.note) == (entry.key not in from_page_3)


def test_budget_refused_and_stop(
    library: Library, story: BookInfo, service: AgentService, fake_anthropic: FakeAnthropic
) -> None:
    library.set_read_to(story.id, 4)
    job = model.plan(library.db, story.id, "claude-opus-4", notes=False)
    with pytest.raises(model.BudgetError) as refused:
        model.check_budget(job, budget=0.001, already=0.0)
    assert "would take this book past its budget of $0.00" in refused.value.message
    model.check_budget(job, budget=10.0, already=0.0)  # within: no error
    cancel = CancelToken()
    fake_anthropic.responder = lambda body: Reply.text("A chapter happened.")

    def progress(done: int, total: int, title: str) -> None:
        if done == 1:
            cancel.cancel()  # Stop after the first chapter

    run(library, story, job, service, progress=progress, cancel=cancel)
    assert len(fake_anthropic.message_requests) == 1
    left = model.plan(library.db, story.id, "claude-opus-4", notes=False)
    assert len(left.calls) == len(job.calls) - 1  # the finished one is kept


def test_quiz_cards_from_chapters_read(
    library: Library, story: BookInfo, service: AgentService, fake_anthropic: FakeAnthropic
) -> None:
    from core.companions import cards

    library.set_read_to(story.id, 3)
    job = model.plan(library.db, story.id, "claude-haiku-4-5", recap=False, notes=False, quiz=True)
    assert [c.kind for c in job.calls] == ["quiz", "quiz"]
    fake_anthropic.add(
        Reply.text(
            '```json\n[{"question": "Who took the great house?", "answer": "Mr. Bingley", '
            '"quote": "he had taken the great house at Netherfield"}, '
            '{"question": "Whom does Wickham charm?", "answer": "everyone", "quote": "x"}]\n```'
        ),
        Reply.text("I cannot write JSON today."),
    )
    run(library, story, job, service)
    quiz = [c for c in cards.cards(library, story.id) if c.source == "quiz"]
    assert [(c.front, c.page) for c in quiz] == [("Who took the great house?", 2)]
    assert "Mr. Bingley" in quiz[0].back and quiz[0].quote.startswith("he had taken")


def test_cli_recap_with_the_model(
    library: Library,
    story: BookInfo,
    fake_anthropic: FakeAnthropic,
    monkeypatch: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from core.cli import main
    from core.settings import save_settings

    save_settings(
        library.paths,
        Settings(
            provider="anthropic",
            base_url=fake_anthropic.url,
            model="claude-haiku-4-5",
            budget_per_book_usd=0.0001,
        ),
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    library.set_read_to(story.id, 3)
    library.close()
    assert main(["recap", "the neighbours", "--model", "--yes"]) == 1  # past the budget
    err = capsys.readouterr().err
    assert "would take this book past its budget of $0.00" in err
    assert fake_anthropic.message_requests == []
    save_settings(
        library.paths,
        Settings(provider="anthropic", base_url=fake_anthropic.url, model="claude-haiku-4-5"),
    )
    assert main(["recap", "the neighbours", "--model"]) == 2  # not a terminal: asks for --yes
    assert "add --yes to go ahead" in capsys.readouterr().err
    fake_anthropic.responder = lambda body: Reply.text("Things happened at Netherfield.")
    assert main(["recap", "the neighbours", "--model", "--yes"]) == 0
    out, err = capsys.readouterr()
    assert "2 calls to claude-haiku-4-5: About " in err and "Used 200 input" in err
    assert out.count("Things happened at Netherfield.") == 2
    assert main(["recap", "the neighbours", "--model", "--yes"]) == 0  # kept: nothing asked again
    assert len(fake_anthropic.message_requests) == 2


def test_a_book_read_again_keeps_its_summaries(
    library: Library, story: BookInfo, service: AgentService, fake_anthropic: FakeAnthropic
) -> None:
    from core.books.importer import reimport_book

    library.set_read_to(story.id, 3)
    fake_anthropic.responder = lambda body: Reply.text("Bingley came to Netherfield.")
    run(library, story, model.plan(library.db, story.id, "claude-haiku-4-5", notes=False), service)
    reimport_book(library, story.id)  # the same text, read again: found by that text
    assert model.plan(library.db, story.id, "claude-haiku-4-5", notes=False).calls == ()
    made = recap.recap(library.db, story.id)
    assert [c.text for c in made.chapters] == ["Bingley came to Netherfield."] * 2


# --- issue 46 item 3: what a model writes for the companions is checked like an answer ------

ENDING = "The cleaning woman finds him lying dead one morning."


def test_recap_and_notes_hold_a_plain_words_ending_as_an_answer_does(
    library: Library, books_dir: Path, service: AgentService, fake_anthropic: FakeAnthropic
) -> None:
    from core.agent.spoilers import SpoilerGuard
    from core.books.importer import import_book

    book = import_book(library, books_dir / "metamorphosis.epub").book
    library.set_read_to(book.id, 28)  # part I
    index = service.spoilers.get(library.db, book.id)
    asked = SpoilerGuard(index, read_to=28, question="")
    assert any(s.hidden for s in asked.feed(ENDING) + asked.flush())  # what `ask` holds back
    job = model.plan(library.db, book.id, "claude-haiku-4-5")
    assert {c.kind for c in job.calls} >= {"recap", "xray_note"}
    fake_anthropic.responder = lambda body: Reply.text(f"Gregor wakes up as an insect. {ENDING}")
    run(library, book, job, service)
    made = recap.recap(library.db, book.id)
    assert any("Gregor wakes up" in c.text for c in made.chapters)
    assert not any("dead" in c.text for c in made.chapters)
    notes = xray.current(library.db, book.id)
    assert any(e.note for e in notes.entries)
    assert not any("dead" in (e.note or "") for e in notes.entries)


def test_a_quiz_card_quote_must_be_in_the_pages_read(
    library: Library, story: BookInfo, service: AgentService, fake_anthropic: FakeAnthropic
) -> None:
    from core.companions import cards

    library.set_read_to(story.id, 3)
    job = model.plan(library.db, story.id, "claude-haiku-4-5", recap=False, notes=False, quiz=True)
    fake_anthropic.responder = lambda body: Reply.text(
        '[{"question": "Who danced with Jane?", "answer": "Mr. Bingley", '
        '"quote": "Mr. Bingley danced with Jane twice"}, '
        '{"question": "Who came to town?", "answer": "An officer", '
        '"quote": "Mr. Wickham smiled at every girl"}, '
        '{"question": "Who walked home?", "answer": "Elizabeth", '
        '"quote": "Elizabeth walked home through the snow at midnight"}, '
        '{"question": "What did Lizzy say?", "answer": "Nothing", '
        '"quote": "Lizzy said nothing more"}]'
    )
    run(library, story, job, service)
    quiz = [c for c in cards.cards(library, story.id) if c.source == "quiz"]
    fronts = sorted(c.front for c in quiz)
    # the made-up quote naming a later man and the quote the book does not have are dropped
    assert fronts == ["What did Lizzy say?", "Who danced with Jane?"]
    assert all(c.page <= 3 for c in quiz)
