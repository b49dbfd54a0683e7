"""Passwords of protected PDFs: asked for in a window dialog, kept in this process's memory
for the session (so the page view can open the book again), never written anywhere — not
in the library, the settings, the log or an event log."""

from __future__ import annotations

import asyncio
import logging

from PySide6.QtWidgets import QInputDialog, QLineEdit, QWidget

log = logging.getLogger("margin.password")

_session: dict[str, str] = {}  # book file's SHA-256 -> password, this session only


def remember(sha256: str, password: str) -> None:
    _session[sha256] = password


def known(sha256: str) -> str | None:
    return _session.get(sha256)


def forget(sha256: str) -> None:
    _session.pop(sha256, None)


def prompt_text(file_name: str, wrong: bool) -> str:
    if wrong:
        return (
            f"That password for “{file_name}” is wrong.\n"
            "Type it again (capital letters count), or Cancel."
        )
    return (
        f"“{file_name}” is protected by a password.\n"
        "Type it to open the book. Margin keeps it only until you quit; it is never saved."
    )


async def ask_password(parent: QWidget | None, file_name: str, wrong: bool = False) -> str | None:
    """Show the password dialog (window-modal, without blocking the event loop) and return
    what was typed, or None when the reader cancels."""
    dialog = QInputDialog(parent)
    dialog.setObjectName("pdfPassword")
    dialog.setWindowTitle("Password needed")
    dialog.setLabelText(prompt_text(file_name, wrong))
    dialog.setTextEchoMode(QLineEdit.EchoMode.Password)
    dialog.setOkButtonText("Open")
    dialog.setAccessibleName("Password of the PDF")
    loop = asyncio.get_event_loop()
    answer: asyncio.Future[str | None] = loop.create_future()

    def done(result: int) -> None:
        if not answer.done():
            answer.set_result(dialog.textValue() if result else None)

    dialog.finished.connect(done)
    dialog.open()
    try:
        return await answer
    finally:
        dialog.setTextValue("")
        dialog.deleteLater()


async def open_after_password(window: QWidget, book_id: int, page: int | None, code: str) -> None:
    """The page view could not open a protected PDF (no password this session, or a wrong
    one): ask for it, then open the book again (a wrong one asks again)."""
    library = window.library  # type: ignore[attr-defined]
    book = library.get_book(book_id)
    typed = await ask_password(window, book.title, wrong=code == "wrong_password")
    if not typed:
        forget(book.sha256)
        window.library_panel.show_errors(  # type: ignore[attr-defined]
            [f"“{book.title}” was not opened: it is protected by a password."]
        )
        if window.reader.book is None:  # type: ignore[attr-defined]
            window.panes.show_library()  # type: ignore[attr-defined]
        return
    remember(book.sha256, typed)
    window.open_book(book_id, page)  # type: ignore[attr-defined]
