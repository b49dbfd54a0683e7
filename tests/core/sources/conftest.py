from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.core.sources.calibre_library import CALIBREDB, make_library


@pytest.fixture(scope="session")
def calibre_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if CALIBREDB is None:
        pytest.skip("calibre is not installed (Debian package 'calibre'; .ci/system-packages)")
    return make_library(tmp_path_factory.mktemp("calibre") / "Calibre Library", FIXTURES)


@pytest.fixture
def calibre_dir(calibre_master: Path, tmp_path: Path) -> Path:
    """This test's own copy of the library (tests may move it or lock it)."""
    copy = tmp_path / "Calibre Library"
    shutil.copytree(calibre_master, copy)
    return copy
