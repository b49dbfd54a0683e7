"""A small EPUB styled as Standard Ebooks style their books (indents, centred small-caps
headings, scene breaks, a letter with a right-aligned header and signature), plus rules a
reader must never get (@media, pseudo-elements, script-like values)."""

from __future__ import annotations

from pathlib import Path

from tests.core.books.epubgen import make_epub, paragraphs

CSS = """@charset "utf-8";
@namespace epub "http://www.idpf.org/2007/ops";
/* the house style */
p { margin: 0; text-indent: 1em; }
h1, h2 { text-align: center; font-variant: small-caps; margin: 3em 0; }
hr { border: none; border-top: 1px solid; margin: 1.5em auto; width: 25%; }
h1 + p, hr + p, header + p { text-indent: 0; }
blockquote { margin: 1em 2.5em; }
[epub|type~="z3998:letter"] header { text-align: right; font-style: italic; }
.signature { font-variant: small-caps; text-align: right; }
b { font-variant: small-caps; font-weight: normal; }
p.verse { text-align: left; margin-left: 2em; }
@media (min-width: 10em) { p { text-align: center; } }
p::first-letter { font-size: 3em; }
.evil { text-align: expression(alert(1)); margin-left: url(javascript:x); font-size: 900em; }
"""

LETTER = (
    '<blockquote epub:type="z3998:letter"><header><p>Netherfield, Tuesday.</p></header>'
    "<p>My dear Lizzy, I write to say that the weather has held and the roads are good, "
    "so that we may expect you on Thursday without fail.</p>"
    '<p class="signature">Jane Bennet.</p></blockquote>'
)


def styled_epub(folder: Path, *, css: bool = True) -> Path:
    """The book with its style sheet (or the same text without any)."""
    link = '<link rel="stylesheet" href="style.css" type="text/css"/>' if css else ""
    body = (
        link
        + paragraphs(3, 70, "first")
        + "<hr/>"
        + paragraphs(2, 70, "after")
        + "<p>They met <b>Mr. Darcy</b> at the ball.</p>"
        + LETTER
        + '<p class="evil">Nothing bad happens here.</p>'
        + '<p class="verse">The owl and the pussy-cat<br/>went to sea</p>'
        + paragraphs(2, 60, "end")
    )
    chapters = [("Chapter One", body), ("Chapter Two", link + paragraphs(6, 80, "two"))]
    extra: dict[str, bytes | str] = {"OEBPS/style.css": CSS} if css else {}
    name = "styled.epub" if css else "plain.epub"
    return make_epub(folder / name, chapters, title="A Styled Book", extra_files=extra)
