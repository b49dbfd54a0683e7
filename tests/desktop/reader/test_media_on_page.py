"""Sound and video on a page (issue 45, item 7): they were silently dropped. The page now says
it holds one ("[Audio: …]", in the text the search and the assistant read too), and its link
plays the file with the system's player, or says plainly why it cannot."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

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


def test_its_link_plays_the_file_from_the_book(
    library: Library, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    book = import_book(library, media_book(tmp_path)).book
    _reader, view = open_reader(library, qtbot, book, (800, 600))
    links = re.findall(r'href="(media:[^"]+)"', view.document().toHtml())
    assert links == ["media:/OEBPS/audio/song.mp3", "media:/OEBPS/video/dance.mp4"]
    player = Player()
    QDesktopServices.setUrlHandler("file", player, "play")
    try:
        view.anchorClicked.emit(QUrl(links[0]))
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert len(player.played) == 1
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
