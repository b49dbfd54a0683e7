from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from core.paths import resolve_paths
from core.settings import Settings, save_settings
from tests.fakes.anthropic_server import FakeAnthropic, Reply


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_ask_history_rename_forget(
    capsys: pytest.CaptureFixture[str],
    books_dir: Path,
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run(capsys, "import", str(books_dir / "metamorphosis.epub"))
    save_settings(
        resolve_paths().ensure(),
        Settings(provider="anthropic", base_url=fake_anthropic.url, model="claude-test"),
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-cli-test")
    fake_anthropic.add(
        Reply.tool_use("search_book", {"query": "Gregor"}),
        Reply.text("Gregor wakes up as an insect."),
        Reply.text("Second answer."),
    )
    code, out, err = run(capsys, "ask", "Metamorphosis", "What happens to Gregor?", "-v")
    assert code == 0, err
    assert "Gregor wakes up as an insect." in out
    assert "Searching the book for 'Gregor'" in err
    code, out, err = run(
        capsys,
        "ask",
        "Metamorphosis",
        "And then?",
        "--json",
        "--selection",
        "Gregor Samsa",
        "--selection-page",
        "2",
    )
    data = json.loads(out)
    assert data["answer"] == "Second answer." and data["success"]
    code, out, _ = run(capsys, "conversations", "Metamorphosis", "--json")
    conversations = json.loads(out)
    assert len(conversations) == 1 and conversations[0]["title"] == "What happens to Gregor?"
    cid = str(conversations[0]["id"])
    code, out, _ = run(capsys, "history", cid)
    assert (
        "> What happens to Gregor?" in out and "Second answer." in out and "[selection p. 2" in out
    )
    assert run(capsys, "rename", cid, "Gregor")[0] == 0
    assert run(capsys, "forget", cid)[0] == 0
    code, _, err = run(capsys, "history", cid)
    assert code == 1 and "no conversation" in err


def test_ask_reports_errors_in_words(
    capsys: pytest.CaptureFixture[str],
    books_dir: Path,
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run(capsys, "import", str(books_dir / "metamorphosis.txt"))
    save_settings(
        resolve_paths().ensure(),
        Settings(provider="anthropic", base_url=fake_anthropic.url, model="claude-test"),
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-bad")
    fake_anthropic.add(Reply.error(401, "authentication_error", "invalid key"))
    code, _, err = run(capsys, "ask", "1", "q")
    assert code == 1 and "did not accept the API key" in err and "Traceback" not in err
    code, _, err = run(capsys, "ask", "1", "q", "--selection", "x")
    assert code == 1 and "--selection-page" in err


def test_ask_without_key_shows_passages(
    capsys: pytest.CaptureFixture[str], books_dir: Path
) -> None:
    run(capsys, "import", str(books_dir / "metamorphosis.txt"))
    code, out, err = run(capsys, "ask", "1", "Gregor's sister violin")
    assert code == 0 and "No passage before page 1" in out and "after page 1" in out, (
        "the spoiler bound holds"
    )
    run(capsys, "position", "1", "60")
    code, out, err = run(capsys, "ask", "1", "Gregor's sister violin")
    assert code == 0 and "Passages from the book" in out and "No model connected" in err
    assert "Sources: p" in out
