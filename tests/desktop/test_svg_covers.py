"""Standard Ebooks' SVG covers are drawn (their title lettering over the title box), never
the coloured placeholder; an SVG that would reach outside itself is drawn without that part
or not at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtGui import QColor

from core.books.covers import epub_cover_bytes, safe_svg
from desktop.library.cover_images import CoverJob, generated_cover, make_cover


def colours(image: Any) -> set[tuple[int, int, int]]:
    step = max(1, image.width() // 40)
    return {
        QColor(image.pixel(x, y)).getRgb()[:3]
        for x in range(0, image.width(), step)
        for y in range(0, image.height(), step)
    }


def test_standard_ebooks_svg_cover_is_drawn(books_dir: Path, real_font: str) -> None:
    for name, title in (("pride_and_prejudice", "Pride and Prejudice"),):
        path = books_dir / f"{name}.epub"
        data = epub_cover_bytes(path)
        assert data is not None and b"<svg" in data, f"▶ {name}: no cover found"
        job = CoverJob("0" * 64, "epub", str(path), title, "")
        drawn = make_cover(job)
        placeholder = generated_cover(title, "")
        assert drawn.size() == placeholder.size()
        assert drawn != placeholder, f"▶ {name}: the placeholder, not the book's cover"
        seen = colours(drawn)
        dark = [c for c in seen if sum(c) < 200]  # the title box
        light = [c for c in seen if sum(c) > 700]  # the lettering and the page around it
        assert dark and light, f"▶ {name}: {len(seen)} colours"


def test_an_svg_reaching_outside_itself_is_not_drawn_as_it_came() -> None:
    ns = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'
    outside = (
        f'<svg {ns} viewBox="0 0 10 10"><image xlink:href="file:///etc/passwd"/>'
        '<rect width="10" height="10"/></svg>'
    ).encode()
    kept = safe_svg(outside)
    assert kept is not None and b"passwd" not in kept and b"rect" in kept
    inline = f'<svg {ns}><image xlink:href="data:image/png;base64,AAAA"/></svg>'.encode()
    assert b"data:image/png" in (safe_svg(inline) or b"")
    assert safe_svg(b'<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc">]><svg/>') is None
    assert safe_svg(f"<svg {ns}><style>@import url(http://x/a.css);</style></svg>".encode()) is None
    scripted = safe_svg(f"<svg {ns}><script>alert(1)</script><rect/></svg>".encode())
    assert scripted is not None and b"script" not in scripted and b"rect" in scripted
    assert safe_svg(b"not an svg") is None
