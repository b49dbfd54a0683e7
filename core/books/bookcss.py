"""The book's own CSS, reduced to what a stored page keeps: a short, safe ``style`` for each
block (alignment, first-line indent, side and vertical margins, slant, weight, small caps,
relative size) and for inline elements (slant, weight, small caps), plus where a scene break
(``<hr>``) stands.

Selectors are matched by the HTML parser's own engine (lexbor), so ``p + p``,
``hgroup > *:first-child`` or Standard Ebooks' ``[epub|type~="z3998:letter"] header`` work;
rules with pseudo-elements (``::first-letter``) and ``@media`` blocks are left out. Values are
checked against short lists: nothing from the book's CSS reaches a page unchecked.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (a text book's pages use this module's strings, never a parsed tree)
    from selectolax.lexbor import LexborHTMLParser, LexborNode


@lru_cache(maxsize=1)
def _selector_errors() -> tuple[type[Exception], ...]:
    """What lexbor raises for a selector it does not know."""
    try:
        from selectolax.lexbor import SelectolaxError
    except ImportError:  # pragma: no cover - older selectolax
        return (ValueError, RuntimeError)
    return (ValueError, RuntimeError, SelectolaxError)


BLOCK_PROPS = (
    "text-align",
    "text-indent",
    "margin-left",
    "margin-right",
    "margin-top",
    "margin-bottom",
    "font-style",
    "font-weight",
    "font-variant",
    "font-size",
)
INLINE_PROPS = ("font-style", "font-weight", "font-variant")
INHERITED = frozenset(["text-align", "text-indent", "font-style", "font-weight", "font-variant"])
BREAK = "-margin-break: hr"  # a scene break stands before this block
MAX_RULES = 2000  # a pathological style sheet is read only this far

_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_BRACE = re.compile(r"[{};]")
_LENGTH = re.compile(r"^(-?\d*\.?\d+)(em|rem|px|%)?$")
_PSEUDO_ELEMENT = re.compile(r"::|:(before|after|first-letter|first-line|selection|marker)\b")
_NAMESPACE = re.compile(r"\[\s*([a-zA-Z*]*)\|([a-zA-Z-]+)")


def _length(value: str, *, low: float, high: float) -> str | None:
    """A length in em (px kept as px, % of the font as em), within [low, high] em."""
    if value in ("0", "auto"):
        return "0" if value == "0" else None
    match = _LENGTH.match(value)
    if match is None:
        return None
    number, unit = float(match.group(1)), match.group(2) or ""
    if unit == "px":
        em = number / 16
    elif unit == "%":
        return None  # a percentage of the column's width: not what a screen page has
    elif unit in ("em", "rem"):
        em = number
    else:
        return "0" if number == 0 else None
    em = max(low, min(em, high))
    return f"{em:g}em"


def _value(prop: str, value: str) -> str | None:
    """``value`` when it is good for ``prop`` (normalised), else None."""
    value = value.strip().lower().replace("!important", "").strip()
    if prop == "text-align":
        value = {"start": "left", "end": "right"}.get(value, value)
        return value if value in ("left", "right", "center", "justify") else None
    if prop == "text-indent":
        return _length(value, low=-4, high=6)
    if prop.startswith("margin-"):
        return _length(value, low=0, high=6)
    if prop == "font-style":
        return (
            "italic" if value in ("italic", "oblique") else "normal" if value == "normal" else None
        )
    if prop == "font-weight":
        if value in ("bold", "bolder") or (value.isdigit() and int(value) >= 600):
            return "bold"
        return "normal" if value in ("normal", "lighter") or value.isdigit() else None
    if prop == "font-variant":
        return value if value in ("small-caps", "normal") else None
    if prop == "font-size":
        if value in ("smaller", "larger"):
            return "0.83em" if value == "smaller" else "1.2em"
        size = _length(value, low=0.6, high=2.5) if not value.endswith("%") else None
        if value.endswith("%") and value[:-1].replace(".", "", 1).isdigit():
            size = f"{max(0.6, min(float(value[:-1]) / 100, 2.5)):g}em"
        return size
    return None


HIDDEN = "-margin-hidden"  # the element is not shown: display none, or put off screen
_OFF_SCREEN = re.compile(r"^-\s*(\d{3,}(\.\d+)?(em|rem)|\d{4,}(\.\d+)?px)$")


def _hides(body: str) -> bool:
    """``display: none``, or Standard Ebooks' way of keeping text for screen readers only:
    ``position: absolute`` with ``left`` (or ``top``, ``text-indent``) far off the page
    (``left: -999em``); calibre and browsers show neither."""
    found: dict[str, str] = {}
    for part in body.split(";"):
        if ":" in part:
            prop, value = (s.strip().lower() for s in part.split(":", 1))
            found[prop] = value.replace("!important", "").strip()
    if found.get("display") == "none":
        return True
    far = any(_OFF_SCREEN.match(found.get(p, "")) for p in ("left", "top", "text-indent"))
    return far and found.get("position") == "absolute"


def declarations(body: str) -> dict[str, str]:
    """The kept declarations of one rule's body (``margin`` shorthands expanded)."""
    out: dict[str, str] = {HIDDEN: "1"} if _hides(body) else {}
    for part in body.split(";"):
        if ":" not in part:
            continue
        prop, value = (s.strip() for s in part.split(":", 1))
        prop = prop.lower()
        if prop == "font-variant-caps":
            prop = "font-variant"
        if prop == "margin":
            sides = value.replace("!important", "").split()
            if not 1 <= len(sides) <= 4:
                continue
            top, right, bottom, left = (sides * 4)[:4] if len(sides) == 1 else _four(sides)
            for side, v in (("top", top), ("right", right), ("bottom", bottom), ("left", left)):
                kept = _value(f"margin-{side}", v)
                if kept is not None:
                    out[f"margin-{side}"] = kept
            continue
        if prop in BLOCK_PROPS:
            kept = _value(prop, value)
            if kept is not None:
                out[prop] = kept
    return out


