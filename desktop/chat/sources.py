"""What an answer points to, and what the reader opened of it: the links in the transcript
(page chips to the book, actions such as Copy or Show sources) and the per-answer state of
the sources and trace lists and of revealed hidden sentences."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import unquote

from PySide6.QtCore import QUrl
from PySide6.QtGui import QGuiApplication

from desktop.requests import OpenPageRequest

if TYPE_CHECKING:
    from desktop.chat.pane import ChatPane

ALWAYS_RETRIEVE = "always-retrieve"  # "Answer from the book": the strategy that searches first


def citation(url: QUrl) -> OpenPageRequest | None:
    """A page chip (``margin-cite:BOOK/FIRST-LAST?q=QUOTE``) as a request to open the book."""
    if url.scheme() != "margin-cite":
        return None
    try:
        book_s, pages = url.path().split("/", 1)
        first = int(pages.split("-")[0])
        book_id = int(book_s)
    except ValueError:
        return None
    query, _, at = url.query().removeprefix("q=").partition("&at=")
    return OpenPageRequest(book_id, first, unquote(query), int(at) if at.isdigit() else -1)


def action(url: QUrl) -> tuple[str, str] | None:
    """An action link (``margin-action:NAME/ARG``) as (name, argument)."""
    if url.scheme() != "margin-action":
        return None
    name, _, arg = url.path().partition("/")
    return name, arg


@dataclass
class Opened:
    """Per answer key: the sources ("s") and trace ("t") lists shown, the hidden sentences
    revealed. Render functions read ``expanded`` as the set of ``kind + key``."""

    expanded: set[str] = field(default_factory=set)
    revealed: dict[str, set[int]] = field(default_factory=dict)
    whole: set[str] = field(default_factory=set)  # long answers shown in full (Show all)

    def toggle(self, kind: str, key: str) -> None:
        self.expanded.symmetric_difference_update({kind[0] + key})

    def reveal(self, key: str, index: int) -> None:
        self.revealed.setdefault(key, set()).add(index)

    def revealed_in(self, key: str) -> set[int]:
        return self.revealed.get(key, set())

    def variant(self, key: str) -> tuple[bool, bool, frozenset[int]]:
        """What of this state changes how the answer looks (a cache key part)."""
        return (
            "s" + key in self.expanded,
            "t" + key in self.expanded,
            frozenset(self.revealed.get(key, ())),
        )

    def move(self, old: str, new: str) -> None:
        """A streamed answer became a stored one: what was opened while it streamed stays so."""
        if old in self.revealed:
            self.revealed[new] = self.revealed.pop(old)
        for kind in ("s", "t"):
            if kind + old in self.expanded:
                self.expanded.discard(kind + old)
                self.expanded.add(kind + new)


def follow(pane: ChatPane, url: QUrl) -> None:
    """A link in the transcript was clicked: open the page, or do what the answer offers."""
    request = citation(url)
    if request is not None:
        pane.requestOpenPage.emit(request)
        return
    link = action(url)
    if link is None:
        return
    name, arg = link
    views = pane.messages.views
    if name == "settings":
        pane.requestSettings.emit()
    elif name == "copy" and arg in views:
        QGuiApplication.clipboard().setText(views[arg].text)
        pane.status.setText("Answer copied.")
    elif name == "regenerate" and pane.conversation_id is not None:
        pane.ask("", regenerate=True)
    elif name == "retry" and arg in views:
        pane.retry(arg)
    elif name == "ground" and arg in views:
        pane.retry(arg, strategy=ALWAYS_RETRIEVE)
    elif name == "reveal":
        key, _, index = arg.partition("/")
        if index.isdigit():
            pane.messages.opened.reveal(key, int(index))
            live = pane.live.by_key(key)
            if live is not None and live.conversation_id == pane.conversation_id:
                pane.messages.repaint_live(live)
            else:
                pane.messages.rerender(key)
    elif name == "all" and arg in views:
        pane.messages.show_all(arg)
    elif name in ("sources", "trace"):
        pane.messages.opened.toggle(name, arg)
        pane.messages.rerender(arg)
