"""What the HTML walk does as a browser would beyond plain text: hidden elements, ``<q>``
quotation marks by language, superscripts that read as powers, MathML and inline SVG kept
(as text and as something to draw), and links inside the book.
"""

from __future__ import annotations

import base64
import html
import posixpath
import re
from urllib.parse import unquote, urlsplit

from selectolax.lexbor import LexborNode

from core.books.htmlbuilder import NOTE_LINK, _Builder, _clean, resolve_relative
from core.books.mathtext import math_text

HIDING_SELECTOR = "[hidden], [style*=none]"
QUOTES = {
    "en": ("“", "”"),
    "fr": ("« ", " »"),
    "de": ("„", "“"),
    "es": ("«", "»"),
    "it": ("«", "»"),
    "pt": ("«", "»"),
    "ru": ("«", "»"),
    "pl": ("„", "”"),
    "nl": ("“", "”"),
    "sv": ("”", "”"),
    "da": ("»", "«"),
    "cs": ("„", "“"),
    "ja": ("「", "」"),
    "zh": ("“", "”"),
    "he": ("”", "“"),
}
MAX_INLINE_SVG = 512 * 1024
SVG_NS = "http://www.w3.org/2000/svg"


def hidden(node: LexborNode) -> bool:
    """An element a browser does not show: ``hidden``, or ``display: none`` in its style."""
    attrs = node.attributes
    if "hidden" in attrs:
        return True
    style = attrs.get("style") or ""
    return bool(style) and "display:none" in "".join(style.split()).lower()


def font_of(node: LexborNode, classes: dict[str, str]) -> str:
    """The embedded family an element's class names (``epubfonts.font_classes``)."""
    names = node.attributes.get("class")
    if not names:
        return ""
    return next((classes[name] for name in names.split() if name in classes), "")


_Q_CSS = re.compile(r"(?:^|[\s,}>])q\s*::?(?:before|after)\b")
QUOTE_CHARS = "\"'“”‘’«»„‚‹›「」『』"


def own_quotes(css: str) -> bool:
    """A style sheet that says what ``<q>`` draws (Standard Ebooks: ``content: ""``)."""
    return bool(_Q_CSS.search(css))


def starts_quoted(node: LexborNode, b: _Builder) -> bool:
    """A ``<q>`` whose text already has its marks, inside it or just before it."""
    inner = node.text(deep=True).lstrip()
    before = "".join(b._text[-1:]).rstrip()[-1:]
    return (bool(inner) and inner[0] in QUOTE_CHARS) or (bool(before) and before in QUOTE_CHARS)


def quotes(lang: str) -> tuple[str, str]:
    return QUOTES.get(lang.lower().split("-")[0], QUOTES["en"])


def sup_caret(node: LexborNode, b: _Builder) -> None:
    """ "10<sup>16</sup>" reads "10^16" (an exponent); "1<sup>st</sup>" stays "1st". Only a
    sup holding just its text is an exponent (reading every descendant's text of a sup
    nested 10,000 deep took seconds, issue 46 item 8)."""
    inner = node.child
    if inner is None or inner.next is not None or inner.tag != "-text":
        return
    value = inner.text_content or ""
    if 0 < len(value) <= 6 and value.lstrip("-−+").isdigit() and b._text:
        last = b._text[-1]
        if last and not last[-1].isspace():
            b._text.append("^")


def math_element(node: LexborNode, b: _Builder) -> None:
    text, markup, block = math_text(node)
    if not text:
        return
    if block:
        b.flush()
        if markup.startswith("<table"):  # a matrix or aligned equations: rows and columns
            b.start("table")
    b._text.append(f" {text} " if block else text)
    b.raw(markup)
    if block:
        b.flush()


