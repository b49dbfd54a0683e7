"""The spoiler check's generated data are data files (core/agent/data) read with
importlib.resources: the word frequencies are what their generator writes and the same sets
as the Python module they replaced; both files ship in the wheel and the bundle."""

from __future__ import annotations

import hashlib
import math
import tomllib
from pathlib import Path

from core.agent import spoiler_fold, spoiler_words
from core.agent.data import make_spoiler_words
from core.agent.spoiler_text import GENERAL_ZIPF

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "core" / "agent" / "data"

# core/agent/spoiler_words.py's BANDS before it became a data file (issue 47): 44 bands,
# 19,551 stems, and the SHA-256 of "band stem stem ..." lines, bands most frequent first
OLD_BANDS = 44
OLD_STEMS = 19_551
OLD_SHA256 = "a5ba75fbbcc60d56e8eca3c0b3cdd5bdda410326b9d9733e2c2e2eae320cdc74"


def canonical(bands: dict[int, frozenset[str]]) -> str:
    return "\n".join(f"{b} {' '.join(sorted(s))}" for b, s in sorted(bands.items(), reverse=True))


def test_the_loaded_words_are_the_sets_of_before() -> None:
    bands = spoiler_words.bands()
    assert len(bands) == OLD_BANDS
    assert sum(len(stems) for stems in bands.values()) == OLD_STEMS
    assert hashlib.sha256(canonical(bands).encode()).hexdigest() == OLD_SHA256
    assert GENERAL_ZIPF["the"] == 7.6 and "gregor" not in GENERAL_ZIPF
    assert {stem: b / 10 for b, stems in bands.items() for stem in stems} == GENERAL_ZIPF


def test_the_data_file_is_what_the_generator_writes() -> None:
    """The file is exactly ``render`` of the data it holds: regenerating from the same
    counts gives the same file, and a hand edit that breaks its form shows here."""
    text = spoiler_words.data_text()
    bands = {band: sorted(stems) for band, stems in spoiler_words.parse(text).items()}
    assert make_spoiler_words.render(bands) == text
    assert make_spoiler_words.OUT == DATA / spoiler_words.DATA_FILE


def test_the_generator_bands_words_by_stem_and_frequency() -> None:
    """``bands_of`` adds up the counts of words sharing a porter stem ("walk", "walked") and
    leaves out stems rarer than Zipf 3 (here: under a millionth of the uses)."""
    counts = {"walk": 600_000, "walked": 400_000, "the": 8_000_000_000, "zyx": 1}
    source = "\n".join(f"{w} {c}" for w, c in counts.items())
    bands = make_spoiler_words.bands_of(source)
    found = {stem: band for band, stems in bands.items() for stem in stems}
    assert set(found) == {"walk", "the"}
    total = sum(counts.values())
    assert found["walk"] == round(math.log10(1_000_000 / total * 1e9) * 10)
    parsed = spoiler_words.parse(make_spoiler_words.render(bands))
    assert parsed == {band: frozenset(stems) for band, stems in bands.items()}


def test_the_words_are_read_once() -> None:
    assert spoiler_words.bands() is spoiler_words.bands()


def test_the_fold_table_loads() -> None:
    version, table = spoiler_fold.stored_table()
    assert version and len(table) == 480
    assert "ʀ".translate(spoiler_fold.FOLD) == "R"  # LATIN LETTER SMALL CAPITAL R


def test_the_data_files_ship_in_the_wheel_and_the_bundle() -> None:
    names = sorted(p.name for p in DATA.iterdir() if p.suffix in (".txt", ".json"))
    assert names == ["spoiler_fold.json", "spoiler_words.txt"]
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    globs = setup["package-data"]["core.agent"]
    assert all(any(Path("data", n).match(g) for g in globs) for n in names)
    spec = (ROOT / "packaging" / "margin.spec").read_text("utf-8")
    for suffix in ("txt", "json"):
        assert f'"data" / "*.{suffix}"), "core/agent/data")' in spec
