"""Local models that help (issue 31): the question's own words always reach the search, a
looping answer stops itself, and an answer written without the book says so.

A simulated local model on loopback (``tests/fakes/anthropic_server.py``) with the real SDK,
the real provider (``provider = "local"``) and a real library with a fixture book."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from core.agent.events import Notice, RunFinished, TextDelta
from core.agent.repetition import NOTE, NOTICE, RepetitionCheck
from core.agent.service import AgentService
from core.agent.strategies import fuse, useful_rewrite
from core.agent.types import Passage
from core.cli import main
from core.errors import SettingsError
from core.paths import resolve_paths
from core.search import BookSearch
from core.settings import AgentLimits, Settings, load_settings, save_settings
from core.store.library import BookInfo, Library
from tests.core.agent.conftest import fast_factory
from tests.fakes.anthropic_server import FakeAnthropic, Reply

QUESTION = "Why does the Cheshire Cat grin?"


def local_service(
    library: Library,
    fake: FakeAnthropic,
    strategy: str,
    *,
    spoiler_safe: bool = True,
    **limits: Any,
) -> Any:
    settings = Settings(
        provider="local",
        base_url=fake.url,
        spoiler_verify=False,  # the fake server's scripted replies are the answers, in order
        model="smollm2",
        strategy=strategy,
        spoiler_safe=spoiler_safe,
        limits=AgentLimits(**limits),
    )
    return AgentService(
        library, library.paths, settings, provider_factory=fast_factory, retry_delay=0.01
    )


def ask(service: Any, book: BookInfo, question: str) -> list[Any]:
    conv = service.create_conversation(book.id)

    async def go() -> list[Any]:
        return [e async for e in service.ask(conv.id, question)]

    return asyncio.run(go())


def texts_sent(body: dict[str, Any]) -> str:
    """Every string in a request's messages (passages, instructions, the question)."""
    out: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, str):
            out.append(node)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(body.get("messages", []))
    return "\n".join(out)


# 1. the question's own words always reach the search -----------------------------------


def test_a_local_model_is_not_asked_to_rewrite_the_question_before_the_search(
    library: Library, alice: BookInfo, fake_anthropic: FakeAnthropic
) -> None:
    """Issue 40: the rewrite round trip cost a local model up to 75 s before the search (and
    its rewrite was often off the topic): the search takes the question's own words, and the
    model's one call is the answer, with the question's best passages in front of it."""
    own = BookSearch(library.db).search_book(alice.id, QUESTION, limit=6, until_page=alice.read_to)
    assert own, "the fixture book answers the question with its own words"
    fake_anthropic.add(Reply.text("Because it is a Cheshire cat."))
    events = ask(local_service(library, fake_anthropic, "always-retrieve"), alice, QUESTION)
    assert isinstance(events[-1], RunFinished)
    assert len(fake_anthropic.message_requests) == 1, "one call: the answer, no rewrite first"
    sent = texts_sent(fake_anthropic.message_requests[0].body)
    assert "search query" not in sent
    # the question's best passages are in front of the model (a local model gets each cut to
    # its best sentences, issue 40: their pages are there)
    for hit in own[:2]:
        assert f'pages="{hit.start_page}-' in sent
    queries = [c.arguments["query"] for c in events[-1].result.tool_calls]
    assert queries == [QUESTION]
    assert events[-1].result.answer == "Because it is a Cheshire cat."


def test_a_rewrite_that_shares_a_word_is_searched_too_and_fused() -> None:
    assert useful_rewrite(QUESTION, "Cheshire Cat grin Duchess kitchen")
    assert not useful_rewrite(QUESTION, "Sherlock Holmes Emily Detective")
    assert not useful_rewrite(QUESTION, "cheshire cat grin")  # the same words: one search
    assert not useful_rewrite(QUESTION, "")

    def p(page: int) -> Passage:
        return Passage(1, page, page, f"text of page {page}")

    asked = (p(1), p(2), p(3))
    rewritten = (p(9), p(2), p(8))
    fused = fuse([asked, rewritten], top_k=4)
    assert fused[0] == p(2)  # found by both
    assert fused[1:] == (p(1), p(9), p(3))  # ties keep the question's ranking first


