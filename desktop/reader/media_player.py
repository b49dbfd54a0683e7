"""A sound of the book played on its page (issue 45, item 7; the W3C ``pub-cmt-mp3``, ``-mp4``
and ``-opus`` tests): the "[Audio: …]" line's link plays the file in a small bar at the foot
of the page, with Pause and Close, through Qt Multimedia (its FFmpeg backend reads MP3, AAC,
Opus, Vorbis, FLAC and WAV). A video, a file the backend cannot read, or a Margin without Qt
Multimedia (the bundle leaves it out) goes to the system's player instead (``links.py``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QUrl
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from desktop.accessibility import announce

log = logging.getLogger("margin.reader")


class MediaBar(QFrame):
    """The bar that plays one sound at a time over the foot of ``page``."""

    def __init__(self, page: QWidget, multimedia: Any) -> None:
        super().__init__(page)
        self.setObjectName("mediaBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setAccessibleName("Sound player")
        self.player = multimedia.QMediaPlayer(self)
        self.output = multimedia.QAudioOutput(self)
        self.player.setAudioOutput(self.output)
        self._media = multimedia.QMediaPlayer
        self.label = QLabel("")
        self.pause_button = QPushButton("Pause")
        self.pause_button.setAccessibleName("Pause or play the sound")
        self.close_button = QPushButton("Close")
        self.close_button.setAccessibleName("Stop the sound and close the player")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.pause_button)
        layout.addWidget(self.close_button)
        self.pause_button.clicked.connect(self.toggle)
        self.close_button.clicked.connect(self.stop)
        self.player.playbackStateChanged.connect(self._state)
        self.player.mediaStatusChanged.connect(self._status)
        self.player.errorOccurred.connect(self._error)
        self.player.hasVideoChanged.connect(self._video)
        self.fallback: Callable[[], None] | None = None  # the system's player, for this file
        self.title = ""
        self.finished = False  # the sound was played to its end (tests read it)
        page.installEventFilter(self)
        self.hide()

    def play(self, path: Path, title: str, fallback: Callable[[], None]) -> None:
        self.player.stop()
        self.title, self.fallback, self.finished = title, fallback, False
        self.label.setText(f"Playing “{title}”")
        self.player.setSource(QUrl.fromLocalFile(str(path)))
        self._place()
        self.show()
        self.raise_()
        self.player.play()
        announce(self, f"Playing {title}")

    def toggle(self) -> None:
        if self.player.playbackState() == self._media.PlaybackState.PlayingState:
            self.player.pause()
        else:
            self.player.play()

    def stop(self) -> None:
        self.player.stop()
        self.hide()

    def _hand_over(self, why: str) -> None:
        """Give the file to the system's player (a video, or a sound Qt cannot read)."""
        log.info("sound %s handed to the system's player: %s", self.title, why)
        self.player.stop()
        self.hide()
        fallback, self.fallback = self.fallback, None
        if fallback is not None:
            fallback()

    def _video(self, has_video: bool) -> None:
        if has_video:
            self._hand_over("it is a video")

    def _error(self, _error: object, message: str) -> None:
        self._hand_over(message or "not readable")

    def _status(self, status: object) -> None:
        if status == self._media.MediaStatus.EndOfMedia:
            self.finished = True
            self.label.setText(f"Played “{self.title}”")
            self.pause_button.setText("Play again")
        elif status == self._media.MediaStatus.InvalidMedia:
            self._hand_over("invalid media")

    def _state(self, state: object) -> None:
        playing = state == self._media.PlaybackState.PlayingState
        if playing:
            self.label.setText(f"Playing “{self.title}”")
        self.pause_button.setText("Pause" if playing else "Play")

    def _place(self) -> None:
        page = self.parentWidget()
        if page is None:
            return
        height = self.sizeHint().height()
        width = min(page.width() - 16, 560)
        self.setGeometry((page.width() - width) // 2, page.height() - height - 8, width, height)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and self.isVisible():
            self._place()
        return False

    def keyPressEvent(self, event: Any) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.stop()
            return
        super().keyPressEvent(event)


def play_in_place(page: QWidget, path: Path, title: str, fallback: Callable[[], None]) -> bool:
    """Play ``path`` in the page's sound bar; False when Qt Multimedia is not there."""
    bar = page.findChild(MediaBar, "mediaBar", Qt.FindChildOption.FindDirectChildrenOnly)
    if bar is None:
        try:
            from PySide6 import QtMultimedia
        except ImportError:  # the bundle leaves Qt Multimedia out
            return False
        bar = MediaBar(page, QtMultimedia)
    bar.play(path, title, fallback)
    return True
