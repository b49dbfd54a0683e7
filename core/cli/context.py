"""What every CLI command gets: the folders, the app object (opened on first use), output."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any

from core.app import Margin
from core.log import setup_logging
from core.paths import Paths, resolve_paths
from core.store.library import Library


@dataclass
class CliContext:
    paths: Paths
    _app: Margin | None = field(default=None, repr=False)

    @classmethod
    def create(cls, data_dir: str | None) -> CliContext:
        paths = resolve_paths(data_dir)
        try:
            paths.ensure()
            setup_logging(paths)
        except OSError:
            pass  # opening the library below reports an unusable folder in words
        return cls(paths)

    @property
    def app(self) -> Margin:
        if self._app is None:
            self._app = Margin.open(self.paths)
        return self._app

    @property
    def library(self) -> Library:
        return self.app.library

    def close(self) -> None:
        if self._app is not None:
            self._app.close()

    @staticmethod
    def print_json(value: Any) -> None:
        json.dump(value, sys.stdout, ensure_ascii=False, indent=2, default=str)
        sys.stdout.write("\n")
