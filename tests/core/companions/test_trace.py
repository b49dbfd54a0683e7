"""Every model call of a companion in the book's event log (as the chat's calls are in a
conversation's), read back per job by ``--trace``; never the API key."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from core.agent.eventlog import EventLog
from core.agent.service import AgentService
from core.companions import model, trace
from core.paths import companions_log_name
from core.progress import CancelToken
from core.settings import Settings
from core.store.library import BookInfo, Library
from tests.core.companions.conftest import KEY
from tests.fakes.anthropic_server import FakeAnthropic, Reply


def log_path(library: Library, book: BookInfo) -> Path:
    return Path(library.paths.event_logs) / companions_log_name(book.id)


def records(library: Library, book: BookInfo) -> list[dict[str, Any]]:
    text = log_path(library, book).read_text("utf-8")
    assert KEY not in text and KEY[:20] not in text  # never the API key
    return [json.loads(line) for line in text.splitlines()]


def run_job(library: Library, book: BookInfo, service: AgentService, **kw: Any) -> Any:
    job = model.plan(library.db, book.id, "claude-haiku-4-5", **kw.pop("what", {}))
    index = service.spoilers.get(library.db, book.id)
    return asyncio.run(
        model.run(
            library.db,
            book.id,
            job,
            service.provider(),
            index,
            events=Path(library.paths.event_logs),
            **kw,
        )
    )


def test_each_recap_call_is_in_the_book_log(
    library: Library, story: BookInfo, service: AgentService, fake_anthropic: FakeAnthropic
) -> None:
    library.set_read_to(story.id, 3)  # chapters I and II
    fake_anthropic.add(
        Reply.text("Mr. Bingley took Netherfield."),
        Reply.text("Jane fell ill at Netherfield. Later Mr. Wickham charms everyone."),
    )
    run_job(library, story, service, what={"notes": False})
    lines = records(library, story)
    assert [r["type"] for r in lines] == [
        "JOB_STARTED",
        "LLM_INVOCATION",
        "LLM_INVOCATION",
        "SPOILER_CHECK",
        "JOB_FINISHED",
    ]
    start, first, second, check, end = lines
    assert start["model"] == "claude-haiku-4-5" and start["provider"] == "anthropic"
    assert start["calls"] == 2 and start["spoiler_bound"] == 3 and start["kinds"] == ["recap"]
    assert start["estimate"].startswith("About ")
    assert len({r["job_id"] for r in lines}) == 1
    assert first["kind"] == "recap" and first["title"] == "CHAPTER I"
    assert first["request"]["max_tokens"] == model.RECAP_OUT
    assert first["request"]["model"] == "claude-haiku-4-5" and first["request"]["messages"] == 1
    assert first["response"] == {"stop_reason": "end_turn", "text": "Mr. Bingley took Netherfield."}
    assert first["usage"]["input_tokens"] == 100 and first["usage"]["output_tokens"] == 20
    assert first["duration_ms"] > 0 and first["withheld"] == 0
    assert second["withheld"] == 1 and "Wickham" in " ".join(second["terms"])
    assert check["step"] == 2 and check["read_to"] == 3
    assert any("Wickham" in t["term"] and t["first_page"] == 4 for t in check["terms"])
    assert end["status"] == "done" and end["calls"] == 2
    assert end["usage"]["input_tokens"] == 200
    # read back per job
    (job,) = trace.jobs(Path(library.paths.event_logs), story.id, {"recap"})
    assert job.status == "done" and len(job.calls) == 2 and job.usage.output_tokens == 40
    assert job.calls[1].line().startswith("2. CHAPTER II (summary): 100 in, 20 out tokens")
    assert "end_turn" in job.calls[1].line() and "1 sentence withheld" in job.calls[1].line()
    assert "claude-haiku-4-5" in job.heading() and "2 of 2 calls" in job.heading()
    assert trace.jobs(Path(library.paths.event_logs), story.id, {"xray_note"}) == []


def test_stopped_and_failed_jobs_are_traced_without_the_key(
    library: Library, story: BookInfo, service: AgentService, fake_anthropic: FakeAnthropic
) -> None:
    library.set_read_to(story.id, 4)
    cancel = CancelToken()
    fake_anthropic.responder = lambda body: Reply.text("A chapter happened.")

    def progress(done: int, total: int, title: str) -> None:
        if done == 1:
            cancel.cancel()

    run_job(library, story, service, what={"notes": False}, progress=progress, cancel=cancel)
    fake_anthropic.responder = lambda body: Reply.error(
        401, "authentication_error", f"invalid x-api-key {KEY}"
    )
    with pytest.raises(Exception):  # noqa: B017 - whatever the provider raises, it is traced
        run_job(library, story, service, what={"notes": False})
    stopped, failed = trace.jobs(Path(library.paths.event_logs), story.id)
    assert stopped.status == "stopped" and len(stopped.calls) == 1 and stopped.planned == 3
    assert failed.status == "failed" and failed.error
    assert failed.calls[0].error and "failed" in failed.calls[0].line()
    records(library, story)  # the key is in the server's message, never in the log


def test_cli_trace_and_a_deleted_book_takes_its_log(
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
        Settings(provider="anthropic", base_url=fake_anthropic.url, model="claude-haiku-4-5"),
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    library.set_read_to(story.id, 3)
    library.close()
    assert main(["recap", "the neighbours", "--trace"]) == 0
    assert "No model calls yet" in capsys.readouterr().out
    fake_anthropic.responder = lambda body: Reply.text("Things happened at Netherfield.")
    assert main(["recap", "the neighbours", "--model", "--yes"]) == 0
    capsys.readouterr()
    assert main(["recap", "the neighbours", "--trace"]) == 0
    out = capsys.readouterr().out
    assert "1 job" in out and "claude-haiku-4-5" in out and "2 of 2 calls · done" in out
    assert "1. CHAPTER I (summary): 100 in, 20 out tokens · end_turn ·" in out
    assert main(["xray", "the neighbours", "--trace"]) == 0  # no X-Ray job yet
    assert "No model calls yet" in capsys.readouterr().out
    assert main(["recap", "the neighbours", "--trace", "--json"]) == 0
    (job,) = json.loads(capsys.readouterr().out)
    assert job["status"] == "done" and [c["title"] for c in job["calls"]] == [
        "CHAPTER I",
        "CHAPTER II",
    ]
    assert job["calls"][0]["usage"]["input_tokens"] == 100
    reopened = Library.open(library.paths)
    try:
        assert log_path(reopened, story).exists()
        assert KEY not in log_path(reopened, story).read_text("utf-8")
        reopened.delete_book(story.id)
        assert not log_path(reopened, story).exists()
    finally:
        reopened.close()


def test_a_line_cut_short_is_skipped(tmp_path: Path) -> None:
    log = EventLog.named(tmp_path, companions_log_name(7))
    log.write("JOB_STARTED", job_id="a", calls=1, kind="not the type")
    with log.path.open("a", encoding="utf-8") as fh:
        fh.write('{"type": "LLM_INVOC')  # a crash while writing
    assert [r["type"] for r in log.read()] == ["JOB_STARTED"]
    assert log.read()[0]["kind"] == "not the type"
    (job,) = trace.jobs(tmp_path, 7)
    assert job.status == "interrupted" and job.calls == []
    assert "No call was made" not in trace.text([job]) and "(no calls made)" in trace.text([job])


def test_an_error_naming_a_key_is_written_without_it() -> None:
    assert trace.scrub(f"rejected {KEY}.") == "rejected sk-…."
    text = model._error_text(RuntimeError(f"header x-api-key: {KEY}"), trace.scrub)
    assert text.startswith("RuntimeError: header x-api-key: sk-…") and KEY not in text
