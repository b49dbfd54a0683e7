"""Run in a fresh interpreter by ``test_worker_types.py``: the window's thread prepares cover
work (``make_ready_for_threads``), then a worker thread makes every kind of cover and decodes
a picture page, and this prints, as JSON, each PySide6 type or enum the worker made itself
(none should be: two threads making types at once crash PySide6)."""

from __future__ import annotations

import enum
import io
import json
import logging
import sys
import threading
import zipfile
from pathlib import Path

made: list[str] = []
_create = enum.EnumType._create_


def _recording(cls: type, class_name: str, *args: object, **kwargs: object) -> object:
    made.append(f"{threading.current_thread().name}: enum {class_name}")
    return _create(cls, class_name, *args, **kwargs)  # type: ignore[arg-type]


def _types() -> set[str]:
    return {
        f"{name}.{attr}"
        for name, module in list(sys.modules.items())
        if name.startswith("PySide6.Qt")
        for attr in vars(module)
    }


def main(fixtures: Path, work: Path) -> None:
    enum.EnumType._create_ = _recording  # type: ignore[method-assign, assignment]
    from PySide6.QtCore import QBuffer, QSize
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QApplication

    app = QApplication(["probe"])
    from desktop.library.covers import CoverJob, cached_cover, make_ready_for_threads, thumbnail
    from desktop.reader.image_pages import decode_page

    picture = QImage(40, 60, QImage.Format.Format_RGB32)
    picture.fill(0x336699)
    buffer = QBuffer()
    buffer.open(QBuffer.OpenModeFlag.WriteOnly)
    picture.save(buffer, "JPG")
    jpeg = bytes(buffer.data().data())
    comic = work / "comic.cbz"
    with zipfile.ZipFile(comic, "w") as archive:
        archive.writestr("01.jpg", jpeg)
    books = fixtures / "books"
    jobs = [
        CoverJob("a" * 64, "txt", str(books / "metamorphosis.txt"), "Title", "Author"),
        CoverJob("b" * 64, "epub", str(books / "the_adventures_of_sherlock_holmes.epub"), "T", ""),
        CoverJob("c" * 64, "epub", str(books / "test_rich_metadata.epub"), "T", "A"),
        CoverJob("d" * 64, "pdf", str(fixtures / "pdf" / "pdflatex-4-pages.pdf"), "T", "A"),
        CoverJob("e" * 64, "cbz", str(comic), "T", "A"),
    ]
    warnings: list[str] = []

    class Kept(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            warnings.append(record.getMessage())

    logging.getLogger("margin.covers").addHandler(Kept(logging.WARNING))
    for job in jobs:
        make_ready_for_threads(job.format)
    before = _types()
    made.clear()
    sizes: list[tuple[int, int]] = []

    def work_on_a_thread() -> None:
        for job in jobs:
            image = cached_cover(work, job)
            sizes.append((image.width(), image.height()))
            thumbnail(cached_cover(work, job), QSize(60, 90), 2.0)  # again, from the cache
        page = decode_page(jpeg, QSize(20, 30), threading.Event())
        sizes.append((page.width(), page.height()))
        decode_page(io.BytesIO(b"not a picture").getvalue(), QSize(20, 30), threading.Event())

    worker = threading.Thread(target=work_on_a_thread, name="worker")
    worker.start()
    worker.join()
    made.extend(f"worker: type {name}" for name in sorted(_types() - before))
    print(json.dumps({"made": made, "sizes": sizes, "warnings": warnings}))
    del app


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
