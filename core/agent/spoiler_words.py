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
    bands: dict[int, list[str]] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            band, _, stems = line.partition(" ")
            bands.setdefault(int(band), []).extend(stems.split())
    return {band: frozenset(stems) for band, stems in bands.items()}


def data_text() -> str:
    return files("core.agent").joinpath("data", DATA_FILE).read_text(encoding="utf-8")


@cache
def bands() -> dict[int, frozenset[str]]:
    """``bands()[z]``: the stems whose Zipf frequency (log10 of uses per billion words) rounds
    to ``z / 10``; stems rarer than Zipf 3.0 are in none."""
    return parse(data_text())


@cache
def zipf() -> dict[str, float]:
    """Stem → its Zipf frequency (``band / 10``), read straight from the file (what the
    check looks up; one pass, no sets on the way)."""
    table: dict[str, float] = {}
    for line in data_text().splitlines():
        if line and not line.startswith("#"):
            band, _, stems = line.partition(" ")
            table.update(dict.fromkeys(stems.split(), int(band) / 10))
    return table
