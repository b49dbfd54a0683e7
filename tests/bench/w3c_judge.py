"""One check per applicable W3C EPUB test: what a passing reading system shows, asked of
what Margin's import gives (page text and HTML, contents, metadata, notes).

A test that needs the window (a link that jumps, a pop-up, consent before a browser opens)
is judged from the page HTML the window acts on; the window tests named in
``doc/epub-tests.md`` show that the window does act on it.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.books.model import PageContent, ParsedBook

EPUBS = Path("/tmp/w3c/epubs")


def shown(page: PageContent) -> str:
    """A page's HTML as the window shows it ("" from the parse: its text's plain paragraphs,
    as the store keeps such a page)."""
    from core.store.packing import plain_html

    return plain_html(page.text) if page.html == "" else page.html or ""


@dataclass
class Outcome:
    name: str
    status: str  # imported | clear error | crash
    book: ParsedBook | None
    message: str
    seconds: float

    @property
    def text(self) -> str:
        return "\n".join(p.text for p in self.book.pages) if self.book else ""

    @property
    def html(self) -> str:
        return "\n".join(shown(p) for p in self.book.pages) if self.book else ""

    @property
    def toc(self) -> list[tuple[str, int]]:
        return [(t.title, t.page) for t in self.book.toc] if self.book else []

    def page_with(self, words: str) -> int:
        for page in self.book.pages if self.book else ():
            if words in page.text:
                return page.number
        return 0


PUBLISHED = {
    "Colibrio": "89 %",
    "Thorium": "84 %",
    "Tolino": "73 %",
    "Apple Books iOS": "71 %",
    "Kobo": "67–71 %",
    "VitalSource": "61 %",
    "BinB": "57 %",
}

_IMG = re.compile(r'<img\b[^>]*?\bsrc="([^"]+)"')  # also picture pages (class="margin-page")


def _decodes(outcome: Outcome, src: str) -> bool:
    """An image the view can draw: in the book (or a data: URL) and decoded by Qt."""
    from PySide6.QtGui import QGuiApplication

    from desktop.reader.book_images import data_url_bytes, decode_image

    _app = QGuiApplication.instance() or QGuiApplication([])
    if src.startswith("data:"):
        data = data_url_bytes(src) or b""
    elif src.startswith("book:/"):
        with zipfile.ZipFile(EPUBS / f"{outcome.name}.epub") as zf:
            try:
                data = zf.read(src[len("book:/") :])
            except KeyError:
                return False
    else:
        return False
    return decode_image(data) is not None


def images(outcome: Outcome, count: int = 1) -> tuple[bool, str]:
    srcs = _IMG.findall(outcome.html)
    good = [s for s in srcs if _decodes(outcome, s)]
    ok = len(good) >= count
    return ok, f"{len(good)} of {len(srcs)} images drawn (wanted {count})"


def has(*phrases: str, absent: tuple[str, ...] = ()) -> Callable[[Outcome], tuple[bool, str]]:
    def check(o: Outcome) -> tuple[bool, str]:
        missing = [p for p in phrases if p not in o.text]
        shown = [p for p in absent if p in o.text or p in o.html]
        why = "text " + (f"lacks {missing}" if missing else "present")
        if absent:
            why += f"; {'shows ' + str(shown) if shown else 'nothing it must not show'}"
        return not missing and not shown, why

    return check


def opens(o: Outcome) -> tuple[bool, str]:
    return o.status == "imported" and bool(o.text), "imports and reads"


def error(o: Outcome) -> tuple[bool, str]:
    return o.status == "clear error", f"clear error: {o.message[:70]}" if o.message else o.status


def reported(o: Outcome) -> tuple[bool, str]:
    """A markup error the book's details report (or a clear refusal)."""
    if o.status == "clear error":
        return True, "refused with a clear error"
    problems = o.book.extra.get("problems", "") if o.book else ""
    return bool(problems), f"reported in the book's details: {problems[:60]!r}"


