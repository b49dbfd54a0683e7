"""Plain text, Markdown and single-file HTML books."""

from __future__ import annotations

import codecs
import re
from bisect import bisect_right
from itertools import accumulate, compress, repeat
from operator import add
from pathlib import Path

from core.books.limits import DEFAULT_LIMITS, Limits, too_large
from core.books.model import (
    Block,
    BookFormat,
    Chapter,
    ParsedBook,
    TocAnchor,
    TocItem,
    make_block,
)
from core.books.titles import clean_title
from core.books.txtheadings import Paragraphs, find_headings, lines_of
from core.domain.markup import escape_text
from core.errors import BookCode, BookError

_GUTENBERG_START = re.compile(r"^\*\*\* ?START OF (?:THE|THIS) PROJECT GUTENBERG.*$", re.M)
_GUTENBERG_END = re.compile(r"^\*\*\* ?END OF (?:THE|THIS) PROJECT GUTENBERG.*$", re.M)
_TITLE_LINE = re.compile(r"^Title:\s*(.+)$", re.M)
_AUTHOR_LINE = re.compile(r"^Author:\s*(.+)$", re.M)
_LANGUAGE_LINE = re.compile(r"^Language:\s*(.+)$", re.M)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def decode_text(data: bytes, path: Path) -> str:
    """Decode a text file: BOMs first, then strict UTF-8, then charset detection, then cp1252."""
    for bom, encoding in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            try:
                return data.decode(encoding)
            except UnicodeDecodeError as exc:
                raise BookError(
                    BookCode.CORRUPT,
                    f"{path.name} says it is {encoding.upper()} text but is not valid {encoding.upper()}.",
                ) from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if b"\x00" in data[:4096]:
        # UTF-16 without a BOM: mostly-ASCII text has every other byte zero.
        sample = data[:4096]
        even_zero = sample[0::2].count(0)
        odd_zero = sample[1::2].count(0)
        encoding = "utf-16-le" if odd_zero > even_zero else "utf-16-be"
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            raise BookError(
                BookCode.CORRUPT,
                f"{path.name} is not a text file (it contains binary data).",
                hint="Margin reads EPUB, PDF, plain text, Markdown and HTML books.",
            ) from None
    from charset_normalizer import from_bytes

    # Western text in a legacy encoding is by far the most common case for books; the
    # detector often ranks a near-identical code page (Baltic, Central European) first on
    # short samples, so cp1252 wins whenever it is a plausible candidate at all.
    matches = list(from_bytes(data[: 1024 * 1024]))
    western = {"cp1252", "latin_1", "iso8859_15", "iso8859_1"}
    if any(match.encoding in western for match in matches[:5]):
        try:
            return data.decode("cp1252")
        except UnicodeDecodeError:
            pass
    if matches:
        try:
            return data.decode(matches[0].encoding)
        except (UnicodeDecodeError, LookupError):
            pass
    return data.decode("cp1252", errors="replace")


MAX_PAGE_CHARS = 3000
"""No virtual page holds more text than this (1.5 × the page target), so a book with more
than ``max_pages × MAX_PAGE_CHARS`` characters is certain to be refused: it is refused as
soon as the count passes that, before pages are cut."""


def check_text_budget(chars: int, path: Path, limits: Limits) -> None:
    if chars > limits.max_pages * MAX_PAGE_CHARS:
        raise too_large(
            path, f"its text makes more than {limits.max_pages:,} pages (the most Margin reads)"
        )


# a newline with whitespace that ``str.strip`` removes (other than newlines) beside it
_EDGE_NEWLINE = re.compile(r"\n(?:(?<=[^\S\n]\n)|(?=[^\S\n]))")


def _split(text: str) -> Paragraphs:
    """The paragraphs of ``text``: its runs of lines between blank lines, each line stripped
    and the lines joined by spaces; runs with no text left out."""
    edges = [found.start() for found in _EDGE_NEWLINE.finditer(text)]
    if any(text[at - 1] in " \t" for at in edges if at):  # a line ends in a space or a tab
        raws = _BLANK_LINE.split(text)
        texts = [" ".join(lines_of(raw)) for raw in raws]
    else:
        # the blank lines are exactly the "\n\n" (a plain split is several times faster
        # than the pattern's). A paragraph none of whose lines has whitespace at either end
        # is its text with the newlines made spaces: made for all in two passes, then the
        # few beside whitespace that strip removes (an indented verse, the first and the
        # last) made again line by line (issue 41)
        raws = text.split("\n\n")
        texts = [raw.strip("\n").replace("\n", " ") for raw in raws]
        starts = list(accumulate(map(add, map(len, raws), repeat(2)), initial=0))
        redo = {0, len(raws) - 1}
        for at in edges:
            found = bisect_right(starts, at) - 1  # in raws[found] or the blank after it
            redo.update((found - 1, found, found + 1))
        for index in redo:
            if 0 <= index < len(raws):
                texts[index] = " ".join(lines_of(raws[index]))
    return Paragraphs(list(filter(None, texts)), list(compress(raws, texts)))


