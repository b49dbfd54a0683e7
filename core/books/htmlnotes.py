"""Note references, notes and their back links inside the HTML walk.

A reference stays apart from its word as ``[5]`` in the text and shows as a superscript
link; a note starts with its number; a back link ("↩") is only in the HTML.
"""

from __future__ import annotations

import html

from selectolax.lexbor import LexborNode

from core.books.htmlbuilder import NOTE_LINK, _Builder, _clean


def _note_link(node: LexborNode, b: _Builder) -> bool:
    """A note reference or a note's back link: made here (True), or an ordinary link.

    A reference is kept apart from its word as ``[5]`` in the text (search still sees the
    word) and shown as a superscript link; a back link ("↩") has no text, only its link."""
    attrs = node.attributes
    types = f"{attrs.get('epub:type') or ''} {attrs.get('role') or ''} {attrs.get('class') or ''}"
    href = attrs.get("href") or ""
    label = ""
    if "backlink" in types:
        kind = "back"
    elif "noteref" in types or "fnanchor" in types or "footnote-ref" in types:
        kind = "ref"
    else:
        label = _clean(node.text())
        if label in ("↩", "↩︎", "↑") and "#" in href:
            kind = "back"
        elif (
            "#" in href
            and 0 < len(label) <= 4
            and " " not in label
            and (
                (node.parent is not None and node.parent.tag == "sup")
                or (node.child is not None and node.child.tag == "sup" and node.child.next is None)
            )
        ):
            kind = "ref"
        else:
            return False
    target = b.target(href)
    if kind == "back":
        link = f'<a href="{NOTE_LINK}{html.escape(target)}">↩</a>' if target else ""
        b.raw(link)
        b._backlink = link
        return True
    label = (label or _clean(node.text())).strip("[]()")
    if not label:
        return False
    if target:
        b.ref_labels.setdefault(target, label)
    in_sup = node.parent is not None and node.parent.tag == "sup"
    b._text.append(f"[{label}]")
    link = (
        f'<a class="noteref" href="{NOTE_LINK}{html.escape(target)}">{html.escape(label)}</a>'
        if target
        else html.escape(label)
    )
    b.raw(b.anchor(node.id) + (link if in_sup else f"<sup>{link}</sup>"))
    return True


def _note_start(node: LexborNode, b: _Builder) -> None:
    """The start of a note (an endnote's list item, a footnote aside): its number comes
    first, as ``[5]`` in the text, with the link anchor the references point at."""
    ident = node.id or ""
    key = f"{b.doc}#{ident}"
    label = b.ref_labels.get(key) or (str(b.ol_number) if node.tag == "li" else "")
    if node.tag == "li":
        b.ol_number += 1
    b.flush()
    text = f"[{label}] " if label else ""
    b._prefix = (text, b.anchor(ident) + (f"<b>{html.escape(label)}.</b> " if label else ""))


def _sup_note(sup: LexborNode, b: _Builder) -> bool:
    """``<sup><a href="#n5">5</a></sup>``: the reference alone (the link makes its own
    superscript)."""
    first = sup.child
    if first is None or first.tag != "a" or first.next is not None:
        return False
    return _note_link(first, b)
