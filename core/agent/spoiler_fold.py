"""Look-alike letters folded to their Latin skeleton, for the spoiler check (issue 23).

Two kinds:

- **Latin letters in disguise**, derived from Unicode's own data, not a hand list: every
  character whose Unicode name is a Latin letter dressed up ("LATIN LETTER SMALL CAPITAL R",
  "LATIN SMALL LETTER D WITH HOOK", "LATIN SMALL LETTER SCRIPT G", "MODIFIER LETTER SMALL
  CAPITAL I", "PARENTHESIZED LATIN SMALL LETTER W", "NEGATIVE CIRCLED LATIN CAPITAL LETTER
  A", "REGIONAL INDICATOR SYMBOL LETTER B", "MATHEMATICAL ITALIC SMALL DOTLESS I"...) and that
  NFKD (with its marks dropped) does not already turn into that letter. ``derive`` computes
  the table over every code point; it is generated once into ``data/spoiler_fold.json``
  (``python -m core.agent.spoiler_fold``: scanning all of Unicode takes about 0.1 s, too slow
  for every start-up) and a test checks the stored table against ``derive``.
- **Cyrillic, Greek, Armenian and Lisu look-alikes** (Unicode's confusables for the letters
  that matter in names: Cyrillic "а", Greek "ο", Armenian "օ", Lisu "ꓮ"...), which Unicode names cannot tell. These are folded only
  inside a word that also has Latin letters ("Wіndіbank" with a Cyrillic "і"), or that folds to
  Latin letters entirely: a word really written in Greek or Cyrillic ("Грегор", "Ἀλίκη")
  stays as it is, so it never becomes a later English name by accident.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from importlib.resources import files
from pathlib import Path

FOLD_FILE = "spoiler_fold.json"

__all__ = ["FOLD", "UNICODE_VERSION", "derive", "fold_latin", "fold_scripts"]

# Words of a Unicode name that dress up a Latin letter (the name ends in the letter itself,
# perhaps followed by "WITH ..."): "LATIN LETTER SMALL CAPITAL R", "CIRCLED LATIN SMALL LETTER
# A". Names with other words ("TURNED", "REVERSED", "CYRILLIC") are not look-alikes of a letter.
_DRESS = (
    "NEGATIVE DOUBLE CIRCLED SQUARED PARENTHESIZED LATIN MODIFIER REGIONAL INDICATOR SYMBOL "
    "SUBSCRIPT SUPERSCRIPT MATHEMATICAL BOLD ITALIC SCRIPT FRAKTUR DOUBLE-STRUCK SANS-SERIF "
    "MONOSPACE FULLWIDTH LETTER CAPITAL SMALL DOTLESS OPEN BLACK-LETTER"
).split()
_DRESSED = "|".join(map(re.escape, _DRESS))
_NAME = re.compile(rf"^((?:(?:{_DRESSED}) )+)([A-Z]|ALPHA|IOTA)(?: WITH .*)?$")
_GREEK_NAMED = {"ALPHA": "A", "IOTA": "I"}  # Latin letters named after Greek ones: "ɑ", "ɩ"
_LOWER = frozenset(("SMALL", "SUBSCRIPT", "SUPERSCRIPT"))


def _plain(char: str) -> str:
    """What the check's normalisation alone makes of ``char``: NFKD, marks and format
    characters dropped, NFC."""
    text = unicodedata.normalize("NFKD", char)
    text = "".join(c for c in text if unicodedata.category(c) not in ("Mn", "Me", "Cf"))
    return unicodedata.normalize("NFC", text)


def derive(stop: int = sys.maxunicode + 1) -> dict[str, str]:
    """Character → Latin letter, for every character below ``stop`` whose Unicode name is a
    Latin letter in disguise and that NFKD does not already make into plain letters."""
    table: dict[str, str] = {}
    for cp in range(0x80, stop):
        char = chr(cp)
        if unicodedata.category(char) == "Cf":
            continue  # invisible (tag letters): dropped, never read as letters
        found = _NAME.match(unicodedata.name(char, ""))
        if found is None:
            continue
        plain = _plain(char)
        if plain.isascii() and plain.isalpha():
            continue  # NFKD already reads it right ("ℬ", "𝐖", "Ⓦ", "Ǆ" → "DZ")
        letter, dress = found.group(2), found.group(1)
        if letter in _GREEK_NAMED:
            if "MATHEMATICAL" in dress:
                continue  # a Greek letter of mathematics, not a Latin look-alike
            letter = _GREEK_NAMED[letter]
        # small capitals read as capitals ("ʙᴇʟʟᴇ" is "BELLE": a name)
        lower = _LOWER & set(dress.split()) and "SMALL CAPITAL" not in dress
        table[char] = letter.lower() if lower else letter
    return table


def stored_table() -> tuple[str, dict[str, str]]:
    """The Unicode version the stored table was made from, and the table (``derive``'s)."""
    raw = json.loads(files("core.agent").joinpath("data", FOLD_FILE).read_text("utf-8"))
    return str(raw["unicode_version"]), dict(zip(raw["from"], raw["to"], strict=True))


UNICODE_VERSION, _TABLE = stored_table()
FOLD = str.maketrans(_TABLE)


def fold_latin(text: str) -> str:
    """``text`` with Latin letters in disguise made plain (before NFKD: a parenthesised
    letter must not become "(a)")."""
    return text if text.isascii() else text.translate(FOLD)


# Latin look-alikes of Cyrillic, Greek, Armenian and Lisu letters (Unicode's confusables, the
# letters that matter in names).
_CONFUSABLES = str.maketrans(
    "АВСЕНІЈКМОРЅТХУаеорсхуіјѕԁһӏԛԝ"  # Cyrillic
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαικνορτυχϲ"  # Greek
    "օսհոցզՍՕ"  # Armenian
    "ꓮꓐꓚꓓꓰꓝꓖꓧꓲꓙꓗꓡꓟꓠꓳꓑꓣꓢꓔꓴꓦꓪꓫꓬꓜ",  # Lisu
    "ABCEHIJKMOPSTXYaeopcxyijsdhlqwABEZHIKMNOPTYXaikvoptuxcouhngqUOABCDEFGHIJKLMNOPRSTUVWXYZ",
)
_SCRIPTS = "\u0370-\u03ff\u0400-\u052f\u0531-\u058f\ua4d0-\ua4ff"  # and Armenian, Lisu
_SCRIPT_LETTER = re.compile(f"[{_SCRIPTS}]")
_MIXED_WORD = re.compile(rf"[^\W\d_]*[{_SCRIPTS}][^\W\d_]*")
_LATIN = re.compile(r"[A-Za-z]")


def fold_scripts(text: str) -> str:
    """Cyrillic, Greek, Armenian and Lisu look-alikes folded to Latin inside words that mix
    them with Latin letters ("Wіndіbank"); in a text with no other letter of those scripts,
    words made of look-alikes only are folded too ("Ноrе", "ꓪꓲꓠꓓꓲꓐꓮꓠꓗ"). Text really
    written in those scripts keeps its words ("Η Αλίκη", "Алиса"). After NFKD: "ё" is "е"
    with a mark."""
    if text.isascii():
        return text
    real = any(ord(c) not in _CONFUSABLES for c in _SCRIPT_LETTER.findall(text))

    def fold(found: re.Match[str]) -> str:
        word = found.group()
        if _LATIN.search(word) is None and real:
            return word  # a word of another script, really: left as it is
        return word.translate(_CONFUSABLES)

    return _MIXED_WORD.sub(fold, text)


def _write(path: Path) -> None:
    table = derive()
    data = {
        "unicode_version": unicodedata.unidata_version,
        "from": "".join(table),
        "to": "".join(table.values()),
    }
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="ascii")


if __name__ == "__main__":
    _write(Path(__file__).with_name("data") / FOLD_FILE)
    print(f"{len(derive())} characters, Unicode {unicodedata.unidata_version}")
