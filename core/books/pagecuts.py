"""Cutting a block longer than a page into even pieces (core.books.pages): its text at
sentence ends (verse: line ends), then clause ends, then spaces; its display HTML at the
same letters, keeping its formatting and links, or rebuilt from the text when that fails."""

from __future__ import annotations

import re

from core.domain.markup import escape_text

# Where a sentence or clause ends: its mark, closing quotes, then the space after (the cut
# goes at the end of the match). The mark is part of the match, not a look-behind: the
# search then skips to the next mark rather than trying every character (issue 41: cutting
# a text book's long paragraphs took 15 ms); so a search from ``low`` starts one character
# before it (``_best_cut``), where a look-behind would have looked.
_SENTENCE_END = re.compile(r"[.!?…。！？][\"'”’)\]]*\s+")
_CLAUSE_END = re.compile(r"[;:—]\s+")
_NOTE_MARK = re.compile(r"\[(\d{1,4}|[*†‡§¶])\]")


def _best_cut(window: str, limit: int, ideal: int, pattern: re.Pattern[str], mark: int = 1) -> int:
    """The end of the boundary in ``window`` nearest ``ideal`` (within a third of ``limit`` and
    ``limit``), or -1. A boundary starts with ``mark`` characters before that third (its
    punctuation mark, 0 for a line end)."""
    best = -1
    low = limit // 3
    for match in pattern.finditer(window, max(low - mark, 0)):
        end = match.end()
        if end > limit:
            break
        if best < 0 or abs(end - ideal) < abs(best - ideal):
            best = end
    return best


def split_long_text(text: str, limit: int) -> list[str]:
    """Cut ``text`` into pieces of at most ``limit`` characters, of about equal length (so no
    piece is a remainder of a few words), preferring line ends in verse, then sentence ends,
    then clause ends, then spaces; a piece is cut mid-word only when a single word is longer
    than ``limit``."""
    if len(text) <= limit:
        return [text]
    pieces: list[str] = []
    rest = text
    while len(rest) > limit:
        count = -(-len(rest) // limit)
        ideal = -(-len(rest) // count)
        window = rest[: limit + 1]
        cut = -1
        if "\n" in window:
            cut = _best_cut(window, limit, ideal, _VERSE_SENTENCE_END)
        if cut <= 0:
            cut = _best_cut(window, limit, ideal, _SENTENCE_END)
        if cut <= 0 and "\n" in window:
            cut = _best_cut(window, limit, ideal, _LINE_END, mark=0)
        if cut <= 0:
            cut = _best_cut(window, limit, ideal, _CLAUSE_END)
        if cut <= 0:
            space = window.rfind(" ", limit // 3, ideal + 1)
            if space < 0:
                space = window.rfind(" ", limit // 3)
            cut = space + 1 if space > 0 else limit
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        pieces.append(rest)
    return [p for p in pieces if p]


_VERSE_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*\n")
_LINE_END = re.compile(r"\n")


def piece_html(text: str) -> str:
    """Display HTML for part of a cut block: its text, with note markers as superscripts
    and verse lines as lines (the block's own formatting is not split with it)."""
    frag = escape_text(text)
    if "[" in frag:
        frag = _NOTE_MARK.sub(r"<sup>\1</sup>", frag)
    return frag.replace("\n", "<br>")


_TAG = re.compile(r"(<[^>]*>)")
_ALNUM = re.compile(r"[^\W_]")  # what str.isalnum() accepts
_NOT_ALNUM = re.compile(r"[\W_]+")


def _nth_letter(n: int) -> re.Pattern[str]:
    """Matches from where it is tried to the end of the ``n``-th letter or digit: what
    stepping through ``_ALNUM.finditer`` ``n`` times finds, in one call."""
    return re.compile(rf"(?:[\W_]*[^\W_]){{{n}}}")


def _letters(text: str) -> int:
    """How many letters and digits (``str.isalnum``) ``text`` holds."""
    return len(_NOT_ALNUM.sub("", text))


_VOID = frozenset(["br", "img", "hr", "wbr"])


def split_html(frag: str, text: str, parts: list[str]) -> list[str] | None:
    """Cut a block's display HTML where its text was cut into ``parts``, keeping its
    formatting and links: each piece closes the inline elements open at its end and the next
    reopens them. The cut is found by counting letters and digits, which the text and the
    HTML share (a note marker "[5]" is "5" in a link, a stage direction's brackets are not
    letters). None when they do not line up (an inline illustration's alt text is only in
    the text), and the caller falls back to the plain text."""
    if "[Illustration:" in text:
        return None
    if frag == text and not any(c in text for c in "&<>"):
        return _split_plain(text, parts)
    return _split_marked(frag, text, parts)


def _split_plain(text: str, parts: list[str]) -> list[str] | None:
    """``split_html`` of a block whose HTML is its text (no markup, nothing escaped: most
    paragraphs of a text book): each cut goes after the letter or digit that ends its part
    and the punctuation after it, as ``_split_marked`` finds it by counting letters, in a
    step back from the part's end rather than two passes over the letters (issue 41)."""
    pieces: list[str] = []
    position = start = 0
    for part in parts[:-1]:
        found = text.find(part, position)
        if found < 0:
            return None
        position = cut = found + len(part)
        while cut > start and not text[cut - 1].isalnum():  # back to its last letter
            cut -= 1
        while cut < len(text) and not text[cut].isalnum() and not text[cut].isspace():
            cut += 1
        pieces.append(text[start:cut].strip())
        start = cut
    pieces.append(text[start:].strip())
    return pieces


def _split_marked(frag: str, text: str, parts: list[str]) -> list[str] | None:
    targets: list[int] = []
    count = 0
    position = 0
    for part in parts[:-1]:
        start = text.find(part, position)
        if start < 0:
            return None
        end = start + len(part)
        count += _letters(text[position:end])
        position = end
        targets.append(count)
    pieces: list[str] = []
    current: list[str] = []
    open_tags: list[tuple[str, str]] = []  # (name, opening tag)
    seen = 0
    for token in _TAG.split(frag):
        if not token:
            continue
        if token[0] == "<":
            name = token[1:].split(None, 1)[0].rstrip(">/").lower() if len(token) > 2 else ""
            if token.startswith("</"):
                name = token[2:-1].strip().lower()
                for k in range(len(open_tags) - 1, -1, -1):
                    if open_tags[k][0] == name:
                        del open_tags[k]
                        break
            elif name and name not in _VOID and not token.endswith("/>"):
                open_tags.append((name, token))
            current.append(token)
            continue
        if "&" in token:
            from html import unescape  # (a text book's pages need no entity tables)

            value = unescape(token)
        else:
            value = token
        letters = _letters(value)
        if not targets or seen + letters < targets[0]:
            seen += letters
            current.append(token if value is token else escape_text(value))
            continue
        start = 0
        while targets:
            # the cut goes after the piece's last letter and the punctuation that follows it
            need = targets[0] - seen
            i = start
            if need > 0:
                last = _nth_letter(need).match(value, start)
                if last is None:
                    break
                i = last.end()
            while i < len(value) and not value[i].isalnum() and not value[i].isspace():
                i += 1
            seen = targets.pop(0)
            current.append(escape_text(value[start:i]))
            current.extend(f"</{name}>" for name, _ in reversed(open_tags))
            pieces.append("".join(current).strip())
            current = [tag for _, tag in open_tags]
            start = i
        seen += _letters(value[start:])
        current.append(escape_text(value[start:]))
    if targets:
        return None
    pieces.append("".join(current).strip())
    return pieces if len(pieces) == len(parts) else None
