"""Saving Settings keeps what the dialog does not show (issue 40: Settings saved only some
limits; a reader's `spoiler_verify = true` or `stream_idle_s` in settings.toml was reset to
its default by any Save)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core.paths import resolve_paths
from core.settings import load_settings

WRITTEN = """\
provider = "local"
base_url = "http://127.0.0.1:8080"
model = "qwen"
spoiler_verify = true
previously_after_days = 9

[limits]
stream_idle_s = 120.0
local_max_output_tokens = 700
local_deadline_s = 900.0
"""


def test_a_save_keeps_the_settings_the_dialog_does_not_show(margin_home: Path, qtbot: Any) -> None:
    from desktop.window.settings_dialog import SettingsDialog

    paths = resolve_paths()
    paths.settings_file.parent.mkdir(parents=True, exist_ok=True)
    paths.settings_file.write_text(WRITTEN, encoding="utf-8")
    dialog = SettingsDialog(paths)
    qtbot.addWidget(dialog)
    assert dialog.local_wait.value() == 900.0
    dialog.turns.setValue(6)
    dialog.local_wait.selectAll()
    dialog.local_wait.setFocus()
    QTest.keyClicks(dialog.local_wait, "1200")
    QTest.keyClick(dialog.local_wait, Qt.Key.Key_Tab)
    assert dialog.save()
    saved = load_settings(paths)
    assert saved.limits.max_turns == 6
    assert saved.limits.local_deadline_s == 1200.0
    assert saved.limits.stream_idle_s == 120.0
    assert saved.limits.local_max_output_tokens == 700
    assert saved.spoiler_verify is True
    assert saved.previously_after_days == 9
    assert (saved.provider, saved.model) == ("local", "qwen")
