import re
from pathlib import Path

from core import __version__
from core.version import version_text


def test_version_matches_pyproject_and_lists_components() -> None:
    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1) == __version__
    text = version_text()
    for part in (
        "Margin 0.1.0",
        "Python 3.",
        "Qt (PySide6) 6.12",
        "anthropic SDK 2.",
        "pypdfium2",
        "peewee 4.",
    ):
        assert part in text
