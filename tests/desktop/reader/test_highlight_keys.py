"""Ctrl+1 … Ctrl+4 highlight the selection each in its own colour (real key presses in the
window; the colours read back by `margin highlights --json`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from core.cli import main as cli_main
from tests.desktop.conftest import open_alice


def select_words(view: Any, start: int, words: int) -> str:
    cursor = view.textCursor()
    cursor.setPosition(start)
    cursor.movePosition(QTextCursor.MoveOperation.StartOfWord)
    cursor.movePosition(QTextCursor.MoveOperation.NextWord, QTextCursor.MoveMode.KeepAnchor, words)
    view.setTextCursor(cursor)
    QApplication.processEvents()
    return str(cursor.selectedText()).strip()


def test_ctrl_and_a_number_highlights_in_its_own_colour(
    window: Any, books_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    book_id = open_alice(window, books_dir, page=5)
    view = window.reader.view
    first, _ = view.visible_range()
    for key in (1, 2, 3, 4):
        text = select_words(view, first + 150 * key, 3)
        assert text
        QTest.keyClick(view, getattr(Qt.Key, f"Key_{key}"), Qt.KeyboardModifier.ControlModifier)
        QApplication.processEvents()
    capsys.readouterr()
    assert cli_main(["highlights", str(book_id), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    items = listed if isinstance(listed, list) else listed.get("highlights", listed)
    colours = [item["colour"] for item in items]
    assert colours == ["yellow", "green", "blue", "pink"], f"▶ Ctrl+1…4 highlighted in {colours}"
