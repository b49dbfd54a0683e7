"""No mixins or in-between base classes on Qt widgets (issue 47): every widget class of
``desktop/`` subclasses Qt's widgets directly, and what it is made of are parts it owns (the
text view's ``flow``, ``pager``, ``marks`` and ``caret``), not classes it inherits from."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from PySide6.QtWidgets import QWidget

import desktop

QT_MODULES = ("PySide6.", "shiboken6", "Shiboken")


def desktop_widget_classes() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(desktop.__path__, "desktop."):
        if info.name == "desktop.__main__":
            continue
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == info.name and issubclass(cls, QWidget):
                found.append(cls)
    return found


def own_bases(cls: type) -> list[str]:
    """The classes between ``cls`` and Qt's: anything in its MRO but itself, Qt and object."""
    return [
        f"{base.__module__}.{base.__qualname__}"
        for base in cls.__mro__[1:]
        if base is not object and not base.__module__.startswith(QT_MODULES)
    ]


def test_every_desktop_widget_subclasses_qt_directly() -> None:
    classes = desktop_widget_classes()
    names = {c.__qualname__ for c in classes}
    assert {"TextView", "MainWindow", "PdfView"} <= names, "the walk found the widgets"
    mixed = {f"{c.__module__}.{c.__qualname__}": bases for c in classes if (bases := own_bases(c))}
    assert mixed == {}, f"widgets built on classes of their own (compose them instead): {mixed}"


def test_the_check_sees_a_mixin() -> None:
    class Mixin:
        pass

    class Mixed(Mixin, QWidget):
        pass

    class Intermediate(QWidget):
        pass

    class Leaf(Intermediate):
        pass

    assert own_bases(Mixed) and own_bases(Leaf)
    assert own_bases(Intermediate) == []