def _four(sides: list[str]) -> tuple[str, str, str, str]:
    if len(sides) == 2:
        return sides[0], sides[1], sides[0], sides[1]
    if len(sides) == 3:
        return sides[0], sides[1], sides[2], sides[1]
    return sides[0], sides[1], sides[2], sides[3]


def rules(css: str) -> list[tuple[str, dict[str, str]]]:
    """(selector, kept declarations) of each plain rule, in order; @-blocks left out."""
    css = _COMMENT.sub("", css)
    out: list[tuple[str, dict[str, str]]] = []
    depth, start, head = 0, 0, ""
    for match in _BRACE.finditer(css):
        if len(out) >= MAX_RULES:
            break
        ch, i = match.group(0), match.start()
        if ch == ";":
            if depth == 0:
                start = i + 1  # @charset, @namespace, @import
            continue
        if ch == "{":
            if depth == 0:
                head, start = css[start:i].strip(), i + 1
            depth += 1
            continue
        depth = max(0, depth - 1)
        if depth == 0:
            if not head.startswith("@"):
                found = declarations(css[start:i])
                if found:
                    for selector in head.split(","):
                        selector = selector.strip()
                        if selector and not _PSEUDO_ELEMENT.search(selector):
                            out.append((_NAMESPACE.sub(_attribute, selector), found))
            start = i + 1
    return out


def _attribute(match: re.Match[str]) -> str:
    """``[epub|type`` → ``[epub\\:type`` (the attribute's name as an HTML parser keeps it)."""
    prefix, name = match.group(1), match.group(2)
    return f"[{name}" if prefix in ("", "*") else f"[{prefix}\\:{name}"


@lru_cache(maxsize=32)
def _cascade(sheets: tuple[str, ...]) -> tuple[tuple[str, dict[str, str]], ...]:
    """The rules of a book's sheets in the order they apply (specificity, then order): read
    once per book, not once per document."""
    found: list[tuple[tuple[int, int, int], int, str, dict[str, str]]] = []
    for sheet in sheets:
        for selector, decls in rules(sheet):
            found.append((specificity(selector), len(found), selector, decls))
    found.sort(key=lambda rule: (rule[0], rule[1]))
    return tuple((selector, decls) for _, _, selector, decls in found)


def specificity(selector: str) -> tuple[int, int, int]:
    ids = selector.count("#")
    classes = len(re.findall(r"\.[\w-]|\[|:(?!:)", selector))
    types = len(re.findall(r"(?:^|[\s>+~(])([a-zA-Z][\w-]*)", selector))
    return ids, classes, types