# 2. a looping answer stops itself ----------------------------------------------------------

LOOP = "Holmes admires Irene Adler because she is the woman who beat him. "
INTRO = "Irene Adler is a singer in the story. "


def test_a_looping_answer_is_stopped_quickly_its_stream_closed_kept_and_marked(
    library: Library, alice: BookInfo, fake_anthropic: FakeAnthropic
) -> None:
    # 500 copies at 500 deltas a second would take about 6 s to arrive
    fake_anthropic.add(Reply.text(INTRO + LOOP * 500, chunk_chars=12, tokens_per_second=500))
    service = local_service(library, fake_anthropic, "llm-only")
    started = time.perf_counter()
    events = ask(service, alice, "Who is Irene Adler?")
    took = time.perf_counter() - started
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    result = finished.result
    assert result.answer == (INTRO + LOOP).rstrip() + NOTE
    assert result.stop_reason == "repetition"
    assert NOTICE in [e.text for e in events if isinstance(e, Notice)]
    streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert streamed.count(LOOP.strip()) <= 4  # stopped after a few copies
    assert took < 3.0
    # the connection was closed, so the server stopped sending (not only trimmed here)
    request = fake_anthropic.message_requests[0]
    for _ in range(100):
        if request.closed_by_client_at is not None:
            break
        time.sleep(0.02)
    assert request.closed_by_client_at is not None
    assert request.first_byte_at is not None
    assert request.closed_by_client_at - request.first_byte_at < 3.0
    # stored as kept, with its mark
    stored = service.history(events[-1].result.conversation_id)[-1]
    assert stored.text == result.answer and stored.stop_reason == "repetition"


@pytest.mark.parametrize("pace", [None, 400.0])  # paced: lines shown in pieces (issue 41)
def test_a_loop_with_a_spoiler_check_keeps_the_first_copy(
    library: Library, alice: BookInfo, fake_anthropic: FakeAnthropic, pace: float | None
) -> None:
    line = "- Alice falls and falls down the rabbit hole, past cupboards and book-shelves.\n"
    fake_anthropic.add(
        Reply.text("The Rabbit runs.\n" + line * 200, chunk_chars=7, tokens_per_second=pace)
    )
    events = ask(local_service(library, fake_anthropic, "llm-only"), alice, "Why the fall?")
    result = events[-1].result
    assert result.stop_reason == "repetition"
    assert result.answer == "The Rabbit runs.\n" + line.rstrip() + NOTE, result.withheld
    if pace:  # the first line went out in pieces before its end
        deltas = [e.text for e in events if isinstance(e, TextDelta)]
        assert any(d.startswith("- Alice falls") and "shelves" not in d for d in deltas), deltas


def test_a_normal_answer_with_a_repeated_short_phrase_is_not_stopped(
    library: Library, alice: BookInfo, fake_anthropic: FakeAnthropic
) -> None:
    text = (
        "The Queen shouts 'Off with her head! Off with her head!' at everyone. "
        "'Off with her head!' is her answer to every problem, and nobody is really beheaded. "
        "The King quietly pardons them. Very, very, very few people take her seriously; "
        "the Gryphon says 'it's all her fancy, that: they never executes nobody, you know.'"
    )
    fake_anthropic.add(Reply.text(text, chunk_chars=5))
    service = local_service(library, fake_anthropic, "llm-only", spoiler_safe=False)
    events = ask(service, alice, "Why the Queen?")
    result = events[-1].result
    assert result.answer == text and result.stop_reason == "end_turn"


@pytest.mark.parametrize("name", ["alice_in_wonderland.txt", "metamorphosis.txt"])
def test_whole_books_are_not_loops(books_dir: Path, name: str) -> None:
    """A book's own refrains (songs, choruses, repeated cries) never trip the check."""
    text = (books_dir / name).read_text(encoding="utf-8")
    check = RepetitionCheck()
    for pos in range(0, len(text), 7):
        if check.feed(text[pos : pos + 7]):
            break
    assert check.cut is None, text[max(0, (check.cut or 0) - 300) : (check.cut or 0) + 300]