def _paragraphs(text: str, limits: Limits, path: Path) -> Paragraphs:
    paras = _split(text)
    budget = limits.max_pages * MAX_PAGE_CHARS  # what check_text_budget allows
    if not paras.texts:
        return paras
    if max(map(len, paras.texts)) > limits.max_paragraph_chars or (
        sum(map(len, paras.texts)) > budget
    ):
        total = 0
        for size in map(len, paras.texts):  # the first paragraph past a limit says which
            if size > limits.max_paragraph_chars:
                raise too_large(
                    path,
                    f"one paragraph is longer than {limits.max_paragraph_chars:,} characters",
                )
            total += size
            check_text_budget(total, path, limits)
    return paras


def _line_match(pattern: re.Pattern[str], text: str, stars: str) -> re.Match[str] | None:
    """``pattern.search(text)`` for a multi-line pattern whose lines start with ``***``:
    only where ``stars`` stands is it tried (a regex search tries every line of the book)."""
    at = text.find(stars)
    while at >= 0:
        found = pattern.match(text, at)
        if found is not None:
            return found
        at = text.find(stars, at + 1)
    return None


def _strip_gutenberg(text: str) -> tuple[str, dict[str, str]]:
    meta: dict[str, str] = {}
    start = _line_match(_GUTENBERG_START, text, "***")
    header = text[: start.start()] if start else text[:3000]
    for key, pattern in (
        ("title", _TITLE_LINE),
        ("author", _AUTHOR_LINE),
        ("language", _LANGUAGE_LINE),
    ):
        m = pattern.search(header)
        if m:
            meta[key] = m.group(1).strip()
    if start:
        text = text[start.end() :]
        end = _line_match(_GUTENBERG_END, text, "***")
        if end:
            text = text[: end.start()]
    return text, meta


_LANG_CODES = {"english": "en", "german": "de", "french": "fr", "spanish": "es", "italian": "it"}


def parse_text(path: Path, data: bytes, *, limits: Limits = DEFAULT_LIMITS) -> ParsedBook:
    text = decode_text(data, path)
    if "\r" in text:  # (one pass over a text without, rather than two)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text, meta = _strip_gutenberg(text)
    paras = _paragraphs(text, limits, path)
    if not paras.texts:
        raise BookError(BookCode.EMPTY, f"{path.name} has no text in it.")
    chapters: list[Chapter] = []
    toc: list[TocItem] = []
    current: list[Block] = []
    title = "Beginning"
    headings = {h.index: h for h in find_headings(paras)}
    skip = 0
    for i, joined in enumerate(paras.texts):
        if skip:
            skip -= 1
            continue
        heading = headings.get(i)
        if heading is None:
            escape = "&" in joined or "<" in joined or ">" in joined
            current.append(make_block("p", joined, escape_text(joined) if escape else joined))
            continue
        skip = heading.span - 1
        block = Block("h2", heading.title, escape_text(heading.title))
        if current and any(b.kind != "h2" for b in current):
            chapters.append(Chapter(title, tuple(current)))
            current = []
        if not current:
            title = heading.title
        # a heading right under another one (BOOK THE FIRST / CHAPTER I) shares its chapter
        toc.append(
            TocAnchor(
                clean_title(heading.title), heading.level, chapter=len(chapters), block=len(current)
            )
        )
        current.append(block)
    if current:
        chapters.append(Chapter(title, tuple(current)))
    language = meta.get("language", "")
    return ParsedBook(
        format=BookFormat.TXT,
        title=meta.get("title") or path.stem.replace("_", " ").strip() or path.name,
        author=meta.get("author", ""),
        language=_LANG_CODES.get(language.lower(), language),
        chapters=tuple(chapters),
        toc=tuple(toc),
    )


