"""A text browser a screen reader reads as a document, not as one long label.

Qt's widget accessibility factory walks a widget's meta-object chain by class name and stops at
the first name it knows. For ``"QTextBrowser"`` it gives the role StaticText (read by Orca or
NVDA as a label, its text announced in one piece); for ``"QTextEdit"`` it gives the text edit's
interface: role EditableText, state read-only, a caret and a text to move through by word and
line. The book page keeps everything of ``QTextBrowser`` (links, keyboard link focus,
``anchorClicked``); only this class, named ``QTextEdit`` in the meta-object chain, sits
between it and the book's view so the factory stops here first. Nothing else looks at the
name: style sheets that say ``QTextBrowser`` still match (the class is one), and a
``QTextBrowser`` *is* a ``QTextEdit`` already.

The chat transcript solved the same problem by being a read-only ``QTextEdit`` (it needs none
of the browser's link handling it cannot copy); the book view keeps the browser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QTextBrowser

if TYPE_CHECKING:
    ReadableBrowser = QTextBrowser
else:  # the class name is what Qt's accessibility factory reads (see the docstring above)
    ReadableBrowser = type(
        "QTextEdit",
        (QTextBrowser,),
        {"__doc__": "A QTextBrowser whose accessible interface is a read-only text."},
    )
