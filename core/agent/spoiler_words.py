"""General-English frequency of word stems, for the spoiler check: the data file
``core/agent/data/spoiler_words.txt`` (made by ``make_spoiler_words.py`` beside it, which
names its sources and licences), read the first time it is asked for and kept.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

DATA_FILE = "spoiler_words.txt"


def parse(text: str) -> dict[int, frozenset[str]]:
    """Band → its stems, from the data file's text (``#`` lines are comments; each other line
    is a band and some of its stems)."""
    bands: dict[int, set[str]] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        band, *stems = line.split()
        bands.setdefault(int(band), set()).update(stems)
    return {band: frozenset(stems) for band, stems in bands.items()}


def data_text() -> str:
    return files("core.agent").joinpath("data", DATA_FILE).read_text(encoding="utf-8")


@cache
def bands() -> dict[int, frozenset[str]]:
    """``bands()[z]``: the stems whose Zipf frequency (log10 of uses per billion words) rounds
    to ``z / 10``; stems rarer than Zipf 3.0 are in none."""
    return parse(data_text())
