"""Read aloud's controls: the Read aloud menu, a toolbar button and the keys, a sleep timer,
the voice list, answers read aloud from the chat, and the state said to screen readers.

Keys (window-wide, in focus mode too): Ctrl+Shift+U read aloud / pause, Ctrl+Shift+K stop,
Alt+Shift+Left / Right the previous / next sentence, Alt+Shift+Up / Down faster / slower."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, QUrl
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu, QToolButton, QWidget

from core.speech import settings as read_aloud_settings
from desktop.accessibility import announce
from desktop.readaloud.module import ReaderSpeech

log = logging.getLogger("margin.readaloud")

if TYPE_CHECKING:
    from PySide6.QtTextToSpeech import QVoice

    from core.agent.answer import AnswerState
    from desktop.chat.pane import ChatPane

KEYS = {
    "toggle": "Ctrl+Shift+U",
    "stop": "Ctrl+Shift+K",
    "previous": "Alt+Shift+Left",
    "next": "Alt+Shift+Right",
    "faster": "Alt+Shift+Up",
    "slower": "Alt+Shift+Down",
}
SLEEP_MINUTES = (0, 15, 30, 60)
_MARKUP = re.compile(r"<margin-cite:[^>]*>|[*_`#>]+|\[(\d+)\]")


def answer_words(text: str) -> str:
    """An answer as it is said: no Markdown marks, no citation tags."""
    return " ".join(_MARKUP.sub(" ", text).split())


class ReadAloudActions(QObject):
    def __init__(self, window: QWidget, reader_speech: ReaderSpeech) -> None:
        super().__init__(window)
        self.window = window
        self.rs = reader_speech
        speech = reader_speech.speech
        self.actions: dict[str, QAction] = {}
        self.menu = QMenu("Read &aloud", window)
        self.menu.setObjectName("read_aloud_menu")
        add = self._add
        add("toggle", "&Read aloud", reader_speech.toggle)
        add("stop", "&Stop", speech.stop)
        self.menu.addSeparator()
        add("previous", "&Previous sentence", speech.previous_sentence)
        add("next", "&Next sentence", speech.next_sentence)
        self.menu.addSeparator()
        add("faster", "&Faster", lambda: self._said_rate(speech.faster()))
        add("slower", "S&lower", lambda: self._said_rate(speech.slower()))
        self.voices = QMenu("&Voice", self.menu)
        self.menu.addMenu(self.voices)
        self.voices.aboutToShow.connect(self._fill_voices)
        # the submenus and this action are made here, owned by their parents: the wrappers
        # of those QMenu.addMenu(text) / addAction(text) make went invalid once a book opened
        # (the Voice menu and the answers option then failed on their first use)
        self.answers = QAction("Read &answers aloud when they finish", self)
        self.menu.addAction(self.answers)
        self.answers.setCheckable(True)
        self._answered: set[str] = set()
        self._restore()
        self.answers.toggled.connect(lambda _on: self._keep())
        self.sleep = QMenu("Sleep &timer", self.menu)
        self.menu.addMenu(self.sleep)
        group = QActionGroup(self)
        for minutes in SLEEP_MINUTES:
            act = QAction("Off" if not minutes else f"{minutes} minutes", self.sleep)
            act.setCheckable(True)
            act.setChecked(minutes == 0)
            act.triggered.connect(lambda _c=False, m=minutes: speech.sleep_in(m))
            group.addAction(act)
            self.sleep.addAction(act)
        # a glyph, as the toolbar's other buttons: its words would widen the reader's least
        # width past what a 1024-pixel window leaves beside the chat
        self.button = QToolButton()
        self.button.setText("▷")
        glyph = self.button.font()  # the outline triangle's strokes thick enough to read
        glyph.setPointSizeF(glyph.pointSizeF() * 1.5)  # at 4.5 : 1 (3.5 : 1 in sepia before)
        self.button.setFont(glyph)
        self.button.clicked.connect(self.actions["toggle"].trigger)
        self.button.setToolTip(self.actions["toggle"].toolTip())
        self.button.setAutoRaise(True)
        self.button.setAccessibleName("Read aloud")
        speech.stateChanged.connect(self._state)
        reader_speech.announce.connect(self._announce)
        window.installEventFilter(self)  # closing the window stops reading aloud

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window and event.type() == QEvent.Type.Close:
            self.rs.speech.stop()
        return False

    def _add(self, name: str, text: str, slot: Callable[[], object]) -> QAction:
        act = QAction(text, self.window)
        act.setShortcut(QKeySequence(KEYS[name]))
        act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        act.triggered.connect(slot)
        self.menu.addAction(act)
        self.window.addAction(act)  # the keys work with the menu bar hidden too
        self.actions[name] = act
        return act

    def _state(self, state: str) -> None:
        toggle = self.actions["toggle"]
        toggle.setText("&Pause" if state == "playing" else "&Read aloud")
        toggle.setToolTip(
            ("Pause reading aloud" if state == "playing" else "Read aloud from here")
            + f" ({KEYS['toggle']})"
        )
        self.button.setAccessibleName("Pause" if state == "playing" else "Read aloud")
        self.button.setText("❚❚" if state == "playing" else "▷")
        self.button.setToolTip(toggle.toolTip())

    def _said_rate(self, rate: float) -> None:
        self._keep()
        self._announce(f"Speed {round(rate * 10):+d}" if rate else "Normal speed")

    # settings (the [read_aloud] table of settings.toml) --------------------------------------

    def _restore(self) -> None:
        """The voice, speed and answers option kept last time."""
        paths = getattr(self.window, "paths", None)
        if paths is None:
            return
        kept, problems = read_aloud_settings.load(paths)
        speaker = self.rs.speech.speaker
        speaker.set_rate(kept.rate)
        speaker.preferred = (kept.voice, kept.voice_language)
        self.answers.setChecked(kept.answers_aloud)
        for problem in problems:
            log.warning("%s", problem)
        if problems:
            status = getattr(self.window, "statusBar", None)
            if callable(status):
                status().showMessage(problems[0], 20000)

    def _keep(self) -> None:
        """Save the voice, speed and answers option (each lives only there)."""
        paths = getattr(self.window, "paths", None)
        if paths is None:
            return
        speaker = self.rs.speech.speaker
        voice, language = speaker.preferred
        kept = read_aloud_settings.ReadAloudSettings(
            voice=voice,
            voice_language=language,
            rate=speaker.rate,
            answers_aloud=self.answers.isChecked(),
        )
        try:
            saved = read_aloud_settings.save(paths, kept)
        except OSError:
            log.warning("read-aloud settings not saved", exc_info=True)
            saved = False
        if not saved:
            self._announce(
                f"The read-aloud settings were not saved: {paths.settings_file} cannot be "
                "read or written. Fix the file, or delete it to go back to the defaults."
            )

    def _voice_chosen(self, voice: QVoice) -> None:
        self.rs.speech.speaker.set_voice(voice)
        self._keep()

    def _announce(self, text: str) -> None:
        status = getattr(self.window, "statusBar", None)
        if callable(status):
            status().showMessage(text, 8000)
        announce(self.window, text)

    def _fill_voices(self) -> None:
        self.voices.clear()
        speaker = self.rs.speech.speaker
        if not speaker.ready():
            self.voices.addAction(speaker.problem[:80]).setEnabled(False)
            return
        book = self.rs.reader.book
        current = speaker.current_voice()
        # the voices for the book's language (all of them when it has none)
        for voice in speaker.voices(book.language if book is not None else ""):
            name = f"{voice.name()} ({voice.locale().nativeLanguageName()})"
            act = self.voices.addAction(name)
            act.setCheckable(True)
            act.setChecked(voice.name() == current)
            act.triggered.connect(lambda _c=False, v=voice: self._voice_chosen(v))

    # answers ---------------------------------------------------------------------------------

    def answer_link(self, url: QUrl, views: dict[str, AnswerState]) -> bool:
        """A chat link ``margin-action:speak/KEY``: read that answer aloud."""
        if url.scheme() != "margin-action":
            return False
        name, _, key = url.path().partition("/")
        if name != "speak" or key not in views:
            return False
        book = self.rs.reader.book
        return self.rs.speech.play_text(
            answer_words(views[key].text), book.language if book is not None else ""
        )

    def answer_finished(self, pane: ChatPane, conversation_id: int) -> bool:
        """With "Read answers aloud when they finish" on, say the answer just finished
        (``pane.answerRendered`` also fires while an answer streams: those are skipped)."""
        if not shiboken6.isValid(self.answers):
            return False  # the window is gone (the pane's last signals can come after it)
        if not self.answers.isChecked() or pane.live.get(conversation_id) is not None:
            return False
        key = pane.messages.last_answer
        views = pane.messages.views
        if not key or key in self._answered or key not in views:
            return False
        self._answered.add(key)
        return self.answer_link(QUrl(f"margin-action:speak/{key}"), views)