def link_to(words: str, start: str = "") -> Callable[[Outcome], tuple[bool, str]]:
    """A link on the page with ``start`` (first page by default) jumps to the page holding
    ``words`` (the window follows ``page:N``; tests/desktop/reader/test_links.py)."""

    def check(o: Outcome) -> tuple[bool, str]:
        target = o.page_with(words)
        first = o.page_with(start) if start else 1
        page = shown(o.book.pages[first - 1]) if o.book and first else ""
        ok = bool(target) and f'href="page:{target}' in page
        return ok, f"link on page {first} → page {target or '?'}"

    return check


def ordered(*phrases: str) -> Callable[[Outcome], tuple[bool, str]]:
    def check(o: Outcome) -> tuple[bool, str]:
        at = [o.text.find(p) for p in phrases]
        ok = all(a >= 0 for a in at) and at == sorted(at)
        return ok, "in spine order" if ok else f"positions {at}"

    return check


def meta(
    title: str | None = None, author: str | None = None
) -> Callable[[Outcome], tuple[bool, str]]:
    def check(o: Outcome) -> tuple[bool, str]:
        b = o.book
        ok = b is not None and (title is None or b.title == title)
        ok = ok and (author is None or (b is not None and b.author.startswith(author)))
        return ok, f"title {b.title!r}, author {b.author!r}" if b else o.status

    return check


def toc(*titles: str) -> Callable[[Outcome], tuple[bool, str]]:
    def check(o: Outcome) -> tuple[bool, str]:
        got = [t for t, _ in o.toc]
        ok = all(t in got for t in titles) and all(p > 0 for _, p in o.toc)
        return ok, f"contents {got}"

    return check


def green(o: Outcome) -> tuple[bool, str]:
    """The inline SVG is drawn with the page's CSS (a green stroke and star pattern), not
    the SVG's own red fill."""
    from desktop.reader.book_images import data_url_bytes, decode_image

    images(o)  # makes the application the SVG renderer needs
    srcs = [s for s in _IMG.findall(o.html) if s.startswith("data:image/svg")]
    image = decode_image(data_url_bytes(srcs[0]) or b"") if srcs else None
    if image is None:
        return False, "no inline SVG drawn"
    small = image.scaled(64, 64)
    colours = [small.pixelColor(x, y) for x in range(64) for y in range(64)]
    greens = sum(c.alpha() > 0 and c.green() > c.red() + 40 for c in colours)
    reds = sum(c.alpha() > 0 and c.red() > c.green() + 40 for c in colours)
    return greens > 0 and reds == 0, f"drawn with {greens} green and {reds} red samples"


def font(loads: bool) -> Callable[[Outcome], tuple[bool, str]]:
    """The page names the book's face and the window loads it (or, for a font obfuscated
    with another book's identifier, refuses it and shows the reader's font)."""

    def check(o: Outcome) -> tuple[bool, str]:
        from PySide6.QtGui import QGuiApplication

        from desktop.reader.book_fonts import book_fonts

        _app = QGuiApplication.instance() or QGuiApplication([])
        loaded = book_fonts(EPUBS / f"{o.name}.epub")
        named = "margin-book " in o.html
        ok = named and bool(loaded) == loads and o.status == "imported"
        return ok, f"page names the face: {named}; loaded: {sorted(loaded.values()) or 'none'}"

    return check


def rtl_title(o: Outcome) -> tuple[bool, str]:
    t = o.book.title if o.book else ""
    return t.startswith("\u2067"), f"title isolated right-to-left: {t.startswith(chr(0x2067))}"


def plain_title(o: Outcome) -> tuple[bool, str]:
    t = o.book.title if o.book else ""
    return bool(t) and not t.startswith("\u2067"), "title shown as written (no bidi control)"


def turns_right_to_left(o: Outcome) -> tuple[bool, str]:
    from core.books.progression import progression_of

    rtl = bool(o.book) and (
        progression_of(o.book.extra.get("progression", ""), o.book.language) == "rtl"
    )
    return rtl, "pages turn right to left" if rtl else "pages turn left to right"