def _split_chapters(
    blocks: list[Block], fallback_title: str
) -> tuple[list[Chapter], list[TocItem]]:
    """Headings start chapters (the highest heading level used); all headings go in the toc."""
    levels = [int(b.kind[1]) for b in blocks if b.kind in ("h1", "h2", "h3", "h4", "h5", "h6")]
    top = min(levels) if levels else 0
    split_at = {top, top + 1} if top else set()
    chapters: list[Chapter] = []
    toc: list[TocItem] = []
    current: list[Block] = []
    title = fallback_title
    for block in blocks:
        level = int(block.kind[1]) if block.kind[0] == "h" and block.kind[1:].isdigit() else 0
        if level and level in split_at and current and any(b.text for b in current):
            chapters.append(Chapter(title, tuple(current)))
            current = []
        if level and level in split_at and not current:
            title = block.text
        if level:
            toc.append(
                TocAnchor(
                    clean_title(block.text),
                    level - top + 1,
                    chapter=len(chapters),
                    block=len(current),
                )
            )
        current.append(block)
    if current:
        chapters.append(Chapter(title, tuple(current)))
    return chapters, toc


def _check_blocks(blocks: list[Block], path: Path, limits: Limits) -> None:
    check_text_budget(sum(len(b.text) for b in blocks), path, limits)
    for block in blocks:
        if len(block.text) > limits.max_paragraph_chars:
            raise too_large(
                path, f"one paragraph is longer than {limits.max_paragraph_chars:,} characters"
            )
    if not any(b.text for b in blocks):
        raise BookError(BookCode.EMPTY, f"{path.name} has no text in it.")


# Markdown nested deeper than the parser follows loses its text (issue 46 item 12: a
# 10,000-deep quote, a 2,000-deep list): quotes and list indents past MARKDOWN_DEPTH levels
# are read as that depth, and the parser follows a little more than that.
MARKDOWN_DEPTH = 16
MARKDOWN_NESTING = 4 * MARKDOWN_DEPTH + 20
_DEEP_QUOTE = re.compile(rf"^(?:[ \t]*>){{{MARKDOWN_DEPTH + 1},}}", re.M)
_DEEP_INDENT = re.compile(rf"^[ \t]{{{2 * MARKDOWN_DEPTH + 1},}}(?=[-*+]\s|\d+[.)]\s)", re.M)


def _shallow(source: str) -> str:
    """``source`` with quotes and list items nested past ``MARKDOWN_DEPTH`` brought up to it
    (their words kept)."""
    source = _DEEP_QUOTE.sub(">" * MARKDOWN_DEPTH, source)
    return _DEEP_INDENT.sub(" " * (2 * MARKDOWN_DEPTH), source)


def parse_markdown(path: Path, data: bytes, *, limits: Limits = DEFAULT_LIMITS) -> ParsedBook:
    from markdown_it import MarkdownIt

    from core.books.htmlblocks import html_to_blocks  # (a text book needs none of it)

    source = _shallow(decode_text(data, path))
    md = MarkdownIt(
        "commonmark", {"html": False, "linkify": False, "maxNesting": MARKDOWN_NESTING}
    ).enable("table")
    rendered = md.render(source)
    _, blocks = html_to_blocks(f"<html><body>{rendered}</body></html>")
    _check_blocks(blocks, path, limits)
    title = next((b.text for b in blocks if b.kind == "h1"), "") or path.stem
    chapters, toc = _split_chapters(blocks, title)
    return ParsedBook(
        format=BookFormat.MARKDOWN, title=title, chapters=tuple(chapters), toc=tuple(toc)
    )


def parse_html(path: Path, data: bytes, *, limits: Limits = DEFAULT_LIMITS) -> ParsedBook:
    from core.books.htmlblocks import html_to_blocks  # (a text book needs none of it)

    head = data[:4096].lower()
    if b"charset=" in head and b"utf-8" not in head and b"utf8" not in head:
        m = re.search(rb"charset=[\"']?([a-z0-9_\-]+)", head)
        try:
            source = data.decode(m.group(1).decode() if m else "cp1252")
        except (LookupError, UnicodeDecodeError):
            source = decode_text(data, path)
    else:
        source = decode_text(data, path)
    doc_title, blocks = html_to_blocks(source)
    _check_blocks(blocks, path, limits)
    author = ""
    found = re.search(r'<meta\s+name=["\']author["\']\s+content=["\']([^"\']+)', source, re.I)
    if found:
        from html import unescape

        author = unescape(found.group(1)).strip()
    title = doc_title or next((b.text for b in blocks if b.kind == "h1"), "") or path.stem
    chapters, toc = _split_chapters(blocks, title)
    lang = re.search(r'<html[^>]*\blang=["\']([A-Za-z\-]+)', source, re.I)
    return ParsedBook(
        format=BookFormat.HTML,
        title=title,
        author=author,
        language=lang.group(1) if lang else "",
        chapters=tuple(chapters),
        toc=tuple(toc),
    )
