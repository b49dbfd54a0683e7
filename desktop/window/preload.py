"""The agent's modules loaded ahead, on a thread, once the window is up."""

from __future__ import annotations

import importlib
import logging

from PySide6.QtCore import QTimer

from desktop.tasks import pool

log = logging.getLogger("margin.window")


def preload_agent() -> None:
    """Import the agent's modules (about 70 ms of CPU) on a thread once the window is up,
    so opening the first book — which shows its conversations — does not pay for it,
    start-up does not either, and the window keeps painting meanwhile (the interpreter
    hands the UI thread its turn every few milliseconds)."""

    def load() -> None:
        try:
            importlib.import_module("core.agent.service")
        except Exception:  # only speed is lost: the first book imports it then
            log.exception("preloading the agent's modules failed")

    QTimer.singleShot(400, lambda: pool().submit(load))
