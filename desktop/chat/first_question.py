"""The chat pane readies the first question while the reader reads (``core.agent.warm``,
issue 41): once a model is connected, its SDK and client first, then, when a book is open and
the window has been quiet a moment, the book's part on a worker thread (its spoiler
statistics and the check's tables, the disk reserve) and the Markdown renderer the first
answer is drawn with. Passages mode needs none of the book's part: once the reader starts
typing, or selects text to ask about, what its reply first uses is loaded instead (the
sentence encoder and the static model for the question's words, the re-ranker, the renderer;
its reading ahead of the book runs in a worker process: sentence_warmup.py). In every mode,
deep search's vectors of the pages ahead of the reader follow the book's opening and the
reader's reading on."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QObject, QTimer

from desktop.tasks import in_background

if TYPE_CHECKING:
    from core.app import Margin
    from desktop.events import Events

log = logging.getLogger("margin.chat.warm")

BOOK_AFTER_MS = 1500  # the book's part waits for the window to settle after it opens
RETRIES = 20  # its spoiler statistics not counted yet: looked at again this many times


def _warm_book(app: Margin, book_id: int) -> bool:
    """On a worker thread: the book's part, and the renderer (its first use imports it)."""
    from core.agent.warm import warm_book

    _ready_renderer()
    return warm_book(app.agent, book_id)


def _ready_renderer() -> None:
    """The Markdown renderer's modules (its first use imports them)."""
    from desktop.chat.render import markdown

    markdown("A *first* answer [p. 1].")


def _warm_passages() -> bool:
    """On a worker thread, once a question is begun in passages mode: what its reply first
    uses (the encoder and the static model, the answer re-ranker, the Markdown renderer the
    reply is drawn with: 68 modules). Whether the encoder is there."""
    import core.search.answer_rerank  # noqa: F401
    from core.agent.providers.answer_sentence import preload

    _ready_renderer()
    return preload()


class FirstQuestion(QObject):
    def __init__(self, app: Margin, parent: QObject) -> None:
        super().__init__(parent)
        self.app = app
        self.connected = False
        self.book_id: int | None = None
        self.warmed: set[int] = set()
        self.typing = False
        self.readying = False  # a passages reply's models are being loaded
        self._tries = 0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(BOOK_AFTER_MS)
        self._timer.timeout.connect(self._warm)

    async def warm_model(self) -> None:
        """The model's SDK and client (before anything of the book's)."""
        from core.agent.warm import connect

        await connect(self.app.agent)
        self.connected = True
        self._soon()

    def set_book(self, book_id: int | None) -> None:
        self.book_id = book_id
        self._tries = 0
        self._soon()

    def reader_moved(self, book_id: int) -> None:
        """The book opened, or its reader read on (whatever the mode): deep search's vectors
        of the pages ahead, in a background process (``vector_indexer.want_ahead``: cheap
        here, and nothing when they are there)."""
        from core.search.vector_indexer import want_ahead

        want_ahead(self.app.library.db, book_id)

    def question_edited(self, text: str) -> None:
        """The composer's text changed: a question begun (in passages mode) loads the
        sentence encoder on a worker thread, so the reply does not wait for it."""
        typing = bool(text.strip())
        if typing and not self.typing:
            self._ready_reply()
        self.typing = typing

    def follow(self, events: Events) -> None:
        """Listen to the reader's stream: a selection readies a passages reply."""
        from desktop.events import SelectionChanged

        events.subscribe(SelectionChanged, lambda e: self.text_selected(e.text))

    def text_selected(self, text: str) -> None:
        """Text was selected on the page: "Ask" is one click away (a question sent without
        typing), so a passages reply's models load now, as for a question begun."""
        if text.strip():
            self._ready_reply()

    def _ready_reply(self) -> None:
        """In passages mode, what its reply first uses, on a worker thread (once at a time: a
        selection being dragged asks on every move)."""
        if self.readying or self.app.mode() != "passages":
            return
        self.readying = True

        def done(_: object) -> None:
            if shiboken6.isValid(self):
                self.readying = False

        in_background(_warm_passages, then=done, failed=done)

    def _soon(self) -> None:
        if self.connected and self.book_id is not None and self.book_id not in self.warmed:
            self._timer.start()

    def _warm(self) -> None:
        book_id = self.book_id
        if book_id is None or book_id in self.warmed or self.app.mode() == "passages":
            return

        def done(ready: bool) -> None:
            if not shiboken6.isValid(self):
                return  # the window closed meanwhile
            if ready:
                self.warmed.add(book_id)
            elif book_id == self.book_id and self._tries < RETRIES:
                self._tries += 1
                self._timer.start()

        def failed(exc: Exception) -> None:  # only speed is lost: the question does it
            log.info("the first question's warm-up failed: %s", exc)

        in_background(_warm_book, self.app, book_id, then=done, failed=failed)
