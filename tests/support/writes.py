"""A guard that keeps every test's files inside the temp folders.

While a test runs, a file opened for writing, a folder or SQLite database created, a file copied
or renamed, or a QImage/QPixmap saved anywhere but under the system's temp folder (where
pytest's ``tmp_path`` and every MARGIN_HOME live), the folder MARGIN_SHOTS names, ``/dev`` or a
``__pycache__`` folder is refused with a PermissionError and remembered; ``tests/conftest.py``
then fails the test, naming the path (so code that swallows the error cannot hide it).

Python's audit hooks see what Python code writes; Qt's own file writes are C++, so the two
picture ``save`` methods the tests use are wrapped as well.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class OutsideTmpError(PermissionError):
    """A test tried to write outside its temp folders."""


PROJECT = os.path.realpath(Path(__file__).resolve().parents[2]) + os.sep


class WriteGuard:
    def __init__(self) -> None:
        self.active = False
        self.outside: list[str] = []
        self._roots: tuple[str, ...] = ()
        self._qt_wrapped = False
        self._installed = False

    # the allowed places --------------------------------------------------------------------

    def start(self) -> None:
        """Guard the writes from now on (called before each test)."""
        roots = {tempfile.gettempdir(), os.path.realpath(tempfile.gettempdir()), "/dev"}
        shots = os.environ.get("MARGIN_SHOTS")
        if shots:
            roots |= {os.path.abspath(shots), os.path.realpath(shots)}
        self._roots = tuple(root.rstrip(os.sep) + os.sep for root in roots)
        self.outside = []
        if not self._installed:
            sys.addaudithook(self._hook)
            self._installed = True
        self._wrap_qt()
        self.active = True

    def stop(self) -> list[str]:
        """Stop guarding; the paths refused since ``start``."""
        self.active = False
        return self.outside

    def allowed(self, path: str) -> bool:
        full = os.path.abspath(path)
        if f"{os.sep}__pycache__{os.sep}" in full:
            return True
        if full.startswith(PROJECT) or os.path.realpath(full).startswith(PROJECT):
            return False  # the project itself, even when its clone lives in /tmp (CI)
        return (
            full.startswith(self._roots)
            or full + os.sep in self._roots  # the folder itself (O_TMPFILE opens the folder)
            or f"{os.sep}__pycache__{os.sep}" in full
            or full in ("/dev/null",)
        )

    def check(self, path: object, what: str) -> None:
        if not self.active or isinstance(path, int):
            return  # a file descriptor: already open
        try:
            name = os.fsdecode(path)  # type: ignore[arg-type]
        except TypeError:
            return
        if self.allowed(name):
            return
        self.outside.append(f"{what} {os.path.abspath(name)}")
        raise OutsideTmpError(
            f"tests write only under their temp folder (tmp_path, MARGIN_HOME) or MARGIN_SHOTS;"
            f" refused: {what} {name}"
        )

    # what is watched -----------------------------------------------------------------------

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        if event == "open":
            path, mode, flags = args
            writing = any(c in mode for c in "wax+") if mode else bool(flags & _WRITE_FLAGS)
            if writing:
                self.check(path, "write")
        elif event == "os.mkdir":
            if not _exists(args[0]):
                self.check(args[0], "mkdir")
        elif event in ("os.rename", "shutil.copyfile", "shutil.copytree"):
            self.check(args[1], event)
        elif event == "sqlite3.connect":
            database = args[0]
            if isinstance(database, str | bytes | os.PathLike):
                name = os.fsdecode(database)
                if name and not name.startswith((":", "file:")) and not _exists(name):
                    self.check(name, "new database")

    def _wrap_qt(self) -> None:
        """Wrap QImage.save and QPixmap.save once QtGui is loaded (core tests never load it)."""
        if self._qt_wrapped or "PySide6.QtGui" not in sys.modules:
            return
        from PySide6.QtGui import QImage, QPixmap

        for cls in (QImage, QPixmap):
            cls.save = self._guarded(cls.save)  # type: ignore[method-assign]
        self._qt_wrapped = True

    def _guarded(self, save: Callable[..., bool]) -> Callable[..., bool]:
        def guarded_save(picture: Any, target: Any, *args: Any, **kwargs: Any) -> bool:
            if isinstance(target, str | os.PathLike):
                self.check(target, "save picture")
            return save(picture, target, *args, **kwargs)

        return guarded_save


def _exists(path: object) -> bool:
    try:
        return os.path.exists(path)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


GUARD = WriteGuard()
