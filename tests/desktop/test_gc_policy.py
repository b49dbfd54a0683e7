"""The garbage collector pauses the window only when the reader is not looking."""

from __future__ import annotations

import gc
import time
import weakref
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLineEdit

from desktop.runtime import gc_policy


class Node:
    """An object in a reference cycle: only the collector frees it."""

    def __init__(self) -> None:
        self.me = self


def idle(policy: gc_policy.CollectorPolicy) -> None:
    policy.last_input -= 100
    policy.last_collect -= 1000


def test_installed_once_and_freezes_start_up_objects(qtbot: object) -> None:
    policy = gc_policy.install()
    assert policy is not None
    assert gc_policy.install() is policy
    assert gc.get_freeze_count() > 0


def test_collects_when_idle_and_frees_what_was_frozen_while_alive(qtbot: object) -> None:
    policy = gc_policy.install()
    assert policy is not None
    node = Node()
    ref = weakref.ref(node)
    gc.freeze()  # as the start-up freeze does to a book's widgets while it is open
    del node
    gc.collect()
    assert ref() is not None  # frozen garbage: an ordinary collection does not see it
    idle(policy)
    before = policy.collections
    assert policy.maybe_collect()
    assert ref() is None
    assert policy.collections == before + 1
    assert gc.get_freeze_count() > 0  # and what lives on is frozen again


def test_no_collection_right_after_input_or_while_busy(qtbot: Any) -> None:
    answering = [True]
    policy = gc_policy.install(busy=lambda: answering[0])
    assert policy is not None
    field = QLineEdit()
    qtbot.addWidget(field)
    field.show()
    idle(policy)
    QTest.keyClick(field, Qt.Key.Key_A)  # the reader types: not idle
    assert time.monotonic() - policy.last_input < 1
    assert not policy.maybe_collect()
    idle(policy)
    assert not policy.maybe_collect()  # idle, but an answer is streaming in
    answering[0] = False
    assert policy.maybe_collect()


def test_an_idle_window_lets_the_encoder_go(qtbot: object, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deep search's encoder (~20 MB) is let go at an idle collection once no question has
    used it for ENCODER_IDLE_SECONDS; a question asked since keeps it."""
    from core.search import encoder as encoder_module

    encoder_module.forget_encoder()
    loaded = encoder_module.load_encoder()
    assert loaded is not None
    loaded.encode(["Who stole the tarts?"])
    policy = gc_policy.install()
    assert policy is not None
    idle(policy)
    assert policy.maybe_collect()
    assert encoder_module._loaded is loaded  # used just now: kept
    monkeypatch.setattr(gc_policy, "ENCODER_IDLE_SECONDS", 0.0)
    idle(policy)
    assert policy.maybe_collect()
    assert encoder_module._loaded is None
    again = encoder_module.load_encoder()  # the next question loads it anew
    assert again is not None and again is not loaded
    encoder_module.forget_encoder()
