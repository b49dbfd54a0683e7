"""Sound and video on a page (issue 45, item 7): they were silently dropped. The page now says
it holds one ("[Audio: …]", in the text the search and the assistant read too), and its link
plays a sound at the foot of the page (Qt Multimedia), hands what that cannot play to the
system's player, or says plainly why it cannot."""

from __future__ import annotations

import io
import math
import re
import struct
import wave
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QDesktopServices

from core.books.importer import import_book
from core.store.library import Library
from tests.core.books.epubgen import make_epub
from tests.desktop.reader.conftest import open_reader

SONG = b"ID3\x04\x00\x00\x00\x00\x00\x00" + b"\x00" * 200
BODY = (
    "<p>Listen to the song.</p>"
    '<audio controls="controls" title="The Lobster Quadrille"><source src="audio/song.mp3" '
    'type="audio/mpeg"/>Your reader cannot play audio.</audio>'
    '<video src="video/dance.mp4">No video here.</video><p>After.</p>'
)
MANIFEST = (
    '<item id="a" href="audio/song.mp3" media-type="audio/mpeg"/>'
    '<item id="v" href="video/dance.mp4" media-type="video/mp4"/>'
)


def media_book(tmp_path: Path, *, with_files: bool = True) -> Path:
    files = {"OEBPS/audio/song.mp3": SONG, "OEBPS/video/dance.mp4": b"\x00" * 64}
    return make_epub(
        tmp_path / "m.epub",
        [("Song", BODY)],
        extra_files=files if with_files else {},
        extra_manifest=MANIFEST,
    )


def test_the_page_says_it_holds_a_sound_and_a_video(library: Library, tmp_path: Path) -> None:
    book = import_book(library, media_book(tmp_path)).book
    text = " ".join(t for _, t in library.page_texts(book.id))
    assert "[Audio: The Lobster Quadrille]" in text and "[Video: dance.mp4]" in text
    assert "cannot play" not in text and "No video here" not in text


class Player(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.played: list[QUrl] = []

    @Slot(QUrl)
    def play(self, url: QUrl) -> None:
        self.played.append(url)


def test_a_file_qt_cannot_play_goes_to_the_system_player(
    library: Library, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    book = import_book(library, media_book(tmp_path)).book  # SONG is no real MP3
    _reader, view = open_reader(library, qtbot, book, (800, 600))
    links = re.findall(r'href="(media:[^"]+)"', view.document().toHtml())
    assert links == ["media:/OEBPS/audio/song.mp3", "media:/OEBPS/video/dance.mp4"]
    player = Player()
    QDesktopServices.setUrlHandler("file", player, "play")
    try:
        view.anchorClicked.emit(QUrl(links[0]))
        qtbot.waitUntil(lambda: len(player.played) == 1, timeout=10_000)
    finally:
        QDesktopServices.unsetUrlHandler("file")
    copy = Path(player.played[0].toLocalFile())
    assert copy.name == "song.mp3" and copy.read_bytes() == SONG


def test_a_sound_missing_from_the_book_is_reported(
    library: Library, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    book = import_book(library, media_book(tmp_path, with_files=False)).book
    reader, view = open_reader(library, qtbot, book, (800, 600))
    view.anchorClicked.emit(QUrl("media:/OEBPS/audio/song.mp3"))
    holders = [view, *reader.findChildren(QObject)]
    box = next((w._media_failed for w in holders if hasattr(w, "_media_failed")), None)
    assert box is not None and "song.mp3" in box.text() and "could not read it" in box.text()
    box.close()


def tone(seconds: float = 0.3) -> bytes:
    """A WAV of a 440 Hz tone, made here."""
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        frames = int(8000 * seconds)
        w.writeframes(
            b"".join(
                struct.pack("<h", int(8000 * math.sin(2 * math.pi * 440 * i / 8000)))
                for i in range(frames)
            )
        )
    return out.getvalue()


def test_a_sound_plays_on_its_page(
    library: Library, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    pytest.importorskip("PySide6.QtMultimedia")
    from desktop.reader.media_player import MediaBar

    body = '<p>Hear it.</p><audio controls="controls" src="a/tone.wav">No sound.</audio>'
    path = make_epub(
        tmp_path / "t.epub",
        [("Tone", body)],
        extra_files={"OEBPS/a/tone.wav": tone()},
        extra_manifest='<item id="t" href="a/tone.wav" media-type="audio/wav"/>',
    )
    _reader, view = open_reader(library, qtbot, import_book(library, path).book, (800, 600))
    player = Player()
    QDesktopServices.setUrlHandler("file", player, "play")
    try:
        view.anchorClicked.emit(QUrl("media:/OEBPS/a/tone.wav"))
        bar = view.viewport().findChild(MediaBar)
        assert bar is not None and bar.isVisible() and "tone.wav" in bar.label.text()
        qtbot.waitUntil(lambda: bar.finished, timeout=10_000)  # played to its end, in place
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert player.played == []  # not handed to the system's player
    assert bar.player.duration() > 200
    bar.close_button.click()
    assert not bar.isVisible()
