"""Checks that run inside the built bundle: ``Margin --bundle-self-test PDF``.

What the bundle leaves out (packaging/bundle_prune.py, the spec's excludes) can break a
feature only when a user reaches it: a module imported lazily, a Qt plugin loaded on demand,
a library opened through ctypes. This imports every module of the app and drives each part
that loads something late, in the bundle's own interpreter, and prints one line per check.
Exit status 0 when all pass. Run by packaging/smoke.sh, which also uses the two helpers
``--write-comic FILE`` (a CBZ to open), ``--comic-share PNG`` (the percentage of a
screenshot showing the comic's second page: its picture was decoded and drawn) and
``--luminance PNG`` (a screenshot's mean lightness, 0-255: the dark theme must look dark).
"""

from __future__ import annotations

import io
import pkgutil
import sys
import traceback
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

COMIC_PAGE_2 = "#a05030"
SVG = (
    b'<svg xmlns="http://www.w3.org/2000/svg" width="60" height="90" viewBox="0 0 60 90">'
    b'<rect width="60" height="90" fill="#203a70"/><circle cx="30" cy="45" r="20" fill="#e0c040"/>'
    b"</svg>"
)


def _every_module() -> None:
    """Every module of core/ and desktop/: the ones the app imports only on a click too."""
    import core
    import desktop

    failed = []
    count = 0
    for package in (core, desktop):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.endswith(".__main__"):  # runs the app when imported
                continue
            try:
                __import__(info.name)
                count += 1
            except Exception as exc:
                failed.append(f"{info.name}: {type(exc).__name__}: {exc}")
    if failed or count < 50:
        raise AssertionError(f"{count} imported; failed: {failed}")


def _search_by_meaning() -> None:
    from core.search import embedding

    vectors = embedding.embed(
        ["the cat sat on the mat", "a kitten rested on the rug", "interest rates rose again"]
    )
    close, far = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert vectors.shape == (3, embedding.DIMS) and close > far, (close, far)
    assert embedding.unpack(embedding.pack(vectors), embedding.DIMS).shape == vectors.shape


def _sentence_encoder() -> None:
    """The MiniLM encoder (core/search/encoder.py): its products run on the bundle's small
    BLAS (packaging/tinyblas.c) in place of OpenBLAS."""
    from core.search.encoder import load_encoder

    encoder = load_encoder()
    assert encoder is not None, "no sentence encoder in the bundle"
    vectors = encoder.encode(
        ["the cat sat on the mat", "a kitten rested on the rug", "interest rates rose again"]
    )
    close, far = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert close > far + 0.2, (close, far)


def _sentence_worker() -> None:
    """Passages mode reads a book's sentences ahead in a spawned worker process
    (core/agent/providers/sentence_worker.py): the bundle must start it as itself."""
    import threading

    from core.agent.providers import answer_sentence
    from core.agent.providers.sentence_warmup import read_in_worker

    texts = ["the cat sat on the mat", "a kitten rested on the rug"]
    assert read_in_worker(texts, threading.Event()) == 2, "no vectors from the worker"
    assert all(len(answer_sentence._cache[t]) == 2 * 384 for t in texts)


def _vectors_worker() -> None:
    """The background vectors worker (core/search/vector_worker.py) is a plain process that
    the bundle starts as itself (``Margin --vectors-child``, packaging/launcher.py): a small
    book's static vectors and its encoder's (MiniLM, batches on two threads over the small
    BLAS) computed and stored there, side by side."""
    import os
    import tempfile

    from core.books.importer import import_book
    from core.paths import resolve_paths
    from core.processes import PythonWorker
    from core.search.sentence_vectors import SentenceVectors
    from core.search.vector_worker import FLAG
    from core.search.vectors import BookVectors
    from core.store.library import Library

    with tempfile.TemporaryDirectory() as tmp:
        book = Path(tmp) / "words.txt"
        book.write_text("The cat sat on the mat while the dog watched from the door.\n\n" * 100)
        library = Library.open(resolve_paths(Path(tmp) / "home").ensure())
        try:
            library.db.margin_no_background = True  # this check starts the worker itself
            book_id = import_book(library, book).book.id
            jobs = [
                {"kind": kind, "books": [book_id], "reader_only": []}
                for kind in ("static", "sentence")
            ]
            path = str(library.db.database)
            worker = PythonWorker(
                "core.search.vector_worker",
                FLAG,
                {"path": path, "parent": os.getpid(), "jobs": jobs},
            )
            messages: list[Any] = []  # its "done" ones (a "log" one says why, if any)
            while len([m for m in messages if m and m[0] == "done"]) < 2:
                try:
                    message = worker.receive(120)
                except EOFError:
                    break
                assert message is not None, "the worker said nothing for 2 minutes"
                messages.append(message)
            worker.join(30)
            expected = [["done", kind, book_id, "ok"] for kind in ("static", "sentence")]
            done = [m for m in messages if m[0] == "done"]
            assert sorted(map(str, done)) == sorted(map(str, expected)), messages
            assert worker.exitcode == 0, worker.exitcode
            assert BookVectors(library.db).has(book_id)
            assert SentenceVectors(library.db).has(book_id)
        finally:
            library.close()


