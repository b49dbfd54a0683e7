"""The strategy that suits the model (issue 40, item 1): a one-time probe of tool calling per
provider, server and model, kept next to the settings; models that make no real tool call get
the strategy that searches first; a tool call written as a JSON code block is read as a call
where that is safe. The real SDK and provider against the fake server on loopback."""

from __future__ import annotations

import json
from typing import Any

from core.agent.events import RunFinished, RunStarted
from core.agent.probe import PROBE_FILE, ProbeStore, probe_key
from core.agent.text_calls import text_tool_calls
from core.store.library import BookInfo, Library
from tests.core.agent.test_local_models import ask, local_service
from tests.fakes.anthropic_server import FakeAnthropic, Reply

QUESTION = "Why does the Cheshire Cat grin?"
QWEN_CALL = (
    "To find this, I will search the book.\n\n```json\n"
    '{"name": "search_book", "arguments": {"query": "lantern"}}\n```'
)


def started(events: list[Any]) -> RunStarted:
    return next(e for e in events if isinstance(e, RunStarted))


def test_a_model_that_writes_its_call_as_text_is_probed_once_and_searched_for(
    library: Library, alice: BookInfo, fake_anthropic: FakeAnthropic
) -> None:
    service = local_service(library, fake_anthropic, "auto")
    fake_anthropic.add(
        Reply.text(QWEN_CALL),  # the probe
        Reply.text("It is a Cheshire cat [p. 45]."),
    )
    events = ask(service, alice, QUESTION)
    assert isinstance(events[-1], RunFinished)
    assert started(events).strategy == "always-retrieve"
    assert events[-1].result.passages, "the book was searched before the model answered"
    probe_request = fake_anthropic.message_requests[0].body
    assert [t["name"] for t in probe_request["tools"]] == ["search_book"]
    # kept: the next question does not probe again
    stored = json.loads((library.paths.config / PROBE_FILE).read_text())
    key = probe_key("local", fake_anthropic.url, "smollm2")
    assert stored[key]["calls"] == "text"
    fake_anthropic.add(Reply.text("It grins [p. 45]."))
    again = ask(service, alice, QUESTION)
    assert started(again).strategy == "always-retrieve"
    assert len(fake_anthropic.message_requests) == 3  # probe, answer; answer (no rewrites)
    probe = service.tool_probe()
    assert probe is not None and "writes its tool calls as text" in probe.sentence("smollm2")


def test_a_model_that_answers_without_calling_gets_the_search_first_strategy(
    library: Library, alice: BookInfo, fake_anthropic: FakeAnthropic
) -> None:
    service = local_service(library, fake_anthropic, "auto")
    fake_anthropic.add(
        Reply.text("The lantern is first mentioned in chapter one."),
        Reply.text("It grins [p. 45]."),
    )
    events = ask(service, alice, QUESTION)
    assert started(events).strategy == "always-retrieve"
    assert (
        ProbeStore(library.paths.config / PROBE_FILE)
        .get(probe_key("local", fake_anthropic.url, "smollm2"))
        .calls
        == "none"
    )  # type: ignore[union-attr]


def test_a_model_that_makes_real_calls_keeps_the_tools(
    library: Library, alice: BookInfo, fake_anthropic: FakeAnthropic
) -> None:
    service = local_service(library, fake_anthropic, "auto")
    fake_anthropic.add(
        Reply.tool_use("search_book", {"query": "lantern"}),
        Reply.tool_use("search_book", {"query": "Cheshire Cat grin"}),
        Reply.text("It grins [p. 45]."),
    )
    events = ask(service, alice, QUESTION)
    assert started(events).strategy == "tool-use"
    assert [c.name for c in events[-1].result.tool_calls] == ["search_book"]


def test_a_tool_call_written_as_a_json_block_in_a_tool_use_run_is_run(
    library: Library, alice: BookInfo, fake_anthropic: FakeAnthropic
) -> None:
    service = local_service(library, fake_anthropic, "tool-use")
    fake_anthropic.add(
        Reply.text(QWEN_CALL.replace("lantern", "Cheshire Cat grin")),
        Reply.text("It is a Cheshire cat, so it grins [p. 45]."),
    )
    events = ask(service, alice, QUESTION)
    result = events[-1].result
    assert isinstance(events[-1], RunFinished)
    assert [c.arguments["query"] for c in result.tool_calls] == ["Cheshire Cat grin"]
    assert result.passages
    assert "```" not in result.answer and "search_book" not in result.answer
    assert result.answer.startswith("It is a Cheshire cat")
    # the model got the tool's result back as the answer to its call
    sent = fake_anthropic.message_requests[1].body["messages"]
    assert any(
        b.get("type") == "tool_result" for m in sent for b in m["content"] if isinstance(b, dict)
    )


def test_only_safe_written_calls_count() -> None:
    offered = {"search_book", "read_pages"}
    (call,) = text_tool_calls(QWEN_CALL, offered)
    assert (call.name, dict(call.arguments)) == ("search_book", {"query": "lantern"})
    tagged = '<tool_call>\n{"name": "read_pages", "arguments": {"start": 3}}\n</tool_call>'
    assert text_tool_calls(tagged, offered)[0].name == "read_pages"
    assert text_tool_calls('{"name": "search_book", "parameters": {"query": "x"}}', offered)
    # not calls: an unknown tool, arguments that are not an object, broken JSON, an answer
    assert not text_tool_calls('```json\n{"name": "delete_book", "arguments": {}}\n```', offered)
    assert not text_tool_calls('```json\n{"name": "search_book", "arguments": 3}\n```', offered)
    assert not text_tool_calls('```json\n{"name": "search_book", \n```', offered)
    answer = "Irene Adler is the woman. " * 10 + QWEN_CALL
    assert not text_tool_calls(answer, offered)
    assert not text_tool_calls("Holmes admires her wit [p. 5].", offered)
