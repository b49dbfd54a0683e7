"""``margin ask`` with a local model (issue 40, item 7): it says when the spoiler check's model
check was skipped, prints no copy of a loop the saved answer cut, and the event log keeps the
passages as the model got them, with their pages. The real CLI, SDK and provider against the
fake server on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from core.cli.ask_output import AnswerPrinter
from core.paths import resolve_paths
from core.settings import Settings, save_settings
from tests.fakes.anthropic_server import FakeAnthropic, Reply

LOOP = "Holmes admires Irene Adler because she is the woman who beat him. "
INTRO = "Irene Adler is a singer in the story. "


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def local(fake: FakeAnthropic, strategy: str) -> None:
    save_settings(
        resolve_paths().ensure(),
        Settings(provider="local", base_url=fake.url, model="small", strategy=strategy),
    )


def test_ask_says_the_model_check_was_skipped_and_prints_no_loop_copies(
    capsys: pytest.CaptureFixture[str], books_dir: Path, fake_anthropic: FakeAnthropic
) -> None:
    run(capsys, "import", str(books_dir / "alice_in_wonderland.epub"))
    local(fake_anthropic, "llm-only")
    fake_anthropic.add(Reply.text(INTRO + LOOP * 300, chunk_chars=12))
    code, out, err = run(capsys, "ask", "Alice", "Who is Irene?")
    assert code == 0, err
    assert "model check was skipped" in err
    fake_anthropic.add(Reply.text(INTRO + LOOP * 300, chunk_chars=12))
    code, out, err = run(capsys, "ask", "Alice", "Who is Irene?", "--spoilers-until", "end")
    assert out.count(LOOP.strip()) == 1, out  # the saved answer keeps one copy; so does stdout
    assert "repeating itself" in out


def test_the_event_log_keeps_the_passages_as_the_model_got_them(
    capsys: pytest.CaptureFixture[str], books_dir: Path, fake_anthropic: FakeAnthropic
) -> None:
    run(capsys, "import", str(books_dir / "alice_in_wonderland.epub"))
    run(capsys, "read-to", "Alice", "45")
    local(fake_anthropic, "always-retrieve")
    fake_anthropic.add(Reply.text("It is a Cheshire cat."))
    code, _, err = run(capsys, "ask", "Alice", "Why does the Cheshire Cat grin?")
    assert code == 0, err
    logs = list(resolve_paths().event_logs.glob("*.jsonl"))
    records = [json.loads(line) for line in logs[0].read_text().splitlines()]
    calls = [r for r in records if r["type"] == "LLM_INVOCATION"]
    given = [p for r in calls for p in r.get("passages", [])]
    assert given and all(p["first_page"] >= 1 and p["text"] for p in given)
    sent = json.dumps(fake_anthropic.message_requests[-1].body, ensure_ascii=False)
    for p in given:  # exactly the text the model read, whole
        assert json.dumps(p["text"], ensure_ascii=False)[1:-1] in sent
        assert f'pages=\\"{p["first_page"]}-{p["last_page"]}\\"' in sent


def test_the_printer_holds_repeats_until_a_new_sentence_follows() -> None:
    printer = AnswerPrinter(lambda raw: raw)
    said = "Alice is very small again now. She cries a pool of tears. "
    assert printer.feed(said) == said.rstrip()  # whole sentences
    repeat = said + "Alice is very small again now. "
    assert printer.feed(repeat) == ""  # a repeat waits
    assert (
        printer.feed(repeat + "Then she swims. ")
        == " Alice is very small again now. Then she swims."
    )
    assert printer.finish(repeat + "Then she swims.") == ""