def _spoiler_data() -> None:
    """The spoiler check's data files (core/agent/data), read with importlib.resources."""
    from core.agent import spoiler_fold, spoiler_words

    assert sum(len(stems) for stems in spoiler_words.bands().values()) > 10_000
    assert "the" in spoiler_words.bands()[76] and len(spoiler_fold.stored_table()[1]) > 100


def _fuzzy_anchors() -> None:
    """What re-finding a highlight uses (core/store/anchors.py): rapidfuzz's compiled build."""
    from rapidfuzz.fuzz import partial_ratio_alignment, ratio

    assert ratio("the quick brown fox", "the quick brown fax") > 90
    found = partial_ratio_alignment("brown fax", "the quick brown fox jumps")
    assert found is not None and found.dest_start == 10 and found.score > 80
    assert ratio.__module__.startswith("rapidfuzz.fuzz_cpp"), ratio.__module__


def _qt_pdf(pdf: Path) -> None:
    from PySide6.QtCore import QSize
    from PySide6.QtPdf import QPdfDocument

    document = QPdfDocument()
    assert document.load(str(pdf)) == QPdfDocument.Error.None_, document.error()
    assert document.pageCount() > 0
    image = document.render(0, QSize(200, 280))
    colours = {image.pixel(x, y) for x in range(0, 200, 7) for y in range(0, 280, 7)}
    assert len(colours) > 1, "the page rendered blank"


def _pdfium(pdf: Path) -> None:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(pdf))
    text = document[0].get_textpage().get_text_range()
    assert len(text.strip()) > 20, text
    document.close()


def _images() -> None:
    from PySide6.QtCore import QBuffer, QIODevice
    from PySide6.QtGui import QColor, QImage, QImageReader

    from desktop.reader.book_images import decode_image

    readable = {bytes(f.data()).decode() for f in QImageReader.supportedImageFormats()}
    missing = {"jpeg", "png", "gif", "svg", "webp", "tiff"} - readable
    assert not missing, f"no image plugin for {missing}"
    cover = decode_image(SVG)
    assert cover is not None and cover.width() == 60 and cover.pixelColor(30, 45).red() > 150
    for fmt in ("JPEG", "WEBP", "TIFF", "PNG"):
        image = QImage(40, 30, QImage.Format.Format_RGB32)
        image.fill(QColor("#c03020"))
        buffer = QBuffer()
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        saved = image.save(buffer, fmt)  # type: ignore[call-overload]
        assert saved, f"cannot write {fmt}"
        decoded = decode_image(bytes(buffer.data().data()))
        assert decoded is not None and decoded.width() == 40, f"cannot read {fmt}"


def comic_bytes() -> bytes:
    """A two-page CBZ (JPEG pages) made here: no comic ships with the fixtures."""
    from PySide6.QtCore import QBuffer, QIODevice
    from PySide6.QtGui import QColor, QImage

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for n, colour in enumerate(("#3050a0", COMIC_PAGE_2), 1):
            image = QImage(300, 450, QImage.Format.Format_RGB32)
            image.fill(QColor(colour))
            buffer = QBuffer()
            buffer.open(QIODevice.OpenModeFlag.WriteOnly)
            image.save(buffer, "JPEG")  # type: ignore[call-overload]
            archive.writestr(f"page{n:02}.jpg", bytes(buffer.data().data()))
    return out.getvalue()


def _keyring() -> None:
    """The Linux keyring backend and what it needs: SecretStorage over D-Bus (jeepney), whose
    session encrypts the secret with AES from ``cryptography``."""
    import os

    import keyring.backends.SecretService as secret_service
    import secretstorage.dhcrypto
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    assert secret_service.Keyring.__module__ == "keyring.backends.SecretService"
    session = secretstorage.dhcrypto.Session()
    session.set_server_public_key(session.my_public_key)
    key, iv = session.aes_key or bytes(16), os.urandom(16)
    sealed = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor().update(b"k" * 32)
    opened = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor().update(sealed)
    assert opened == b"k" * 32


