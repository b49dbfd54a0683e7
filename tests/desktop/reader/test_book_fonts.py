"""A book's embedded, obfuscated font draws its text while the book's styles are on, and
the reader's font draws it when they are off or when the font was obfuscated for another
book (issue 29, item 4). The font is DejaVu Sans Mono from the machine, obfuscated here."""

from __future__ import annotations

import hashlib
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtGui import QFontInfo, QImage
from PySide6.QtWidgets import QApplication

from core.books.epubfonts import IDPF, deobfuscate
from core.store.library import Library
from desktop.reader.text_view import TextView
from desktop.reader.typography import Typography
from tests.core.books.epubgen import make_epub
from tests.desktop.reader.conftest import open_reader
from tests.support.shots import save_shot

MONO = Path("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf")
STYLE = (
    "<style>@font-face { font-family: 'Typewriter'; src: url(fonts/tw.ttf); }"
    " .tw { font-family: 'Typewriter', serif; }</style>"
)
ENCRYPTION = (
    '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
    'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
    f'<enc:EncryptionMethod Algorithm="{IDPF}"/><enc:CipherData>'
    '<enc:CipherReference URI="OEBPS/fonts/tw.ttf"/></enc:CipherData></enc:EncryptedData></encryption>'
)


def _book(tmp_path: Path, key_id: str) -> Path:
    """The font obfuscated with ``key_id`` (the book's own identifier is "x")."""
    font = deobfuscate(MONO.read_bytes(), IDPF, key_id)  # XOR both ways
    chapter = f'{STYLE}<p class="tw">Typed in the book\'s own face.</p>'
    path = make_epub(
        tmp_path / f"font-{key_id}.epub",
        [("Typed", chapter)],
        extra_manifest='<item id="f" href="fonts/tw.ttf" media-type="font/ttf"/>',
        extra_files={"OEBPS/fonts/tw.ttf": font, "META-INF/encryption.xml": ENCRYPTION},
    )
    return path


def _family(view: TextView, words: str) -> str:
    """The family Qt really draws ``words`` in."""
    cursor = view.document().find(words)
    assert not cursor.isNull()
    return QFontInfo(cursor.charFormat().font()).family()


def test_the_obfuscation_is_undone_with_the_books_own_identifier() -> None:
    data = MONO.read_bytes()
    hidden = deobfuscate(data, IDPF, "x")
    assert hidden[:1040] != data[:1040] and hidden[1040:] == data[1040:]
    key = hashlib.sha1(b"x").digest()
    assert hidden[0] == data[0] ^ key[0]
    assert deobfuscate(hidden, IDPF, " x\n") == data  # white space is not part of the key


def test_the_books_font_draws_its_text_while_its_styles_are_on(
    library: Library, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    reader, view = open_reader(library, qtbot, _book(tmp_path, "x"), (900, 600))
    words = "Typed in the book"
    assert _family(view, words) == "DejaVu Sans Mono"
    on = view.viewport().grab().toImage()
    reader.set_typography(replace(Typography(), book_styles=False))
    QApplication.processEvents()
    assert _family(view, words) != "DejaVu Sans Mono"
    off = view.viewport().grab().toImage()
    assert on.convertToFormat(QImage.Format.Format_RGB32) != off.convertToFormat(
        QImage.Format.Format_RGB32
    )
    save_shot(on, "book-font-on.png")
    save_shot(off, "book-font-off.png")


def test_a_font_obfuscated_for_another_book_is_not_used(
    library: Library, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    _, view = open_reader(library, qtbot, _book(tmp_path, "another-book"), (900, 600))
    assert "Typed in the book" in view.toPlainText()
    assert _family(view, "Typed in the book") != "DejaVu Sans Mono"


def test_the_page_html_names_the_face_by_its_alias(tmp_path: Path) -> None:
    from core.books.parse import parse_book

    book = parse_book(_book(tmp_path, "x"))
    assert "margin-book Typewriter" in (book.pages[0].html or "")
    assert book.extra["fonts"] == "Typewriter\tOEBPS/fonts/tw.ttf"
    assert zipfile.ZipFile(tmp_path / "font-x.epub").read("OEBPS/fonts/tw.ttf") != MONO.read_bytes()
