"""Text for the Markdown exports (conversations, highlights, the X-Ray and the story so far).

Book text, titles and notes are untrusted: in the file they are plain text (Markdown
punctuation escaped, quotes as escaped blockquotes), and an answer keeps its Markdown but
loses raw HTML, links other than http(s)/mailto and unclosed code fences, so no Markdown
viewer runs a script, loads a picture from the network or swallows the rest of the file.
"""

from __future__ import annotations

import re

CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")
_LINE_START = re.compile(r"^(\s*)([#>+=-]|\d+[.)])", re.M)


def plain(text: str) -> str:
    """Untrusted text (book, title, note, question) as Markdown that shows exactly that text:
    no markup, no HTML, no links, no terminal or direction controls."""
    text = CONTROLS.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _SPECIAL.sub(r"\\\1", text).replace("&", "&amp;")
    return _LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), text)


def one_line(text: str) -> str:
    """``plain`` on one line (headings, list items)."""
    return plain(" ".join(text.split()))


def blockquote(text: str) -> str:
    """A quote from the book as an escaped blockquote."""
    return "\n".join(
        "> " + plain(line) if line.strip() else ">" for line in text.strip().splitlines()
    )


_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_CLOSE = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*$")
_CODE_SPAN = re.compile(r"(`+)(?:.+?)\1", re.S)
_LINK = re.compile(r"(!?)\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+[^)]*)?\)")
_REF_DEF = re.compile(r"^(\s{0,3})\[([^\]]+)\]:", re.M)
_SAFE_SCHEMES = ("http://", "https://", "mailto:")


def _safe_link(m: re.Match[str]) -> str:
    image, label, url = m.group(1), m.group(2), m.group(3)
    if image:  # a picture would be fetched from the network when the file is viewed
        return f"{label} ({url})" if url.lower().startswith(_SAFE_SCHEMES) else label
    if url.lower().startswith(_SAFE_SCHEMES):
        return m.group(0)
    return label


def _safe_prose(text: str) -> str:
    """Answer Markdown outside code: no raw HTML, no unsafe links, no reference links."""
    out: list[str] = []
    last = 0
    for span in _CODE_SPAN.finditer(text):
        out.append(_clean_prose(text[last : span.start()]))
        out.append(span.group(0))
        last = span.end()
    out.append(_clean_prose(text[last:]))
    return "".join(out)


def _clean_prose(text: str) -> str:
    text = _LINK.sub(_safe_link, text)
    text = _REF_DEF.sub(lambda m: m.group(1) + "\\[" + m.group(2) + "]:", text)
    return text.replace("<", "&lt;")


def safe_answer(text: str) -> str:
    """An answer's Markdown, safe to keep in a file: formatting stays; raw HTML, links other
    than http(s) and mailto, and pictures go; an unclosed code fence is closed."""
    text = CONTROLS.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    out: list[str] = []
    prose: list[str] = []
    fence = ""
    for line in text.split("\n"):
        if not fence:
            match = _FENCE.match(line)
            if match is None:
                prose.append(line)
                continue
            if prose:
                out.append(_safe_prose("\n".join(prose)))
            prose = []
            fence = match.group(1)
        elif (close := _CLOSE.match(line)) and (
            close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence)
        ):
            fence = ""
        out.append(line)
    if prose:
        out.append(_safe_prose("\n".join(prose)))
    if fence:
        out.append(fence)
    return "\n".join(out)