def _icu() -> None:
    """The ICU services the app reaches through QtCore (packaging/icu_subset.py keeps their
    data): collation and case mapping; time zones still convert (their names are gone)."""
    from PySide6.QtCore import QCollator, QDateTime, QLocale, QTimeZone

    assert QCollator(QLocale("sv_SE")).compare("ö", "z") > 0, "Swedish collation"
    assert QCollator(QLocale("de_DE")).compare("ö", "z") < 0, "German collation"
    assert QLocale("tr_TR").toUpper("i") == "İ" and QLocale("en_US").toUpper("ß") == "SS"
    if not Path("/usr/share/zoneinfo/Europe/Berlin").exists():  # Qt reads the system's zones
        return
    winter = QDateTime.fromString("2026-01-15T12:00:00Z", "yyyy-MM-ddTHH:mm:ssZ")
    assert QTimeZone(b"Europe/Berlin").offsetFromUtc(winter) == 3600


def _qt_plugins() -> None:
    from PySide6.QtCore import QLibraryInfo

    folder = Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath))
    names = {p.name for p in (folder / "platforms").iterdir()}
    for plugin in ("libqxcb.so", "libqwayland.so", "libqoffscreen.so"):
        assert plugin in names, f"{plugin} missing from {sorted(names)}"
    assert (folder / "wayland-shell-integration" / "libxdg-shell.so").exists()
    assert (folder / "platforminputcontexts").exists(), "no input methods (compose, ibus)"


def _samples(png: Path) -> list[Any]:
    from PySide6.QtGui import QImage

    image = QImage(str(png))
    assert not image.isNull(), f"cannot read {png}"
    step = max(1, min(image.width(), image.height()) // 60)
    return [
        image.pixelColor(x, y)
        for x in range(0, image.width(), step)
        for y in range(0, image.height(), step)
    ]


def luminance(png: Path) -> float:
    values = [colour.lightness() for colour in _samples(png)]
    return sum(values) / len(values)


def comic_share(png: Path) -> float:
    from PySide6.QtGui import QColor

    want = QColor(COMIC_PAGE_2)
    near = [
        c
        for c in _samples(png)
        if max(
            abs(c.red() - want.red()), abs(c.green() - want.green()), abs(c.blue() - want.blue())
        )
        < 12
    ]
    return 100 * len(near) / len(_samples(png))


def main(argv: list[str]) -> int:
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance() or QGuiApplication(["Margin"])
    if argv[:1] == ["--write-comic"]:
        Path(argv[1]).write_bytes(comic_bytes())
        return 0
    if argv[:1] == ["--comic-share"]:
        print(round(comic_share(Path(argv[1]))))
        return 0
    if argv[:1] == ["--luminance"]:
        print(round(luminance(Path(argv[1]))))
        return 0
    pdf = Path(argv[0]) if argv else None
    checks: list[tuple[str, Callable[[], None]]] = [
        ("every core/ and desktop/ module imports", _every_module),
        ("search by meaning (numpy + the word vectors)", _search_by_meaning),
        ("sentence encoder (MiniLM on the small BLAS)", _sentence_encoder),
        ("sentences read ahead in a worker process", _sentence_worker),
        ("background vectors in a worker process", _vectors_worker),
        ("fuzzy anchors (rapidfuzz, compiled)", _fuzzy_anchors),
        ("spoiler check data (importlib.resources)", _spoiler_data),
        ("images: SVG cover, JPEG, WebP, TIFF, PNG", _images),
        ("keyring: SecretService backend, D-Bus session crypto", _keyring),
        ("ICU: collation, case mapping, time zones", _icu),
        ("Qt platform plugins (xcb, wayland, offscreen) and input methods", _qt_plugins),
    ]
    if sys.platform != "linux":
        checks = [c for c in checks if not c[0].startswith(("keyring", "Qt platform"))]
    if pdf is not None:
        checks += [
            ("PDF pages (QtPdf)", lambda: _qt_pdf(pdf)),
            ("PDF text (pdfium)", lambda: _pdfium(pdf)),
        ]
    failed = 0
    for name, check in checks:
        try:
            check()
            print(f"ok    {name}")
        except Exception:
            failed += 1
            print(f"FAIL  {name}\n{traceback.format_exc()}")
    del app
    return 1 if failed else 0
