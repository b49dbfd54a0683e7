"""A text browser a screen reader reads as a document, not as one long label.

Qt's widget accessibility factory walks a widget's meta-object chain by class name and stops at
the first name it knows. For ``"QTextBrowser"`` it gives the role StaticText (read by Orca or
NVDA as a label, its text announced in one piece); for ``"QTextEdit"`` it gives the text edit's
interface: role EditableText, state read-only, a caret and a text to move through by word and
line. The book page keeps everything of ``QTextBrowser`` (links, keyboard link focus,
``anchorClicked``); only its meta-object is named ``QTextEdit``, so the factory stops there.

That takes no class in between: ``ReadAsDocument`` is a metaclass that names the Qt meta-object
``QTextEdit`` (PySide6 names it after the class body's ``__qualname__``) while the Python class
keeps its own name, so ``class TextView(QTextBrowser, metaclass=ReadAsDocument)`` subclasses
the Qt widget directly. Nothing else looks at the name: style sheets that say ``QTextBrowser``
still match (the class is one), and a ``QTextBrowser`` *is* a ``QTextEdit`` already.

The chat transcript solved the same problem by being a read-only ``QTextEdit`` (it needs none
of the browser's link handling it cannot copy); the book view keeps the browser.
"""

from __future__ import annotations

from PySide6.QtWidgets import QTextBrowser

QT_NAME = "QTextEdit"  # what Qt's accessibility factory reads (see the docstring above)


class ReadAsDocument(type(QTextBrowser)):  # type: ignore[misc]
    """Names a text browser's Qt meta-object ``QTextEdit``; the Python class keeps its name."""

    def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, object]) -> type:
        cls = super().__new__(mcls, QT_NAME, bases, {**namespace, "__qualname__": QT_NAME})
        cls.__name__ = name
        cls.__qualname__ = str(namespace.get("__qualname__", name))
        return cls


class ReadableBrowser(QTextBrowser, metaclass=ReadAsDocument):
    """A QTextBrowser whose accessible interface is a read-only text."""