class BookStyles:
    """The styles the book's CSS gives the elements of one parsed document."""

    def __init__(self, tree: LexborHTMLParser, sheets: list[str]) -> None:
        self._own: dict[int, dict[str, str]] = {}
        self._computed: dict[int, dict[str, str]] = {}
        for selector, decls in _cascade(tuple(sheets)):
            try:
                nodes = tree.css(selector)
            except _selector_errors():
                continue  # a selector lexbor does not know: the rule is left out
            for node in nodes:
                self._own.setdefault(node.mem_id, {}).update(decls)

    @classmethod
    def of(cls, tree: LexborHTMLParser, read: Callable[[str], str | None]) -> BookStyles | None:
        """The styles of a document whose linked sheets ``read(href)`` returns; None when
        the document has no style at all."""
        sheets: list[str] = []
        for link in tree.css("link[href]"):
            if "stylesheet" in (link.attributes.get("rel") or "").lower():
                text = read(link.attributes.get("href") or "")
                if text:
                    sheets.append(text)
        sheets.extend(node.text() for node in tree.css("style"))
        if not sheets and tree.css_first("[style]") is None:
            return None
        return cls(tree, sheets)

    def hides(self) -> bool:
        """Whether the book's CSS hides some element of this document (``HIDDEN``)."""
        return any(HIDDEN in decls for decls in self._own.values())

    def hidden(self, node: LexborNode) -> bool:
        return HIDDEN in self._own.get(node.mem_id, {})

    def own(self, node: LexborNode) -> dict[str, str]:
        found = self._own.get(node.mem_id, {})
        inline = node.attributes.get("style")
        return {**found, **declarations(inline)} if inline else found

    def computed(self, node: LexborNode) -> dict[str, str]:
        key = node.mem_id
        known = self._computed.get(key)
        if known is not None:
            return known
        parent = node.parent
        inherited: dict[str, str] = {}
        if parent is not None and parent.tag not in (None, "html", "-undef"):
            inherited = {k: v for k, v in self.computed(parent).items() if k in INHERITED}
        result = {**inherited, **self.own(node)}
        self._computed[key] = result
        return result

    def block_style(self, node: LexborNode) -> str:
        """The block's style. Body text keeps the reader's size and justification: only
        centred and right-aligned text, and sizes of headings, come from the book."""
        props = self.computed(node)
        if props.get("text-align") in ("left", "justify"):
            props = {k: v for k, v in props.items() if k != "text-align"}
        if node.tag in ("p", "li", "div") and "font-size" in props:
            props = {k: v for k, v in props.items() if k != "font-size"}
        return _css(props, BLOCK_PROPS)

    def inline_style(self, node: LexborNode) -> str:
        return _css(self.own(node), INLINE_PROPS)


def _css(props: dict[str, str], keep: tuple[str, ...]) -> str:
    sides = [props.get(f"margin-{side}", "") for side in ("top", "right", "bottom", "left")]
    out = [f"{k}: {props[k]}" for k in keep if k in props and not k.startswith("margin-")]
    if all(sides):
        out.append("margin: " + (sides[0] if len(set(sides)) == 1 else " ".join(sides)))
    else:
        out.extend(f"{k}: {props[k]}" for k in keep if k in props and k.startswith("margin-"))
    return "; ".join(out)


def styled(html: str, style: str) -> str:
    """A block's HTML with its style on its first tag, after a scene break if it has one."""
    if not style:
        return html
    rest = style.replace(BREAK, "").strip("; ")
    if rest and html.startswith("<") and not html.startswith("<table"):
        inner = html.startswith(("<blockquote><p>", "<ul><li>"))
        end = html.find(">", html.find(">") + 1) if inner else html.find(">")
        if end > 0 and "style=" not in html[:end]:
            html = f'{html[:end]} style="{rest}"{html[end:]}'
    if BREAK in style:
        html = '<hr width="25%" style="margin: 1.2em auto">' + html
    return html


def continued(style: str) -> str:
    """The style of a paragraph's later pieces (a page cut it): no indent, break or top margin."""
    parts = [
        p
        for p in style.split("; ")
        if p and not p.startswith(("text-indent", "margin-top", "-margin-break"))
    ]
    return "; ".join(parts)