def svg_element(node: LexborNode, b: _Builder) -> None:
    """Inline SVG: an ``<svg>`` wrapping images (a cover, an illustration) shows those
    images; any other drawing is kept whole as an SVG image; its words go to the text."""
    words = _clean(" ".join(t.text(separator=" ") for t in node.css("text")))
    title = node.css_first("title")
    alt = words or (_clean(title.text()) if title is not None else "")
    pictures = node.css("image")
    if pictures:
        for picture in pictures:
            attrs = picture.attributes
            src = attrs.get("xlink:href") or attrs.get("href") or ""
            url = b.resolve_image(src) if (b.resolve_image and src) else None
            b.image(url, attrs.get("alt") or alt)
        return
    markup = node.html or ""
    if not markup or len(markup) > MAX_INLINE_SVG or b.resolve_image is None:
        if words:
            b.text(f" {words} ")
        return
    if "xmlns=" not in markup[:400]:
        markup = markup.replace("<svg", f'<svg xmlns="{SVG_NS}"', 1)
    if b.svg_css:  # the page's style sheet reaches an SVG it includes, as in a browser
        head = markup.index(">") + 1
        markup = (
            f"{markup[:head]}<style>{html.escape(b.svg_css, quote=False)}</style>{markup[head:]}"
        )
    url = "data:image/svg+xml;base64," + base64.b64encode(markup.encode("utf-8")).decode("ascii")
    b.image(url, alt)
    if words and not alt:
        b.text(f" {words} ")


def internal_link(href: str, b: _Builder) -> str:
    """``margin:DOC#ID`` (or ``margin:DOC#`` for a whole document) for a link inside the
    book, "" for anything else."""
    if not b.doc:
        return ""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc:
        return ""
    if parts.path:
        doc = resolve_relative(posixpath.dirname(b.doc), parts.path)
        if doc is None:
            return ""
    else:
        doc = b.doc
    if parts.fragment and b.link_targets is not None:
        # a later document gives this id an anchor (an earlier one: its first page)
        b.link_targets.setdefault(doc, set()).add(unquote(parts.fragment))
    return f"{NOTE_LINK}{html.escape(doc)}#{html.escape(unquote(parts.fragment))}"


MEDIA_LINK = "media:/"
"""The scheme of a link to a sound or video file inside the book (the reader opens it)."""


def media_element(node: LexborNode, b: _Builder) -> None:
    """``<audio>`` and ``<video>``: a line saying the page holds one, named by its title (or
    its file), linked to the file inside the book so the reader can play it on request. The
    fallback text inside ("your reader does not support audio") is not the book's."""
    kind = "Audio" if node.tag == "audio" else "Video"
    attrs = node.attributes
    src = attrs.get("src") or ""
    if not src:
        source = node.css_first("source")
        src = (source.attributes.get("src") or "") if source is not None else ""
    parts = urlsplit(src.strip())
    target = None
    if src and not parts.scheme and not parts.netloc and b.doc:
        target = resolve_relative(posixpath.dirname(b.doc), unquote(parts.path))
    name = _clean(attrs.get("title") or attrs.get("aria-label") or "")
    if not name:
        name = posixpath.basename(target or parts.path) or kind.lower()
    label = f"[{kind}: {name}]"
    b.flush()
    if target:
        b.raw(f'<a href="{html.escape(MEDIA_LINK + target)}">')
        b.text(label)
        b.raw("</a>")
    else:
        b.text(label)
    b.flush()


def ruby_element(node: LexborNode, b: _Builder) -> None:
    """``<ruby>``: the base text goes into the text (search finds 芭蕉, never 芭蕉ばしょう);
    each reading (``<rt>``) rides on its base as a ``title`` of a ``ruby`` span, which the
    reader draws above the base (desktop.reader.ruby_paint; its tooltip too) unless the reader
    turns readings off, without changing the text's offsets. ``<rp>`` (the parentheses for
    readers without ruby) is dropped."""
    base: list[str] = []

    def emit(reading: str) -> None:
        text = "".join(base)
        base.clear()
        if not text:
            return
        if reading:
            b.raw(f'<span class="ruby" title="{html.escape(reading)}">')
            b.text(text)
            b.raw("</span>")
        else:
            b.text(text)

    child = node.child
    while child is not None:
        tag = child.tag
        if tag == "rt":
            emit(_clean(child.text(deep=True)).strip())
        elif tag == "-text" or tag not in ("rp", "rtc", "-comment"):
            base.append(child.text(deep=True))
        child = child.next
    emit("")
