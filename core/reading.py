"""The reading session of one open book (no Qt): the page on screen, how far the reader has
read (``read_to``, the assistant's spoiler bound), Back/Forward through jumps, the pace, and
the rule for when a move counts as reading.

The window's reader and the CLI's position commands both ask a session; it never draws and
never waits. Two positions are kept apart (DESIGN.md): ``page`` follows every move, and
``read_to`` rises only by reading on from the bound:

- *reading* (next page, Page Down, scrolling on) raises ``read_to`` only when the reader
  continues from at most one screen beyond it (``SLACK`` pages);
- after a jump past the bound (contents, Find, Go to, a citation, a link) the reader is
  *looking ahead*: turning pages there moves the page, never the bound, until "Read to
  here" moves it on purpose, or the reader comes back within one screen of it and reads on;
- Back returns to where the reader was before the jump (where reading stopped).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.store.library import BookInfo, Library

SLACK = 1  # pages past read_to that still count as "where reading stopped" (one screen)


@dataclass(frozen=True, order=True)
class Place:
    """A place in the book: a stored page and where on it (the first line on screen: a
    character offset for reflowable books, a height in points for PDF pages)."""

    page: int
    offset: int = 0


class History:
    """Back/Forward through jumps, like a browser: a jump pushes where you were."""

    LIMIT = 100

    def __init__(self) -> None:
        self._back: list[Place] = []
        self._forward: list[Place] = []

    def push(self, here: Place) -> None:
        if not self._back or self._back[-1] != here:
            self._back.append(here)
            del self._back[: -self.LIMIT]
        self._forward.clear()

    def back(self, here: Place) -> Place | None:
        if not self._back:
            return None
        self._forward.append(here)
        return self._back.pop()

    def forward(self, here: Place) -> Place | None:
        if not self._forward:
            return None
        self._back.append(here)
        return self._forward.pop()

    def can_back(self) -> bool:
        return bool(self._back)

    def can_forward(self) -> bool:
        return bool(self._forward)


class Pace:
    """The reader's measured time per page (median of recent page turns made by reading)."""

    DEFAULT = 90.0  # seconds for a stored page of about 2,000 characters
    FASTEST, SLOWEST = 5.0, 900.0  # skimming and coffee breaks are not reading pace

    def __init__(
        self, remembered: float | None = None, clock: Callable[[], float] | None = None
    ) -> None:
        self._clock = clock
        self._last: tuple[int, float] | None = None
        ok = remembered is not None and self.FASTEST <= remembered <= self.SLOWEST
        self._samples: list[float] = [float(remembered)] if ok and remembered else []

    def turned(self, page: int) -> None:
        now = self._clock() if self._clock is not None else time.monotonic()
        if self._last is not None and page > self._last[0]:
            per_page = (now - self._last[1]) / (page - self._last[0])
            if self.FASTEST <= per_page <= self.SLOWEST:
                self._samples = [*self._samples[-19:], per_page]
        self._last = (page, now)

    def measured(self) -> bool:
        return bool(self._samples)

    def seconds_per_page(self) -> float:
        if not self._samples:
            return self.DEFAULT
        ordered = sorted(self._samples)
        return ordered[len(ordered) // 2]


class ReadingSession:
    """One open book's positions and the rules that move them."""

    def __init__(
        self,
        book_id: int,
        page_count: int,
        *,
        page: int = 1,
        read_to: int = 1,
        finished: bool = False,
        pace: Pace | None = None,
    ) -> None:
        self.book_id = book_id
        self.page_count = max(1, page_count)
        self.page = self._clamp(page)
        self.read_to = self._clamp(read_to)
        self.finished = finished
        self.history = History()
        self.pace = pace or Pace()
        self._raised = False  # read_to rose by reading since the last save
        self._bound_set = False  # read_to was set on purpose since the last save

    @classmethod
    def of(cls, book: BookInfo, pace: Pace | None = None) -> ReadingSession:
        return cls(
            book.id,
            book.page_count,
            page=book.page,
            read_to=book.read_to,
            finished=book.finished,
            pace=pace,
        )

    def _clamp(self, page: int) -> int:
        return max(1, min(int(page), self.page_count))

    # the rules ------------------------------------------------------------------------

    @property
    def looking_ahead(self) -> bool:
        """True when the page on screen is more than one screen past ``read_to`` (after a
        jump): page turns here do not count as reading."""
        return not self.finished and self.page > self.read_to + SLACK

    def read_on(self, page: int) -> bool:
        """The reader read on to ``page`` (next page, Page Down, scrolling on). Raises
        ``read_to`` when reading continued from within one screen of it; True when it did."""
        page = self._clamp(page)
        start, self.page = self.page, page
        if page <= start or start > self.read_to + SLACK:
            return False  # backwards, or looking ahead: the page moves, the bound stays
        self.pace.turned(page)
        if page > self.read_to:
            self.read_to = page
            self._raised = True
            return True
        return False

    def jump(self, page: int, here: Place | None = None) -> None:
        """A jump (contents, Find, Go to, a citation, a link, Home/End): the page moves, the
        bound never does; ``here`` (where the reader was) is kept for Back."""
        if here is not None:
            self.history.push(here)
        self.page = self._clamp(page)

    def moved(self, page: int) -> None:
        """The page changed without reading on (Page Up, the window settling its layout)."""
        self.page = self._clamp(page)

    def back(self, here: Place) -> Place | None:
        """Where Back goes (and ``here`` becomes Forward's), or None."""
        target = self.history.back(here)
        if target is not None:
            self.page = self._clamp(target.page)
        return target

    def forward(self, here: Place) -> Place | None:
        target = self.history.forward(here)
        if target is not None:
            self.page = self._clamp(target.page)
        return target

    def read_to_here(self) -> int:
        """ "Read to here": the bound becomes the page on screen, lower as well as higher."""
        return self.set_bound(self.page)

    def set_bound(self, page: int) -> int:
        """Set ``read_to`` on purpose (``margin read-to``), lower as well as higher."""
        self.read_to = self._clamp(page)
        self._bound_set = True
        self._raised = False
        return self.read_to

    def set_finished(self, finished: bool) -> None:
        self.finished = finished

    # what the window says -------------------------------------------------------------

    def bound_note(self) -> str:
        """The footer's words while looking ahead, else ""."""
        if not self.looking_ahead:
            return ""
        return f"Looking ahead — the assistant still stops at p. {self.read_to}"

    # the library ----------------------------------------------------------------------

    def save(self, library: Library) -> BookInfo:
        """Write the page and any change of the bound. Reading only ever raises the stored
        bound (another window or ``margin read-to`` may have moved it meanwhile); "Read to
        here" sets it, lower as well as higher."""
        if self._bound_set:
            library.set_read_to(self.book_id, self.read_to)
        book = library.set_page(
            self.book_id, self.page, reached=self.read_to if self._raised else None
        )
        self._raised = self._bound_set = False
        self.read_to = book.read_to
        self.finished = book.finished
        return book
