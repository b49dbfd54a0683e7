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
        "--conversation",  # (without it, a question about a passage goes to its own thread)
        "1",
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
    assert code == 0 and "From the book" in out and "No model connected" in err
    assert "Sources: p" in out


def test_history_json_lists_sources_and_export_conversation(
    capsys: pytest.CaptureFixture[str],
    books_dir: Path,
    fake_anthropic: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    run(capsys, "import", str(books_dir / "alice_in_wonderland.epub"))
    save_settings(
        resolve_paths().ensure(),
        Settings(
            provider="local",
            base_url=fake_anthropic.url,
            model="small-local",
            strategy="tool-use",
        ),
    )
    fake_anthropic.add(
        Reply.tools(("search_book", {"query": "White Rabbit"}), ("read_pages", {"start": 3})),
        Reply.text("The White Rabbit is late [p. 3]."),
    )
    code, _, err = run(capsys, "ask", "Alice", "Who is late?", "--spoilers-until", "end")
    assert code == 0, err
    _, out, _ = run(capsys, "conversations", "Alice", "--json")
    cid = str(json.loads(out)[0]["id"])
    code, out, _ = run(capsys, "history", cid, "--json")
    assert code == 0
    answer = next(r for r in json.loads(out) if r["role"] == "assistant")
    assert [s["pages"] for s in answer["sources"]] == ["p. 3"]
    quote = answer["sources"][0]["quote"]
    assert quote and not quote.startswith("…") and not quote.endswith("…")
    assert answer["passages_used"] and all(p["quote"] for p in answer["passages_used"])
    # Markdown export: the question, the answer, the cited passage with its page label
    code, out, _ = run(capsys, "export-conversation", cid)
    assert code == 0
    assert "**Question:** Who is late?" in out and "The White Rabbit is late [p. 3]." in out
    assert f"- p. 3: “{' '.join(quote.split())}”" in out
    target = tmp_path / "talk.md"
    code, _, err = run(capsys, "export-conversation", cid, "--out", str(target))
    assert code == 0 and "Saved" in err and target.read_text(encoding="utf-8") == out
    code, out, _ = run(capsys, "export-conversation", "--book", "Alice")
    assert code == 0 and "Who is late?" in out and "conversations" in out.splitlines()[0]


def test_export_conversation_bad_input_says_what_to_do(
    capsys: pytest.CaptureFixture[str], books_dir: Path, tmp_path: Path
) -> None:
    code, _, err = run(capsys, "export-conversation")
    assert code != 0 and "either a conversation number or --book" in err
    code, _, err = run(capsys, "export-conversation", "999")
    assert code != 0 and "no conversation number 999" in err
    run(capsys, "import", str(books_dir / "alice_in_wonderland.epub"))
    code, out, _ = run(capsys, "export-conversation", "--book", "Alice")
    assert code == 0 and "No conversations about this book yet." in out
    code, _, err = run(
        capsys, "export-conversation", "--book", "Alice", "--out", str(tmp_path / "no" / "x.md")
    )
    assert code != 0 and "could not write" in err
