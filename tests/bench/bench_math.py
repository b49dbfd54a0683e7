"""A book full of MathML in the reader: turning screens after their first draw.

Target (issue 29): a page full of MathML turns in ≤ 16 ms at p95 after its first draw. The
formulas are drawn as text with raised and lowered scripts (``core/books/mathtext.py``), so a
screen of them costs what a screen of text costs.
Run: QT_QPA_PLATFORM=offscreen .venv/bin/python tests/bench/bench_math.py
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from common import machine, median, percentile, report

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

FORMULAS = [
    "<msup><mrow><mo>(</mo><mi>a</mi><mo>+</mo><mi>b</mi><mo>)</mo></mrow><mn>2</mn></msup>",
    "<mfrac><mrow><mo>-</mo><mi>b</mi><mo>±</mo><msqrt><msup><mi>b</mi><mn>2</mn></msup>"
    "<mo>-</mo><mn>4</mn><mi>a</mi><mi>c</mi></msqrt></mrow><mrow><mn>2</mn><mi>a</mi></mrow></mfrac>",
    "<msubsup><mi>x</mi><mi>i</mi><mn>2</mn></msubsup><mo>=</mo><munderover><mo>∑</mo>"
    "<mrow><mi>k</mi><mo>=</mo><mn>1</mn></mrow><mi>n</mi></munderover><msub><mi>a</mi><mi>k</mi></msub>",
]


def math_epub(folder: Path, chapters: int = 20) -> Path:
    from tests.core.books.epubgen import make_epub

    body = "".join(
        f"<p>Suppose <math>{FORMULAS[i % 3]}</math> and <math>{FORMULAS[(i + 1) % 3]}</math>; "
        f"then <math display='block'>{FORMULAS[(i + 2) % 3]}</math> holds.</p>"
        for i in range(40)
    )
    return make_epub(folder / "math.epub", [(f"Chapter {n}", body) for n in range(chapters)])


def main() -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from core.books.importer import import_book
    from core.paths import resolve_paths
    from core.store.library import Library
    from desktop.reader.reader import Reader

    app = QApplication.instance() or QApplication([])
    print(f"MathML page turns — {machine()}")
    with tempfile.TemporaryDirectory() as home:
        lib = Library.open(resolve_paths(home))
        book = import_book(lib, math_epub(Path(home))).book
        reader = Reader(lib)
        reader.resize(1000, 700)
        reader.show()
        reader.open_book(book, 1)
        app.processEvents()
        view = reader.view
        assert view is not None
        first, again = [], []
        for round_ in (first, again):
            reader.go_to_page(1, remember=False)
            app.processEvents()
            for _ in range(40):
                start = time.perf_counter()
                QTest.keyClick(view, Qt.Key.Key_PageDown)
                view.viewport().repaint()
                app.processEvents()
                round_.append((time.perf_counter() - start) * 1000)
        reader.close()
        lib.close()
    print(f"  first draw: median {median(first):.1f} ms, p95 {percentile(first, 95):.1f} ms")
    p95 = percentile(again, 95)
    report("turn after the first draw (p95)", f"{p95:.1f} ms", "≤ 16 ms", p95 <= 16)


if __name__ == "__main__":
    main()