@pytest.mark.parametrize(
    "text, kept",
    [
        (
            "Intro. " + "The same sentence comes back again. " * 20,
            "Intro. The same sentence comes back again.",
        ),
        (
            "1. Holmes is clever. 2. Holmes is clever. 3. Holmes is clever. 4. Holmes is clever. "
            * 5,
            None,
        ),
        ("A B " + "very " * 60, "A B very"),
        (
            "Alpha one. Beta two words here now. "
            + "Gamma is odd. Delta is even at all times. " * 10,
            "Alpha one. Beta two words here now. Gamma is odd. Delta is even at all times.",
        ),
    ],
)
def test_the_cut_keeps_the_text_before_the_loop_and_one_copy(text: str, kept: str | None) -> None:
    check = RepetitionCheck()
    for pos in range(0, len(text), 3):
        if check.feed(text[pos : pos + 3]):
            break
    assert check.cut is not None
    if kept is not None:
        assert check.text[: check.cut] == kept
    else:
        assert check.text[: check.cut].count("Holmes is clever") == 1


def test_local_answers_have_their_own_length_limit(
    library: Library, alice: BookInfo, fake_anthropic: FakeAnthropic, tmp_path: Path
) -> None:
    fake_anthropic.add(Reply.text("Short."), Reply.text("Short."))
    ask(local_service(library, fake_anthropic, "llm-only"), alice, "a")
    assert fake_anthropic.message_requests[0].body["max_tokens"] == 1024
    assert AgentLimits().max_output_tokens == 4096  # Claude's stays
    ask(local_service(library, fake_anthropic, "llm-only", local_max_output_tokens=300), alice, "b")
    assert fake_anthropic.message_requests[1].body["max_tokens"] == 300
    paths = resolve_paths().ensure()
    paths.settings_file.write_text("[limits]\nlocal_max_output_tokens = 2000\n", encoding="utf-8")
    assert load_settings(paths).limits.local_max_output_tokens == 2000
    paths.settings_file.write_text("[limits]\nlocal_max_output_tokens = 0\n", encoding="utf-8")
    with pytest.raises(SettingsError) as err:
        load_settings(paths)
    assert "'limits.local_max_output_tokens'" in err.value.message


# 2 and 3 on the command line -----------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_command_line_marks_a_loop_and_an_answer_written_without_the_book(
    capsys: pytest.CaptureFixture[str], books_dir: Path, fake_anthropic: FakeAnthropic
) -> None:
    run(capsys, "import", str(books_dir / "metamorphosis.epub"))
    save_settings(
        resolve_paths().ensure(),
        Settings(
            provider="local",
            base_url=fake_anthropic.url,
            model="smollm2",
            spoiler_verify=False,
            strategy="tool-use",
        ),
    )
    invented = "Gregor is a German-American detective and psychiatrist."
    fake_anthropic.add(
        Reply.text(invented),  # tool-use, but no tool call: written without the book
        Reply.text(INTRO + LOOP * 300, chunk_chars=12),
        Reply.tool_use("search_book", {"query": "Gregor"}),
        Reply.text("Gregor wakes up as an insect."),
    )
    code, out, err = run(capsys, "ask", "Metamorphosis", "Who is Gregor?")
    assert code == 0, err
    assert invented in out and "[Not checked against the book" in out
    assert "--strategy always-retrieve" in out
    code, out, err = run(capsys, "ask", "Metamorphosis", "Who is Irene?", "--json")
    data = json.loads(out)
    assert data["stopped_repeating"] is True and data["answer"].endswith(NOTE), data
    assert data["checked_against_book"] is False
    code, out, err = run(capsys, "ask", "Metamorphosis", "What happens?")
    assert "Not checked" not in out
    cid = str(json.loads(run(capsys, "conversations", "Metamorphosis", "--json")[1])[0]["id"])
    rows = [
        r for r in json.loads(run(capsys, "history", cid, "--json")[1]) if r["role"] == "assistant"
    ]
    assert [r["checked_against_book"] for r in rows] == [False, False, True]
    assert [r["stopped_repeating"] for r in rows] == [False, True, False]
    _, out, _ = run(capsys, "history", cid)
    assert out.count("[Not checked against the book]") == 2
