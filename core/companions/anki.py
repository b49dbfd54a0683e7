"""An Anki package (``.apkg``) of a book's cards, written with the standard library.

``genanki`` (MIT) would do it, but it pulls in ``frozendict`` (LGPL-3.0), which the
redistributed app cannot carry; the format is small: a zip holding ``collection.anki2`` (an
SQLite collection in Anki's schema 11, which every Anki since 2.1 imports) and ``media`` (a
JSON map of media files: none here). One note type "Margin card" (Front, Back, Quote, Page,
Source), one deck named after the book, one card per note. Note ids and GUIDs come from the
card's key and the book, so exporting again updates the same notes in Anki instead of
adding copies.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import sqlite3
import tempfile
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path

from core.companions.cards import Card
from core.errors import MarginError

FIELDS = ("Front", "Back", "Quote", "Page", "Source")
FRONT = "{{Front}}"
BACK = (
    "{{FrontSide}}<hr id=answer>{{Back}}"
    '{{#Quote}}<blockquote class="quote">{{Quote}}</blockquote>{{/Quote}}'
    '<div class="page">p. {{Page}}</div>'
)
CSS = (
    ".card { font-family: Georgia, serif; font-size: 20px; text-align: left; color: black; "
    "background-color: white; } .quote { font-style: italic; color: #444; } "
    ".page { font-size: 14px; color: #666; margin-top: 1em; }"
)

SCHEMA = """
CREATE TABLE col (id integer primary key, crt integer not null, mod integer not null,
  scm integer not null, ver integer not null, dty integer not null, usn integer not null,
  ls integer not null, conf text not null, models text not null, decks text not null,
  dconf text not null, tags text not null);
CREATE TABLE notes (id integer primary key, guid text not null, mid integer not null,
  mod integer not null, usn integer not null, tags text not null, flds text not null,
  sfld integer not null, csum integer not null, flags integer not null, data text not null);
CREATE TABLE cards (id integer primary key, nid integer not null, did integer not null,
  ord integer not null, mod integer not null, usn integer not null, type integer not null,
  queue integer not null, due integer not null, ivl integer not null, factor integer not null,
  reps integer not null, lapses integer not null, left integer not null, odue integer not null,
  odid integer not null, flags integer not null, data text not null);
CREATE TABLE revlog (id integer primary key, cid integer not null, usn integer not null,
  ease integer not null, ivl integer not null, lastIvl integer not null,
  factor integer not null, time integer not null, type integer not null);
