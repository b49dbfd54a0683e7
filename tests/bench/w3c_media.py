"""Playing a W3C test book's sound as the window would (w3c_judge.audio)."""

from __future__ import annotations

from pathlib import Path


def play_to_end(path: Path) -> tuple[bool, int]:
    """Play a sound file with Qt Multimedia (as the window does) to its end, at most 15 s:
    (played to the end, its duration in ms)."""
    from PySide6.QtCore import QEventLoop, QTimer, QUrl
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtMultimedia import QAudioOutput, QMediaPlayer

    _app = QGuiApplication.instance() or QGuiApplication([])
    player, output, loop = QMediaPlayer(), QAudioOutput(), QEventLoop()
    player.setAudioOutput(output)
    ended: list[bool] = []

    def status(state: QMediaPlayer.MediaStatus) -> None:
        if state in (QMediaPlayer.MediaStatus.EndOfMedia, QMediaPlayer.MediaStatus.InvalidMedia):
            ended.append(state == QMediaPlayer.MediaStatus.EndOfMedia)
            loop.quit()

    player.mediaStatusChanged.connect(status)
    player.errorOccurred.connect(lambda *_: (ended.append(False), loop.quit()))
    QTimer.singleShot(15_000, loop.quit)
    player.setSource(QUrl.fromLocalFile(str(path)))
    player.play()
    loop.exec()
    return bool(ended and ended[0] and player.duration() > 0), player.duration()
