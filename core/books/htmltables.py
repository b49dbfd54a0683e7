"""Tables inside the HTML walk: kept as tables for display, one line per row in the text."""

from __future__ import annotations

import html
from collections.abc import Callable

from selectolax.lexbor import LexborNode

from core.books.htmlbuilder import ROW_SEPARATOR, TABLE_ROWS_CHARS, Block, _Builder, _clean

Walk = Callable[[LexborNode, _Builder, bool], None]


def _cell(node: LexborNode, b: _Builder, walk: Walk) -> tuple[str, str]:
    sub = _Builder(b.resolve_image, b.wanted, b.doc, b.ref_labels)
    sub.notes, sub.stage, sub.sup_links = b.notes, b.stage, b.sup_links
    # what the document's walk knows about it (html_document), the same inside a cell
    sub.hiding, sub.link_ids, sub.link_targets = b.hiding, b.link_ids, b.link_targets
    sub.browser, sub.lang, sub.quote_marks = b.browser, b.lang, b.quote_marks
    sub.font_classes, sub.svg_css = b.font_classes, b.svg_css
    sub.table_depth = b.table_depth + 1
    walk(node, sub, False)
    sub.flush()
    for ident in sub.anchors:
        b.anchors.setdefault(ident, len(b.blocks))
    texts = [blk.text for blk in sub.blocks if blk.text]
    # verse in a cell (a play's speech) keeps its lines; other paragraphs run on
    text = "\n".join(texts) if any("\n" in t for t in texts) else " ".join(texts)
    frag = "<br>".join(
        html.escape(blk.text, quote=False) if blk.kind == "table" else blk.html
        for blk in sub.blocks
    )
    return text, frag


def _rows(table: LexborNode) -> list[LexborNode]:
    rows: list[LexborNode] = []
    child = table.child
    while child is not None:
        if child.tag == "tr":
            rows.append(child)
        elif child.tag in ("thead", "tbody", "tfoot"):
            row = child.child
            while row is not None:
                if row.tag == "tr":
                    rows.append(row)
                row = row.next
        child = child.next
    return rows


def _table(table: LexborNode, b: _Builder, walk: Walk) -> None:
    """A table stays a table for display; its text is one line per row, cells joined by
    " · ", so search and the model read it as rows rather than a run of words."""
    b.flush()
    caption = table.css_first("caption")
    if caption is not None and caption.parent is not None and caption.parent.mem_id == table.mem_id:
        text = _clean(caption.text())
        if text:
            b.blocks.append(Block("p", text, html.escape(text, quote=False)))
    rows: list[tuple[str, str]] = []
    for tr in _rows(table):
        texts: list[str] = []
        cells: list[str] = []
        cell = tr.child
        while cell is not None:
            if cell.tag in ("td", "th"):
                text, frag = _cell(cell, b, walk)
                if text:
                    texts.append(text)
                cells.append(f"<{cell.tag}>{frag}</{cell.tag}>")
            cell = cell.next
        if texts or any("<img" in c for c in cells):
            rows.append((ROW_SEPARATOR.join(texts), "<tr>" + "".join(cells) + "</tr>"))
    group: list[tuple[str, str]] = []
    size = 0

    def emit() -> None:
        if group:
            text = "\n".join(t for t, _ in group if t)
            frag = '<table border="1" cellspacing="0" cellpadding="4">'
            frag += "".join(h for _, h in group) + "</table>"
            b.blocks.append(Block("table" if text else "img", text, frag))

    for row in rows:
        if group and size + len(row[0]) > TABLE_ROWS_CHARS:
            emit()
            group = []
            size = 0
        group.append(row)
        size += len(row[0]) + 1
    emit()