CREATE TABLE graves (usn integer not null, oid integer not null, type integer not null);
CREATE INDEX ix_notes_usn on notes (usn);
CREATE INDEX ix_cards_usn on cards (usn);
CREATE INDEX ix_revlog_usn on revlog (usn);
CREATE INDEX ix_cards_nid on cards (nid);
CREATE INDEX ix_cards_sched on cards (did, queue, due);
CREATE INDEX ix_revlog_cid on revlog (cid);
CREATE INDEX ix_notes_csum on notes (csum);
"""

DECK_CONF = {
    "id": 1,
    "name": "Default",
    "replayq": True,
    "lapse": {"leechFails": 8, "minInt": 1, "delays": [10], "leechAction": 0, "mult": 0},
    "rev": {
        "perDay": 200,
        "fuzz": 0.05,
        "ivlFct": 1,
        "maxIvl": 36500,
        "ease4": 1.3,
        "bury": False,
        "minSpace": 1,
    },
    "timer": 0,
    "maxTaken": 60,
    "usn": 0,
    "new": {
        "perDay": 20,
        "delays": [1, 10],
        "separate": True,
        "ints": [1, 4, 7],
        "initialFactor": 2500,
        "bury": False,
        "order": 1,
    },
    "mod": 0,
    "autoplay": True,
    "dyn": False,
}


def _id(*parts: object) -> int:
    """A stable positive 52-bit id (Anki's ids are JavaScript-safe integers)."""
    digest = hashlib.sha256("\x00".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") & ((1 << 52) - 1) | (1 << 40)


def _deck(did: int, name: str, now: int) -> dict[str, object]:
    return {
        "id": did,
        "name": name,
        "mod": now,
        "usn": -1,
        "lrnToday": [0, 0],
        "revToday": [0, 0],
        "newToday": [0, 0],
        "timeToday": [0, 0],
        "collapsed": False,
        "desc": "Cards made in Margin: each with its quote and page.",
        "dyn": 0,
        "conf": 1,
        "extendNew": 10,
        "extendRev": 50,
    }


def _checksum(text: str) -> int:
    return int(hashlib.sha1(text.encode()).hexdigest()[:8], 16)


def _field(text: str) -> str:
    return html.escape(text).replace("\n", "<br>")


def write_apkg(path: Path, deck_name: str, book_key: str, cards: Sequence[Card]) -> int:
    """Write ``cards`` to the package ``path`` (replaced whole, never half-written); returns
    how many cards it holds."""
    if not cards:
        raise MarginError(
            "no_cards",
            f'"{deck_name}" has no cards yet.',
            hint="Highlight passages or write notes in the book, then export again.",
        )
    now = int(time.time())
    model_id = _id("margin-model", 1)
    deck_id = _id("margin-deck", book_key)
    model = {
        "id": model_id,
        "name": "Margin card",
        "type": 0,
        "mod": now,
        "usn": -1,
        "sortf": 0,
        "did": deck_id,
        "tmpls": [
            {
                "name": "Card 1",
                "ord": 0,
                "qfmt": FRONT,
                "afmt": BACK,
                "did": None,
                "bqfmt": "",
                "bafmt": "",
            }
        ],
        "flds": [
            {"name": n, "ord": i, "sticky": False, "rtl": False, "font": "Arial", "size": 20}
            for i, n in enumerate(FIELDS)
        ],
        "css": CSS,
        "latexPre": "\\documentclass[12pt]{article}\n\\begin{document}\n",
        "latexPost": "\\end{document}",
        "tags": [],
        "vers": [],
        "req": [[0, "any", [0]]],
    }

    conf = {
        "activeDecks": [deck_id],
        "curDeck": deck_id,
        "newSpread": 0,
        "collapseTime": 1200,
        "timeLim": 0,
        "estTimes": True,
        "dueCounts": True,
        "curModel": model_id,
        "nextPos": len(cards) + 1,
        "sortType": "noteFld",
        "sortBackwards": False,
        "addToCur": True,
    }
    path = Path(path)
    try:
        _write(path, conf, model, deck_id, model_id, book_key, cards, now, deck_name)
    except (OSError, sqlite3.Error) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise MarginError(
            "write_failed",
            f"The Anki package could not be written to {path}: {reason}.",
            hint="Choose a folder that exists and that you can write to.",
        ) from exc
    return len(cards)


def _write(
    path: Path,
    conf: dict[str, object],
    model: dict[str, object],
    deck_id: int,
    model_id: int,
    book_key: str,
    cards: Sequence[Card],
    now: int,
    deck_name: str,
) -> None:
    folder = path.parent if str(path.parent) else Path(".")
    with tempfile.TemporaryDirectory(dir=folder, prefix=".margin-apkg-") as tmp:
        collection = Path(tmp) / "collection.anki2"
        con = sqlite3.connect(collection)
        try:
            con.executescript(SCHEMA)
            con.execute(
                "INSERT INTO col VALUES (1, ?, ?, ?, 11, 0, 0, 0, ?, ?, ?, ?, '{}')",
                (
                    now,
                    now * 1000,
                    now * 1000,
                    json.dumps(conf),
                    json.dumps({str(model_id): model}),
                    json.dumps(
                        {
                            "1": _deck(1, "Default", now),
                            str(deck_id): _deck(deck_id, deck_name, now),
                        }
                    ),
                    json.dumps({"1": DECK_CONF}),
                ),
            )
            for position, card in enumerate(cards, start=1):
                note_id = _id("note", book_key, card.key)
                values = (card.front, card.back, card.quote, str(card.page or ""), card.source)
                fields = "\x1f".join(_field(v) for v in values)
                con.execute(
                    "INSERT INTO notes VALUES (?, ?, ?, ?, -1, ?, ?, ?, ?, 0, '')",
                    (
                        note_id,
                        f"margin-{note_id:x}",
                        model_id,
                        now,
                        f" margin {card.source} ",
                        fields,
                        _field(card.front),
                        _checksum(card.front),
                    ),
                )
                con.execute(
                    "INSERT INTO cards VALUES (?, ?, ?, 0, ?, -1, 0, 0, ?, 0, 0, 0, 0, 0, 0, 0, 0, '')",
                    (_id("card", book_key, card.key), note_id, deck_id, now, position),
                )
            con.commit()
        finally:
            con.close()
        partial = Path(tmp) / "package.apkg"
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as z:
            z.write(collection, "collection.anki2")
            z.writestr("media", "{}")
        os.replace(partial, path)
