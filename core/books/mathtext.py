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
        return _table(node, depth)
    if len(parts) == 1:
        return parts[0]
    if any(p[1].startswith(TABLE) for p in parts):
        return "".join(p[0] for p in parts), _beside(parts)
    return "".join(p[0] for p in parts), "".join(p[1] for p in parts)


TABLE = '<table class="mtable"'
_OPEN = frozenset("([{|‖⟨⌈⌊")
_CLOSE = frozenset(")]}|‖⟩⌉⌋")
_ALIGN = {"left": "left", "right": "right", "center": "center"}


def _element_beside(node: LexborNode, forward: bool) -> LexborNode | None:
    other = node.next if forward else node.prev
    while other is not None and (not other.tag or other.tag[0] == "-"):
        other = other.next if forward else other.prev
    return other


def _fenced(node: LexborNode) -> bool:
    """Whether an ``mtable`` stands between brackets (a matrix) rather than alone (aligned
    equations): its parent is ``mfenced`` or an ``mo`` bracket comes just before it."""
    parent = node.parent
    if parent is not None and (parent.tag or "").split(":")[-1] == "mfenced":
        return True
    before = _element_beside(node, forward=False)
    return (
        before is not None
        and (before.tag or "").split(":")[-1] == "mo"
        and (before.text() or "").strip() in _OPEN
    )


def _table(node: LexborNode, depth: int) -> tuple[str, str]:
    """``mtable``: rows and columns. Text: a matrix as ``1, 2; 3, 4`` (its brackets come from
    the fences around it), aligned equations as ``x + y = 4; x - y = 2`` (cells run together,
    empty ones dropped); an ``mlabeledtr``'s label follows its row in brackets. HTML: a table
    with each column aligned as ``columnalign`` asks (``mtr``/``mtd`` may override it)."""
    matrix = _fenced(node)
    columns = (node.attributes.get("columnalign") or "center").split()
    texts: list[str] = []
    rows: list[str] = []
    for row in _kids(node):
        row_tag = (row.tag or "").split(":")[-1]
        if row_tag not in ("mtr", "mlabeledtr"):
            continue
        cells = _kids(row)
        label = ""
        if row_tag == "mlabeledtr" and cells:
            label = _convert(cells[0], depth + 2)[0].strip()
            cells = cells[1:]
        row_align = (row.attributes.get("columnalign") or "").split()
        cell_texts: list[str] = []
        cell_html: list[str] = []
        for index, cell in enumerate(cells):
            text, markup = _convert(cell, depth + 2)
            text = " ".join(text.split())
            align = (cell.attributes.get("columnalign") or "").strip() or (
                (row_align or columns)[min(index, len(row_align or columns) - 1)]
            )
            cell_texts.append(text)
            cell_html.append(f'<td align="{_ALIGN.get(align, "center")}">{markup}</td>')
        kept = [t for t in cell_texts if t]
        line = ", ".join(kept) if matrix else " ".join(kept)
        if label:
            line = f"{line} ({label.strip('()')})"
            cell_html.append(f'<td align="right">({html.escape(label.strip("()"))})</td>')
        if line:
            texts.append(line)
        rows.append(f"<tr>{''.join(cell_html)}</tr>")
    markup = f'{TABLE} cellspacing="0" cellpadding="3">{"".join(rows)}</table>'
    return "; ".join(texts), markup


def _beside(parts: list[tuple[str, str]]) -> str:
    """A row of math holding a table (``A = ( table )``) as one row of cells, so the table
    keeps its rows and what stands beside it stays beside it; a bracket next to a table is
    drawn as tall as the table's rows."""
    cells: list[str] = []
    pending: list[str] = []
    for index, (text, markup) in enumerate(parts):
        if markup.startswith(TABLE):
            if pending:
                cells.append(f'<td valign="middle">{"".join(pending)}</td>')
                pending = []
            cells.append(f"<td>{markup}</td>")
            continue
        near = [parts[i][1] for i in (index - 1, index + 1) if 0 <= i < len(parts)]
        table = next((m for m in near if m.startswith(TABLE)), "")
        if table and text.strip() in _OPEN | _CLOSE:
            if pending:
                cells.append(f'<td valign="middle">{"".join(pending)}</td>')
                pending = []
            size = 100 + 80 * max(0, table.count("<tr>") - 1)
            cells.append(
                f'<td valign="middle" style="font-size: {size}%">{html.escape(text.strip())}</td>'
            )
            continue
        pending.append(markup)
    if pending:
        cells.append(f'<td valign="middle">{"".join(pending)}</td>')
    return f'{TABLE} cellspacing="0" cellpadding="0"><tr>{"".join(cells)}</tr></table>'


def math_text(node: LexborNode) -> tuple[str, str, bool]:
    """(linear text, display HTML, is a display block) of a ``<math>`` element."""
    text, markup = _convert(node)
    text = " ".join(text.split())
    markup = " ".join(markup.split())
    alt = " ".join((node.attributes.get("alttext") or "").split())
    if not text and alt:
        text, markup = alt, html.escape(alt)
    block = (node.attributes.get("display") or "") == "block"
    if markup.startswith(TABLE):  # rows and columns: a block of its own
        return text, markup, True
    return text, f'<span class="math">{markup}</span>' if markup else "", block
