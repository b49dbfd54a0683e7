"""Reading aloud, sentence by sentence: what is being said, where it is on the page, and the
controls (play, pause, stop, previous and next sentence, speed, a sleep timer).

``ReadAloud`` knows nothing of the window: it is given a ``Planner`` (where to read from →
the utterances, ``core.speech``) and tells what happens by its signals; the module that
joins it to the reader (``module.py``) marks sentences and turns pages. A watchdog stops
reading with a clear message when the engine stalls in the middle of a sentence."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

from PySide6.QtCore import QElapsedTimer, QObject, QTimer, Signal

from core.speech import NoText, Utterance
from desktop.readaloud.speaker import RATE_STEP, Speaker

log = logging.getLogger("margin.readaloud")

# (page, offset) → utterances from there on; raises NoText when there is nothing to say
Planner = Callable[[int, int], Iterator[Utterance]]
STALL_MIN_MS = 8_000  # no word and no end for this long (or far longer than the sentence
STALL_MS_PER_CHAR = 200  # should take at the slowest speed): the engine has stalled
STALLED = (
    "The speech engine stopped answering in the middle of a sentence, so reading aloud "
    "stopped. Press Read aloud to try again; if it keeps happening, restart the speech "
    "service (on Linux: speech-dispatcher)."
)


class ReadAloud(QObject):
    stateChanged = Signal(str)  # "playing", "paused", "stopped"
    utteranceStarted = Signal(object)  # the Utterance now said
    wordStarted = Signal(int, int, int)  # page, start, end of the word said (offsets in the page)
    pageListened = Signal(int)  # a page was said to its end and reading goes on past it
    finished = Signal()  # the book (or the text given) was said to its end
    message = Signal(str)  # something for people: why reading stopped or cannot start
    firstWord = Signal(int)  # ms from play to the first utterance starting (benchmarks)

    def __init__(self, speaker: Speaker | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.speaker = speaker or Speaker(self)
        self.speaker.setParent(self)
        self.state = "stopped"
        self.current: Utterance | None = None
        self.spoken: list[Utterance] = []  # said so far (for Previous sentence)
        self._planner: Planner | None = None
        self._queue: Iterator[Utterance] = iter(())
        self._language = ""
        self._clock = QElapsedTimer()
        self._waiting_first = False
        self._watchdog = QTimer(self, singleShot=True)
        self._watchdog.timeout.connect(self._stalled)
        self._sleep = QTimer(self, singleShot=True)
        self._sleep.timeout.connect(self._sleep_over)
        self._stop_after_sentence = False
        self.speaker.started.connect(self._started)
        self.speaker.word.connect(self._word)
        self.speaker.finished.connect(self._done)
        self.speaker.failed.connect(self._failed)

    # what to read ----------------------------------------------------------------------

    def set_source(self, planner: Planner | None, language: str = "") -> None:
        """The open book (None: no book); reading aloud stops."""
        self.stop()
        self._planner = planner
        self._language = language

    # controls --------------------------------------------------------------------------

    def play(self, page: int, offset: int = 0) -> bool:
        """Read aloud from ``offset`` of ``page``; False (and a message) when it cannot."""
        if self._planner is None:
            return False
        self._halt()
        try:
            queue = self._planner(page, offset)
        except NoText as exc:
            self._tell(str(exc)[:1].upper() + str(exc)[1:])
            return False
        return self.play_utterances(queue)

    def play_text(self, text: str, language: str = "") -> bool:
        """Read ``text`` aloud (an answer): its sentences, nothing marked on the page."""
        from core.speech.plan import page_utterances

        self._halt()
        if language:
            self._language = language
        return self.play_utterances(iter(list(page_utterances(0, text))))

    def play_utterances(self, queue: Iterator[Utterance]) -> bool:
        """Say ``queue`` (utterances made elsewhere: ``margin speak``)."""
        if not self.speaker.ready():
            self._tell(self.speaker.problem)
            return False
        problem = self.speaker.use_language(self._language)
        if problem:
            self._tell(problem)
            return False
        self._tell(self.speaker.note)
        self._queue = queue
        self.spoken = []
        self.current = None  # a new place: nothing before it was listened to its end
        self._clock.start()
        self._waiting_first = True
        self._set_state("playing")
        self._next()
        return True

    def toggle(self, page: int = 1, offset: int = 0) -> None:
        """Play/pause: pause while playing, resume while paused, else play from here."""
        if self.state == "playing":
            self.pause()
        elif self.state == "paused":
            self.resume()
        else:
            self.play(page, offset)

    def pause(self) -> None:
        if self.state == "playing":
            self._watchdog.stop()
            self.speaker.pause()
            self._set_state("paused")

    def resume(self) -> None:
        if self.state == "paused":
            self._set_state("playing")
            self.speaker.resume()
            self._arm()

    def stop(self) -> None:
        self._halt()
        self.current = None
        self._set_state("stopped")

    def next_sentence(self) -> None:
        if self.state == "stopped":
            return
        self.speaker.stop()
        self._next()

    def previous_sentence(self) -> None:
        """Say the sentence before the current one again (the first one: itself)."""
        if self.state == "stopped" or not self.spoken:
            return
        self.speaker.stop()
        keep = max(0, len(self.spoken) - 2)
        again, self.spoken = self.spoken[keep:], self.spoken[:keep]
        self.current = None
        self._queue = _chain(again, self._queue)
        self._next()

    def faster(self) -> float:
        return self.set_rate(self.speaker.rate + RATE_STEP)

    def slower(self) -> float:
        return self.set_rate(self.speaker.rate - RATE_STEP)

    def set_rate(self, rate: float) -> float:
        return self.speaker.set_rate(rate)

    def sleep_in(self, minutes: float) -> None:
        """Stop reading at the end of the sentence said ``minutes`` from now (0: never)."""
        self._stop_after_sentence = False
        if minutes <= 0:
            self._sleep.stop()
        else:
            self._sleep.start(int(minutes * 60_000))

    def sleep_left_ms(self) -> int:
        return self._sleep.remainingTime() if self._sleep.isActive() else 0

    # the engine's news -----------------------------------------------------------------

    def _next(self) -> None:
        previous = self.current
        try:
            following = next(self._queue, None)
        except NoText:
            following = None
        if previous is not None and previous.page:
            # every page passed was said to its end (pages without text between included)
            last = previous.page if following is None else following.page - 1
            for page in range(previous.page, last + 1):
                self.pageListened.emit(page)
        if following is None or self._stop_after_sentence:
            self.current = None
            self._halt()
            self._set_state("stopped")
            if following is None:
                self.finished.emit()
            return
        self.current = following
        self.spoken.append(following)
        self.speaker.say(following.text)  # first: the engine starts while the page is marked
        self._arm()
        self.utteranceStarted.emit(following)

    def _started(self) -> None:
        if self._waiting_first:
            self._waiting_first = False
            self.firstWord.emit(int(self._clock.elapsed()))

    def _word(self, start: int, length: int) -> None:
        u = self.current
        if u is None or self.state != "playing":
            return
        self._arm()
        if u.page:
            self.wordStarted.emit(u.page, u.page_offset(start), u.page_offset(start + length))

    def _done(self) -> None:
        if self.state == "playing":
            self._next()

    def _failed(self, text: str) -> None:
        self._halt()
        self.current = None
        self._set_state("stopped")
        self._tell(text)

    def _arm(self) -> None:
        """Expect a word or the end within a time the sentence cannot take at any speed."""
        length = len(self.current.text) if self.current is not None else 0
        self._watchdog.start(max(STALL_MIN_MS, STALL_MS_PER_CHAR * min(length, 2_000)))

    def _stalled(self) -> None:
        if self.state != "playing":
            return
        log.warning("speech engine stalled on %r", self.current.text[:80] if self.current else "")
        self._failed(STALLED)

    def _sleep_over(self) -> None:
        if self.state == "playing":
            self._stop_after_sentence = True
        else:
            self.stop()
        self._tell("The sleep timer ran out: reading aloud stops at the end of this sentence.")

    def _halt(self) -> None:
        self._watchdog.stop()
        self._waiting_first = False
        self.speaker.stop()
        self._queue = iter(())
        self._stop_after_sentence = False

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.stateChanged.emit(state)

    def _tell(self, text: str) -> None:
        if text:
            self.message.emit(text)


def _chain(first: list[Utterance], rest: Iterator[Utterance]) -> Iterator[Utterance]:
    yield from first
    yield from rest
