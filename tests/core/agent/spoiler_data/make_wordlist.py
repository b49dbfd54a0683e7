"""Regenerate ``core/agent/spoiler_words.py`` (the general-English word frequencies).

Source: ``frequency_dictionary_en_82_765.txt`` shipped in the symspellpy wheel (MIT). Its
counts are Google Books Ngram counts ("may be freely used for any purpose") of the words of
SCOWL (Kevin Atkinson's spell-checker word lists, permissive licence). Words are stemmed with
SQLite's own FTS5 ``porter unicode61 remove_diacritics 2`` tokenizer, the one the search index
uses, and the counts of the words sharing a stem are added up. Only stems used at least about
once per million words (Zipf >= 3.0) are kept: rarer words are distinctive anyway.

Run: pip download --no-deps symspellpy, unzip it, then
  .venv/bin/python tests/core/agent/spoiler_data/make_wordlist.py PATH/frequency_dictionary_en_82_765.txt
"""

from __future__ import annotations

import math
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path

OUT = Path(__file__).resolve().parents[4] / "core" / "agent" / "spoiler_words.py"
MIN_ZIPF = 3.0


def stems(words: list[str]) -> list[str]:
    con = sqlite3.connect(":memory:")
    con.execute(
        "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')"
    )
    con.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    con.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(words, 1))
    found = {doc: term for term, doc in con.execute("SELECT term, doc FROM v WHERE offset = 0")}
    return [found.get(i, "") for i in range(1, len(words) + 1)]


def main(source: Path) -> None:
    counts: dict[str, int] = {}
    for line in source.read_text(encoding="utf-8").splitlines():
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
    for stem, count in by_stem.items():
        zipf = math.log10(count / total * 1e9)
        if zipf >= MIN_ZIPF:
            bands[round(zipf * 10)].append(stem)
    lines = [
        '"""General-English frequency of word stems, for the spoiler check (generated; do not edit).',
        "",
        "Made by tests/core/agent/spoiler_data/make_wordlist.py from symspellpy's (MIT)",
        "frequency_dictionary_en_82_765.txt: Google Books Ngram counts (free to use for any purpose;",
        "source: Google Books Ngram Viewer, http://books.google.com/ngrams) of the words in SCOWL",
        "(Kevin Atkinson's word lists, permissive licence). Stems are SQLite FTS5 porter stems.",
        "``BANDS[z]`` holds the stems whose Zipf frequency (log10 of uses per billion words) rounds",
        "to ``z / 10``; stems rarer than Zipf 3.0 are left out.",
        '"""',
        "",
        "BANDS: dict[int, str] = {",
    ]
    for band in sorted(bands, reverse=True):
        text = " ".join(sorted(bands[band]))
        lines.append(f"    {band}: (")
        chunk: list[str] = []
        for stem in text.split():
            chunk.append(stem)
            if sum(len(s) + 1 for s in chunk) > 80:
                lines.append(f'        "{" ".join(chunk)} "')
                chunk = []
        if chunk:
            lines.append(f'        "{" ".join(chunk)}"')
        lines.append("    ),")
    lines.append("}")
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{OUT}: {sum(len(v) for v in bands.values())} stems")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
