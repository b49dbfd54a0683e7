"""Page-list entries that point with EPUB CFIs (``package.opf#epubcfi(/6/4!/4/2/6)``, or a
document's ``#epubcfi(/4/2/6)``) instead of element ids: each is resolved to its document and
the id of the element it points into, so the printed page starts there as for an id link.

A CFI's steps are even numbers counting element children (``/4``: the second element); a
step may assert the element's id (``/6[p40]``), which is used when given. The first part
(before ``!``) steps through the package: ``/6`` is the spine, ``/6/4`` its second itemref.
Character offsets (``:10``) and ranges are not needed for where a page starts: the element
holding it stands for it. A CFI that leads nowhere leaves the entry out, as a broken id
link does."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

from selectolax.lexbor import LexborHTMLParser, LexborNode

from core.books.epubtoc import _Entry

log = logging.getLogger(__name__)

_CFI = re.compile(r"epubcfi\((?P<path>[^,)]*)")
_STEP = re.compile(r"/(\d+)(?:\[([^\]]*)\])?")
CFI_ID = "cfi/"  # the id given to an element a CFI names that has none
MAX_STEPS = 64  # a CFI deeper than any book is not followed


def _elements(node: LexborNode) -> list[LexborNode]:
    out = []
    child = node.child
    while child is not None:
        if child.tag and child.tag[0] != "-":
            out.append(child)
        child = child.next
    return out


def _steps(path: str) -> list[tuple[int, str]]:
    path = path.split(":", 1)[0].split("~", 1)[0].split("@", 1)[0]
    return [(int(n), ident) for n, ident in _STEP.findall(path)][:MAX_STEPS]


def _id_in(markup: bytes, steps: list[tuple[int, str]]) -> str:
    """The id of the deepest element with one on the way down ``steps`` (the last id
    asserted in the CFI wins); "" for the document's start."""
    asserted = [ident for _, ident in steps if ident]
    if asserted:
        return asserted[-1]
    node = _follow(LexborHTMLParser(markup.decode("utf-8", errors="replace")).root, steps)
    if node is None:
        return ""
    # an element without an id: named by its path, given that id when the document is read
    return node.attributes.get("id") or CFI_ID + "".join(f"/{n}" for n, _ in steps)


def _follow(node: LexborNode | None, steps: list[tuple[int, str]]) -> LexborNode | None:
    """The element ``steps`` lead to from <html> (/4 is <body>); None when they lead nowhere."""
    for number, _ in steps:
        if node is None or number % 2:
            return None if node is None or not steps else node
        kids = _elements(node)
        if not 0 < number // 2 <= len(kids):
            return None
        node = kids[number // 2 - 1]
    return node


def with_cfi_ids(markup: bytes, fragments: set[str]) -> bytes:
    """A document with the ids ``_id_in`` named by path (``cfi/4/10``) set on their
    elements, so a printed page starts there as at any id."""
    paths = [f for f in fragments if f.startswith(CFI_ID)]
    if not paths:
        return markup
    tree = LexborHTMLParser(markup.decode("utf-8", errors="replace"))
    for path in paths:
        node = _follow(tree.root, _steps(path[len(CFI_ID) - 1 :]))
        if node is not None and not node.attributes.get("id"):
            node.attrs["id"] = path
    return (tree.html or "").encode("utf-8")


def resolve_cfi_entries(
    entries: list[_Entry], spine: list[str], opf_path: str, read: Callable[[str], bytes]
) -> list[_Entry]:
    """``entries`` with every CFI link made a (document, id) link; the others as they are."""
    out: list[_Entry] = []
    for entry in entries:
        found = _CFI.search(entry.fragment)
        if found is None:
            out.append(entry)
            continue
        path = found.group("path")
        doc = entry.doc
        if "!" in path:  # through the package: /6 (the spine) / N (an itemref)
            package, path = path.split("!", 1)
            steps = _steps(package)
            if len(steps) < 2 or steps[1][0] % 2 or not 0 < steps[1][0] // 2 <= len(spine):
                continue
            doc = spine[steps[1][0] // 2 - 1]
        elif doc == opf_path:
            continue
        try:
            fragment = _id_in(read(doc), _steps(path))
        except Exception:  # a missing or unreadable document: the entry goes, as a bad link
            log.info("page-list CFI %s not followed", entry.fragment, exc_info=True)
            continue
        out.append(entry._replace(doc=doc, fragment=fragment))
    return out
