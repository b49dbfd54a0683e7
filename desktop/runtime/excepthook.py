"""The global exception hook: the traceback goes to the log file, the reader gets a sentence."""

from __future__ import annotations

import logging
import sys
import traceback
from types import TracebackType

log = logging.getLogger("margin.crash")
_dialogs: list[object] = []


def _show(text: str) -> None:
    from PySide6.QtWidgets import QApplication, QMessageBox

    app = QApplication.instance()
    if app is None:
        return
    parent = QApplication.activeWindow()
    box = QMessageBox(
        QMessageBox.Icon.Warning, "Margin", text, QMessageBox.StandardButton.Ok, parent
    )
    box.setInformativeText(
        "Your books and conversations are safe. The details were written to the log file."
    )
    box.setModal(False)
    box.finished.connect(lambda *_: _dialogs.remove(box) if box in _dialogs else None)
    _dialogs.append(box)
    box.show()


def handle(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    if issubclass(exc_type, KeyboardInterrupt):
        sys.__excepthook__(exc_type, exc, tb)
        return
    from core.errors import MarginError

    if isinstance(exc, MarginError):
        log.info("error shown to the reader: %s (%s)", exc.message, exc.code)
        text = str(exc)
    else:
        log.error("unexpected error:\n%s", "".join(traceback.format_exception(exc_type, exc, tb)))
        text = "Something went wrong that Margin did not expect."
    try:
        _show(text)
    except Exception:
        log.exception("could not show the error dialog")


def install() -> None:
    sys.excepthook = handle
