"""The reading session of one open book (no Qt): the page on screen, how far the reader has
read (``read_to``, the assistant's spoiler bound), Back/Forward through jumps, the pace, and
the rule for when a move counts as reading.

The window's reader and the CLI's position commands both ask a session; it never draws and
never waits. Two positions are kept apart (DESIGN.md, "Reading position has two meanings"):
``page`` follows every move, ``read_to`` rises only by reading. The rule, written once here:

- *Turning past a screen reads all of it.* When the reader turns on (next page, Page Down,
  Space, scrolling on) from a screen that showed pages ``first``–``last`` to the screen that
  follows it, ``read_to`` becomes at least ``last`` (the screen's LAST line was read: a
  two-column screen from p. 23 to p. 26 gives 26, not 23) and at least the new screen's first
  page (the top of the screen being read now, so a question about it reaches it).
- *Reading on counts from where reading stopped*: the turn counts when the screen turned past
  starts within one screen of ``read_to``, or at the landing of a jump that is reading (next).
- *Some jumps are reading, followed by reading on.* A jump that lands in the first chapter
  while only the front matter lies behind the bound (Contents → Chapter 1: nearly every reader
  skips the title page, imprint and contents), or a short jump forward (at most
  ``SHORT_SCREENS`` of the reader's own screens past where reading stopped: a glance over a
  page or two, never a later part, whose pages are many screens on) is the reader skipping
  what they do not need; reading on from
  its landing raises the bound. The jump itself raises nothing: a reader who jumps and jumps
  back has read nothing.
- *Far jumps are looking ahead.* A later part, a search hit or a citation far on, X-Ray's page
  link: the reader is looking ahead and turning pages there moves the page, never the bound,
  until "Read to here" moves it on purpose, or Back (or any move) brings the reader within
  reach of the bound again and they read on.
- The rule depends only on the bound, where the reader landed, the screen and the book's
  contents, so a book reopened where it was left (after a restart) is judged the same way as
  the jump that put it there: a far jump stays looking ahead, a skipped front matter reads on.

"Front matter" and "short" come from the book's structure (``Contents``): the first chapter
is the first contents entry named like a chapter (Chapter, Book, Part, a number, a roman
numeral), or else the first entry that is neither the book's title nor named like front matter
(title page, imprint, contents, dedication, …); everything before its page is front matter.
A screen is measured in the reader's own pages per screen, as the view reports them (the
most of the last few screens: a screen that starts near a page's end shows one page less).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.store.library import BookInfo, Library

SLACK = 1  # pages past read_to that still count as "where reading stopped" (at least)
SHORT_SCREENS = 3  # a jump forward of at most this many screens is short (skipping, not leaping)
MOST_SCREEN_PAGES = 6  # no screen shows more stored pages (a view not laid out may say so)

_CHAPTER = re.compile(
    r"^\s*(chapter|chap\.|book|part|volume|vol\.|letter|canto|stave|act|section|prologue)\b"
    r"|^\s*[ivxlcdm]+\s*[.:]?\s*$|^\s*\d+\b",
    re.IGNORECASE,
)
_FRONT = re.compile(
    r"^\s*(title\s*page|titlepage|half[-\s]*title|cover|imprint|copyright|contents|"
    r"table of contents|dedication|epigraph|frontispiece|illustrations|"
    r"list of illustrations|about (this|the) (e-?)?book|colophon)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Screen:
    """The stored pages on screen: the page of its first line and of its last line."""

    first: int
    last: int

    @property
    def pages(self) -> int:
        return max(1, self.last - self.first + 1)


@dataclass(frozen=True)
class Contents:
    """What the rule needs of the book's structure: the page of its first chapter (where the
    front matter ends), found from its contents entries."""

    first_chapter: int = 1

    @classmethod
    def of(
        cls, entries: Iterable[tuple[str, int]], title: str = "", page_count: int = 0
    ) -> Contents:
        """From the contents entries (title, page) in book order."""
        listed = [(name.strip(), page) for name, page in entries if page >= 1]
        chapter = next((page for name, page in listed if _CHAPTER.search(name)), None)
        last = page_count or max((page for _, page in listed), default=0)
        if chapter is not None and chapter > max(3, last // 3):
            chapter = None  # a "Part" near the end is no first chapter
        if chapter is None:
            own = title.strip().casefold()
            chapter = next(
                (p for n, p in listed if not _FRONT.search(n) and n.casefold() != own), 1
            )
        return cls(chapter)


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
        contents: Contents | None = None,
    ) -> None:
        self.book_id = book_id
        self.page_count = max(1, page_count)
        self.page = self._clamp(page)
        self.read_to = self._clamp(read_to)
        self.finished = finished
        self.history = History()
        self.pace = pace or Pace()
        self.contents = contents or Contents()
        self.screen = Screen(self.page, self.page)  # as the view last reported it
        self._sizes: list[int] = []  # pages on the last few screens the view reported
        self._landed = self.page  # where the last jump (or the opening) put the reader
        self._raised = False  # read_to rose by reading since the last save
        self._bound_set = False  # read_to was set on purpose since the last save

    @classmethod
    def of(
        cls, book: BookInfo, pace: Pace | None = None, contents: Contents | None = None
    ) -> ReadingSession:
        return cls(
            book.id,
            book.page_count,
            page=book.page,
            read_to=book.read_to,
            finished=book.finished,
            pace=pace,
            contents=contents,
        )

    @classmethod
    def open(cls, library: Library, book: BookInfo, pace: Pace | None = None) -> ReadingSession:
        """The session of ``book`` with its contents read from ``library``."""
        entries = [(item.title, item.page) for item in library.toc(book.id)]
        return cls.of(book, pace, Contents.of(entries, book.title, book.page_count))

    def _clamp(self, page: int) -> int:
        return max(1, min(int(page), self.page_count))

    # the rules ------------------------------------------------------------------------

    def _one_screen(self) -> int:
        """Pages on one of the reader's screens: the most of the last few (a screen that
        starts near a page's end shows one page less than the next)."""
        return min(MOST_SCREEN_PAGES, max(SLACK, self.screen.pages, *self._sizes))

    def _see(self, screen: Screen) -> None:
        self.screen = screen
        self._sizes = [*self._sizes[-4:], screen.pages]

    def reading_jump(self, page: int) -> bool:
        """Whether a jump landing on ``page`` is reading (skipping front matter, or a short
        jump forward) rather than looking ahead; see the module's docstring."""
        stopped = self.read_to
        if stopped < self.contents.first_chapter:  # only front matter behind: it is skipped
            stopped = self.contents.first_chapter
        return page <= stopped + SHORT_SCREENS * self._one_screen()

    def _reading_from(self, page: int) -> bool:
        """Turning on from a screen starting at ``page`` is reading."""
        if page <= self.read_to + self._one_screen():
            return True
        return abs(page - self._landed) <= self._one_screen() and self.reading_jump(self._landed)

    @property
    def looking_ahead(self) -> bool:
        """True when turning pages here does not count as reading (after a far jump)."""
        return not self.finished and not self._reading_from(self.page)

    def read_on(self, to: Screen | int, past: Screen | None = None) -> bool:
        """The reader turned on (next page, Page Down, Space, scrolling on) from the screen
        ``past`` (by default the last one reported) to the screen ``to``. Raises ``read_to``
        to the last page of ``past`` and the first of ``to`` when the turn is reading (see the
        module's docstring); True when it rose."""
        if isinstance(to, int):
            to = Screen(self._clamp(to), self._clamp(to))
        past = past or self.screen
        self.page = self._clamp(to.first)
        self._see(to)
        if to.first < past.first or (to.first == past.first and to.last <= past.last):
            return False  # backwards, or nothing new: the page moves, the bound stays
        if to.first > past.last + max(SLACK, past.pages):
            self._landed = self.page  # a leap over unseen pages (the scroll bar): a jump
            return False
        if not self._reading_from(past.first):
            return False  # looking ahead: the page moves, the bound stays
        if to.first > past.first:
            self.pace.turned(to.first)
        reached = self._clamp(max(to.first, past.last if to.first >= past.last else 0))
        self._landed = self.page
        if reached > self.read_to:
            self.read_to = reached
            self._raised = True
            return True
        return False

    def shown(self, screen: Screen) -> None:
        """The view laid out ``screen`` where the reader already is (a resize, a font)."""
        self._see(screen)
        self.page = self._clamp(screen.first)

    def jump(self, page: int, here: Place | None = None) -> None:
        """A jump (contents, Find, Go to, a citation, a link, Home/End): the page moves, the
        bound never does; ``here`` (where the reader was) is kept for Back. Whether reading on
        from the landing counts is ``reading_jump``'s to say."""
        if here is not None:
            self.history.push(here)
        self._land(page)

    def _land(self, page: int) -> None:
        """The reader is put on ``page`` (a screen of the same size as the last one)."""
        self.page = self._landed = self._clamp(page)
        self.screen = Screen(self.page, self._clamp(self.page + self.screen.pages - 1))

    def moved(self, page: int, screen: Screen | None = None) -> None:
        """The page changed without reading on (Page Up, the window settling its layout)."""
        self.page = self._clamp(page)
        self._see(screen or Screen(self.page, self.page))

    def back(self, here: Place) -> Place | None:
        """Where Back goes (and ``here`` becomes Forward's), or None."""
        target = self.history.back(here)
        if target is not None:
            self._land(target.page)
        return target

    def forward(self, here: Place) -> Place | None:
        target = self.history.forward(here)
        if target is not None:
            self._land(target.page)
        return target

    def read_to_here(self) -> int:
        """ "Read to here": the bound becomes the page on screen, lower as well as higher."""
        return self.set_bound(self.page)

    def set_bound(self, page: int) -> int:
        """Set ``read_to`` on purpose (``margin read-to``), lower as well as higher."""
        self.read_to = self._clamp(page)
        self._landed = self.page
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