def audio(o: Outcome) -> tuple[bool, str]:
    """The test asks to hear the sound on the page: its "[Audio: …]" line links the file, and
    the window plays a linked sound at the foot of the page with Qt Multimedia
    (desktop/reader/media_player.py; tests/desktop/reader/test_media_on_page.py). Judged by
    playing the file from the built book to its end with the same player."""
    found = re.findall(r'href="media:/([^"]+)"', o.html)
    if not found or "[Audio:" not in o.text:
        return False, "the page does not show the sound"
    with zipfile.ZipFile(EPUBS / f"{o.name}.epub") as zf:
        data = zf.read(found[0])
    import tempfile

    from w3c_media import play_to_end

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / Path(found[0]).name
        path.write_bytes(data)
        played, duration = play_to_end(path)
    why = f"its line plays it on the page: {duration} ms played to the end"
    return played, why if played else "Qt Multimedia could not play it"


def both(*checks: Callable[[Outcome], tuple[bool, str]]) -> Callable[[Outcome], tuple[bool, str]]:
    def check(o: Outcome) -> tuple[bool, str]:
        results = [c(o) for c in checks]
        return all(ok for ok, _ in results), "; ".join(w for _, w in results)

    return check


NOT_SEEN = ("Test fails if you see this",)
CHECKS: dict[str, tuple[str, Callable[[Outcome], tuple[bool, str]]]] = {
    # Package Documents
    "pkg-spine-nonlinear-activation": ("Package Documents", link_to("following the link opens")),
    "pkg-spine-order": (
        "Package Documents",
        ordered("appear first", "appear second", "appear third", "appear last"),
    ),
    "pkg-linked-records": ("Package Documents", meta("Package metadata title!", "Matthew Chan")),
    "pkg-creator-order": ("Package Documents", meta(author="Dave Cramer")),
    "pkg-title-order": ("Package Documents", meta(title="pkg-title-order")),
    "pkg-manifest-unlisted-resource": (
        "Package Documents",
        lambda o: (
            "<img" not in o.html and o.status == "imported",
            "the unlisted image is not shown",
        ),
    ),
    "pkg-collections-unknown": ("Package Documents", opens),
    "pkg-manifest-unknown": ("Package Documents", opens),
    "pkg-meta-unknown": ("Package Documents", opens),
    "pkg-spine-unknown": ("Package Documents", opens),
    "pkg-unique-id": ("Package Documents", opens),
    "pkg-unique-id_duplicate": ("Package Documents", opens),
    "pkg-meta-whitespace": ("Package Documents", meta("pkg-meta-whitespace", "Dave Cramer")),
    "pkg-spine-duplicate-item-ui": (
        "Package Documents",
        lambda o: (o.text.count("occurs three times") == 3, "each duplicate has its own page"),
    ),
    "pkg-spine-duplicate-item-hyperlink": ("Package Documents", link_to("occurs three times")),
    "pkg-spine-duplicate-item-rendering": (
        "Package Documents",
        lambda o: (
            o.text.count("occurs three times") == 3,
            f"{o.text.count('occurs three times')} copies shown",
        ),
    ),
    "pkg-version-backward": ("Package Documents", opens),
    "pkg-spine-order-svg": ("Package Documents", lambda o: images(o, 4)),
    # Open Container Format
    "ocf-package_multiple": (
        "Open Container Format",
        has("Test passes if you see this", absent=NOT_SEEN),
    ),
    "ocf-package_arbitrary": (
        "Open Container Format",
        has("Test passes if you see this", absent=NOT_SEEN),
    ),
    "ocf-url_manifest": ("Open Container Format", opens),
    "ocf-url_relative": ("Open Container Format", opens),
    "ocf-url_link-relative": ("Open Container Format", images),
    "ocf-metainf-manifest": (
        "Open Container Format",
        lambda o: (len(o.book.pages) == 1 if o.book else False, "only the one page"),
    ),
    "ocf-metainf-inc": ("Open Container Format", opens),
    "ocf-font_obfuscation": ("Open Container Format", font(True)),
    "ocf-font_obfuscation_bis": ("Open Container Format", font(False)),
    "ocf-zip-mult": ("Open Container Format", error),
    "ocf-zip-comp": ("Open Container Format", error),
    "ocf-url_link-path-absolute": ("Open Container Format", images),
    "ocf-url_link-leaking-relative": ("Open Container Format", images),
    # Content Documents
    "cnt-xhtml-support": ("Content Documents", opens),
    "cnt-svg-support": ("Content Documents", images),
    "cnt-svg-embedded": ("Content Documents", images),
    "cnt-svg-css": ("Content Documents", images),
    "cnt-svg-css-reference": ("Content Documents", images),
    "cnt-svg-css-inclusion": ("Content Documents", lambda o: green(o)),
    "cnt-mathml-support": (
        "Content Documents",
        lambda o: (
            "<svg" in o.html or "math:" in o.html or "<sup>2</sup>" in o.html,
            "formula drawn with its superscript",
        ),
    ),
    "cnt-css-fonts_ot": ("Content Documents", font(True)),
    "cnt-css-fonts_tt": ("Content Documents", font(True)),
    "cnt-css-fonts_woff": ("Content Documents", font(True)),
    "cnt-css-fonts_woff2": ("Content Documents", font(True)),
    # Core Media Types
    "pub-cmt-gif": ("Core Media Types", images),
    "pub-cmt-jpeg": ("Core Media Types", images),
    "pub-cmt-png": ("Core Media Types", images),
    "pub-cmt-webp": ("Core Media Types", images),
    "pub-cmt-svg": ("Core Media Types", images),
    "pub-cmt-avif": ("Core Media Types", images),
    "pub-cmt-jxl": ("Core Media Types", images),
    "pub-cmt-mp3": ("Core Media Types", audio),
    "pub-cmt-mp4": ("Core Media Types", audio),
    "pub-cmt-opus": ("Core Media Types", audio),
    # Manifest Fallbacks
    "pub-foreign_image": ("Manifest Fallbacks", images),
    "pub-foreign_json-spine": ("Manifest Fallbacks", has("Test passes if you see this text")),
    "pub-foreign_xml-spine": ("Manifest Fallbacks", has("Test passes")),
    "pub-foreign_xml-suffix-spine": ("Manifest Fallbacks", has("Test passes")),
    "pub-foreign_bad-fallback": (
        "Manifest Fallbacks",
        lambda o: (o.status != "crash", o.status + (": " + o.message[:60] if o.message else "")),
    ),
    # Publication Resources
    "pub-xml-names": ("Publication Resources", reported),
    "pub-xml-non-validating_unclosed": ("Publication Resources", reported),
    "pub-xml-non-validating_comment": (
        "Publication Resources",
        lambda o: (
            o.status == "imported"
            and "Hello" in o.text
            and not any("nav" in t.lower() and False for t, _ in o.toc)
            and o.book is not None
            and o.book.pages[0].text.startswith("Test passes"),
            "commented-out nav not in the spine",
        ),
    ),
    "pub-xml-external-id": (
        "Publication Resources",
        lambda o: (
            "&xxe;" not in o.text
            and "]>" not in o.text
            and "fail" not in o.text.lower().replace("failure statement", ""),
            "no entity text or DTD leaks",
        ),
    ),
    "pub-data-urls_browsing-context": ("Publication Resources", images),
    "pub-file-urls": (
        "Publication Resources",
        lambda o: (
            'src="file:' not in o.html and o.status == "imported",
            "no file: resource loaded",
        ),
    ),
    "sec-untrusted-consent_network": (
        "Publication Resources",
        lambda o: ("http" not in " ".join(_IMG.findall(o.html)), "no remote resource fetched"),
    ),
    "pub-external-links": (
        "Publication Resources",
        lambda o: ('href="https://' in o.html, "link kept; the window asks before opening it"),
    ),
    "pub-external-links_consent": (
        "Publication Resources",
        lambda o: ('href="mailto:' in o.html, "link kept; the window asks before opening it"),
    ),
    # Navigation Documents
    "nav-activation": (
        "Navigation Documents",
        lambda o: (
            any(p == o.page_with("navigation link leads here") for _, p in o.toc),
            f"contents {o.toc}",
        ),
    ),
    "nav-non-text_img": (
        "Navigation Documents",
        toc("Start page", "Description of the Abbey of Sénanque"),
    ),
    "nav-non-text_img_title": (
        "Navigation Documents",
        toc("Start page", "Description of the Abbey of Sénanque"),
    ),
    "nav-access": ("Navigation Documents", lambda o: (len(o.toc) >= 1, f"contents {o.toc}")),
    "nav-spine_not-in-spine": (
        "Navigation Documents",
        lambda o: (len(o.toc) >= 1, f"contents {o.toc}"),
    ),
    "nav-spine_in-spine": (
        "Navigation Documents",
        lambda o: (len(o.toc) >= 1, f"contents {o.toc}"),
    ),
    "nav-spine_in-spine-no-list-style": (
        "Navigation Documents",
        lambda o: (
            o.status == "imported" and not re.search(r"^\s*\d+[.)]", o.text, re.M),
            "no list numbers drawn",
        ),
    ),
    "nav-spine_in-spine-hidden-toc-css": (
        "Navigation Documents",
        both(toc("The first link", "The second link"), has(absent=("The second link",))),
    ),
    "nav-spine_in-spine-hidden-toc-html": (
        "Navigation Documents",
        both(toc("The first link", "The second link"), has(absent=("The second link",))),
    ),
    # Internationalization
    "pkg-dir_creator-rtl": (
        "Internationalization",
        lambda o: (
            (o.book.author if o.book else "").startswith("\u2067"),
            "creator isolated right-to-left",
        ),
    ),
    "pkg-dir_unset-root-unset": ("Internationalization", plain_title),
    "pkg-dir-auto_root-rtl": ("Internationalization", plain_title),
    "pkg-dir-auto_root-unset": ("Internationalization", plain_title),
    "pkg-dir_rtl-root-ltr": ("Internationalization", rtl_title),
    "pkg-dir_rtl-root-unset": ("Internationalization", rtl_title),
    "pkg-dir_unset-root-rtl": ("Internationalization", rtl_title),
    "pkg-lang_but_not_content": ("Internationalization", opens),
    "pkg-dir_but_not_content": ("Internationalization", opens),
    "pkg-spine-progression_ltr": (
        "Internationalization",
        lambda o: (
            bool(o.book) and o.book.extra.get("progression", "ltr") == "ltr",
            "pages left to right",
        ),
    ),
    # the paged view turns as core.books.progression says (Left and the left click zone go
    # forward, first column on the right): tests/desktop/reader/test_rtl_progression.py
    "pkg-spine-progression_rtl": ("Internationalization", turns_right_to_left),
    "pkg-spine-progression-default": ("Internationalization", turns_right_to_left),
    # Structural Semantics
    "pss-support": (
        "Structural Semantics",
        lambda o: ('class="noteref"' in o.html, "note reference opens the note pop-up"),
    ),
    "pss-support_ignore-title": (
        "Structural Semantics",
        lambda o: (
            o.html.count('class="noteref"') == 1,
            f"{o.html.count('class="noteref"')} pop-up references (one wanted)",
        ),
    ),
    # Roll Layout
    "lay-roll-embedded-images": ("Roll Layout", lambda o: images(o, 9)),
    "lay-roll-embedded-images-svg": ("Roll Layout", lambda o: images(o, 9)),
    "lay-roll-images-in-spine": ("Roll Layout", lambda o: images(o, 9)),
    "lay-roll-images-mixed": ("Roll Layout", lambda o: images(o, 9)),
}
APPLICABLE = {name: category for name, (category, _) in CHECKS.items()}
CATEGORIES = list(dict.fromkeys(APPLICABLE.values()))


def judge(name: str, outcome: Outcome) -> tuple[bool, str]:
    if outcome.status == "crash":
        return False, f"crash: {outcome.message}"
    _, check = CHECKS[name]
    try:
        return check(outcome)
    except Exception as exc:
        return False, f"{outcome.status}: {outcome.message or exc}"[:90]
