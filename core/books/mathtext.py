"""MathML as readable text and as simple display HTML.

The page text (what search, passages and the assistant read) gets a linear form close to
LaTeX-free calculator notation: ``x = (a + b)^2``, ``(1)/(n)``, ``√(x)``, ``a_i``; the
formula's ``alttext`` stands in only when the markup holds no symbols. The display HTML
keeps superscripts and subscripts in place (``<sup>``/``<sub>``), italic identifiers and
fraction bars as "/", so a formula reads in the reader's view without a math engine.
The walk is iterative over the children of each element (formulas are shallow, but a
hostile book may nest thousands deep: depth is capped).
"""

from __future__ import annotations

import html

from selectolax.lexbor import LexborNode

MAX_DEPTH = 64
_SPACED = frozenset("=<>≤≥≠≈+−-×·÷→←⇒⇔∈∉⊂⊆∪∩±∓")


def _kids(node: LexborNode) -> list[LexborNode]:
    out = []
    child = node.child
    while child is not None:
        if child.tag and child.tag != "-text" and child.tag[0] != "-":
            out.append(child)
        child = child.next
    return out


def _group(text: str, markup: str) -> tuple[str, str]:
    """A sub-expression that needs brackets when written linearly (more than one symbol)."""
    if len(text) <= 1 or text.isalnum() or (text.startswith("(") and text.endswith(")")):
        return text, markup
    return f"({text})", f"({markup})"


def _convert(node: LexborNode, depth: int = 0) -> tuple[str, str]:
    """(linear text, display HTML) of one MathML element."""
    tag = (node.tag or "").split(":")[-1]
    if depth > MAX_DEPTH:
        return "", ""
    if tag in ("mi", "mn", "mo", "mtext", "ms"):
        value = " ".join((node.text() or "").split())
        if tag == "mo" and value in _SPACED:
            return f" {value} ", f" {html.escape(value)} "
        if tag == "mi" and len(value) == 1:
            return value, f"<i>{html.escape(value)}</i>"
        return value, html.escape(value)
    if tag in ("annotation", "annotation-xml", "none", "mprescripts"):
        return "", ""
    if tag == "semantics":
        kids = _kids(node)
        return _convert(kids[0], depth + 1) if kids else ("", "")
    parts = [_convert(k, depth + 1) for k in _kids(node)]
    if tag == "mfrac" and len(parts) == 2:
        (nt, nh), (dt, dh) = _group(*parts[0]), _group(*parts[1])
        return f"{nt}/{dt}", f"{nh}/{dh}"
    if tag in ("msup", "msub", "msubsup", "munder", "mover", "munderover") and parts:
        base_t, base_h = _group(*parts[0])
        text, markup = base_t, base_h
        marks = {"msup": "^", "mover": "^", "msub": "_", "munder": "_"}
        if tag in ("msubsup", "munderover") and len(parts) == 3:
            sub, sup = _group(*parts[1]), _group(*parts[2])
            return (
                f"{text}_{sub[0]}^{sup[0]}",
                f"{markup}<sub>{sub[1]}</sub><sup>{sup[1]}</sup>",
            )
        if len(parts) == 2:
            mark = marks.get(tag, "^")
            script = _group(*parts[1])
            html_tag = "sup" if mark == "^" else "sub"
            return f"{text}{mark}{script[0]}", f"{markup}<{html_tag}>{script[1]}</{html_tag}>"
        return text, markup
    if tag in ("msqrt", "mroot"):
        if tag == "mroot" and len(parts) == 2:
            return f"root{parts[1][0]}({parts[0][0]})", f"<sup>{parts[1][1]}</sup>√({parts[0][1]})"
        inner_t = "".join(p[0] for p in parts)
        inner_h = "".join(p[1] for p in parts)
        return f"√({inner_t})", f"√({inner_h})"
    if tag == "mfenced":
        attrs = node.attributes
        open_, close = attrs.get("open") or "(", attrs.get("close") or ")"
        sep = attrs.get("separators") or ","
        return (
            open_ + f"{sep[0]} ".join(p[0] for p in parts) + close,
            html.escape(open_) + f"{sep[0]} ".join(p[1] for p in parts) + html.escape(close),
        )
    if tag == "mtable":
        rows = [
            "; ".join(p[0] for p in [_convert(c, depth + 2) for c in _kids(r)]) for r in _kids(node)
        ]
        return "[" + " | ".join(rows) + "]", html.escape("[" + " | ".join(rows) + "]")
    return "".join(p[0] for p in parts), "".join(p[1] for p in parts)


def math_text(node: LexborNode) -> tuple[str, str, bool]:
    """(linear text, display HTML, is a display block) of a ``<math>`` element."""
    text, markup = _convert(node)
    text = " ".join(text.split())
    markup = " ".join(markup.split())
    alt = " ".join((node.attributes.get("alttext") or "").split())
    if not text and alt:
        text, markup = alt, html.escape(alt)
    block = (node.attributes.get("display") or "") == "block"
    return text, f'<span class="math">{markup}</span>' if markup else "", block
