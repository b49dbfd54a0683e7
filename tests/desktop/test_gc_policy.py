"""The garbage collector pauses the window only when the reader is not looking."""

from __future__ import annotations

import gc
import time
import weakref
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLineEdit

from desktop import gc_policy


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
