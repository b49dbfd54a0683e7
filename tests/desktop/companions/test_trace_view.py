""" "Show trace" under a companion tab's model bar, with real clicks against the fake Claude:
each call of the last jobs with its tokens, stop reason, time and sentences withheld; the
log file never holds the API key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core.paths import companions_log_name
from tests.desktop.companions.conftest import click_tab, priced_model, shoot

KEY = "sk-ant-desktop-test-KEY-42"  # connect_claude's


def click(button: Any) -> None:
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)


def test_show_trace_lists_each_call_of_the_last_jobs(
    qtbot: Any,
    fake_anthropic: Any,
    claude_window: tuple[Any, Any],
) -> None:
    from tests.fakes.anthropic_server import Reply

    win, book = claude_window
    priced_model(win)
    click_tab(win, "Story so far")
    panel = win.reader.side.panel("Story so far")
    qtbot.waitUntil(lambda: panel.made is not None, timeout=10000)
    bar = panel.feed.job
    bar.confirm = lambda text: True
    # nothing asked yet: the trace says so
    assert bar.trace.button.isVisible() and not bar.trace.isVisible()
    click(bar.trace.button)
    qtbot.waitUntil(bar.trace.isVisible, timeout=5000)
    assert "No model calls yet" in bar.trace.view.toPlainText()
    assert bar.trace.button.text() == "Hide trace"
    # a job: the open trace follows it (the Hatter is first named on p. 43)
    fake_anthropic.responder = lambda body: Reply.text(
        "Alice fell down the hole. Later the Hatter pours her some tea."
    )
    click(bar.start_button)
    qtbot.waitUntil(lambda: "Used" in bar.note.text(), timeout=20000)
    qtbot.waitUntil(lambda: "4 of 4 calls" in bar.trace.view.toPlainText(), timeout=10000)
    text = bar.trace.view.toPlainText()
    assert "claude-haiku-4-5" in text and "done" in text and "read to p. 33" in text
    assert "400 in, 80 out tokens, about $0.0" in text
    lines = [ln for ln in text.splitlines() if "(summary)" in ln]
    assert len(lines) == 4
    assert lines[0].startswith("1. CHAPTER I. Down the Rabbit-Hole (summary): 100 in, 20 out")
    assert all("end_turn" in ln and " ms" in ln for ln in lines)
    assert all("1 sentence withheld" in ln and "Hatter" in ln for ln in lines)
    shoot(win, "trace_recap")
    # the X-Ray's own trace: a stopped job, listed as such; the recap job is not in it
    click_tab(win, "X-Ray")
    xray = win.reader.side.panel("X-Ray")
    qtbot.waitUntil(lambda: xray.made is not None, timeout=10000)
    xray.feed.job.confirm = lambda text: True
    fake_anthropic.responder = lambda body: Reply.text("Someone Alice met.", tokens_per_second=4.0)
    click(xray.feed.job.start_button)
    qtbot.waitUntil(lambda: len(fake_anthropic.message_requests) >= 6, timeout=10000)
    click(xray.feed.job.stop_button)
    qtbot.waitUntil(lambda: "Stopped" in xray.feed.job.note.text(), timeout=10000)
    click(xray.feed.job.trace.button)
    qtbot.waitUntil(xray.feed.job.trace.isVisible, timeout=5000)
    shown = xray.feed.job.trace.view.toPlainText()
    assert "stopped" in shown and "(note)" in shown and "(summary)" not in shown
    assert "failed" not in shown and "Error" not in shown  # Stop is no failure
    shoot(win, "trace_xray")
    assert xray.feed.job.trace.jobs is not None and len(xray.feed.job.trace.jobs) == 1
    assert len(xray.feed.job.trace.jobs[0].calls) >= 1
    # closed again with the same button; another book's bar starts closed
    click(xray.feed.job.trace.button)
    assert not xray.feed.job.trace.isVisible()
    assert xray.feed.job.trace.button.text() == "Show trace"
    log_file = Path(win.paths.event_logs) / companions_log_name(book.id)
    written = log_file.read_text("utf-8")
    assert "LLM_INVOCATION" in written and KEY not in written and "sk-ant" not in written
