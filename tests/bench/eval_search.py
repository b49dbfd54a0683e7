"""Recall@5 of search_book on paraphrased questions (tests/bench/data/search_eval.json), BM25
alone beside hybrid (BM25 + static vectors: Find, ``margin search``) and deep (BM25 + the
sentence encoder's vectors: the agent's tool and passages mode; skipped without the encoder's
weights), per book; and how often passages mode shows the answer in its highlighted sentence
or its passage. The books' vectors (the encoder's take minutes) are computed first.

Questions marked ``"split": "held-out"`` were written after the search was last tuned, and
``"held-out-2"`` (two books new to the set, written in session 8 apart from the helpers changing
the search): each split has its own line, the honest estimate (nothing was tuned on them).
A question counts as found when one of the first five passages holds its answer quote (after
folding case, quotes, dashes and underscores). Every book is read to the end (no bound).
Run: PYTHONPATH=$PWD .venv/bin/python tests/bench/eval_search.py [--misses] [--split held-out-2]
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from common import FIXTURES, machine

from core.books.importer import import_book
from core.paths import resolve_paths
from core.search import BookSearch
from core.search.vector_indexer import indexer_for, want
from core.store.library import BookInfo, Library

DATA = Path(__file__).parent / "data" / "search_eval.json"
_FOLD = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "_": " "})


def fold(text: str) -> str:
    return " ".join(re.sub(r"[^\w']+|_", " ", text.translate(_FOLD).lower()).split())


def load() -> dict:
    return json.loads(DATA.read_text(encoding="utf-8"))


def book_path(relative: str) -> Path:
    """A fixture book, or a book kept outside the project (``~/...``, or under the folder
    MARGIN_EVAL_BOOKS names)."""
    if relative.startswith("~/"):
        folder = os.environ.get("MARGIN_EVAL_BOOKS")
        return Path(folder) / Path(relative).name if folder else Path(relative).expanduser()
    return FIXTURES / relative


def imported(lib: Library, books: dict[str, str]) -> dict[str, BookInfo]:
    """The set's books that are on this machine, imported and read to their end."""
    found = {}
    for key, relative in books.items():
        path = book_path(relative)
        if not path.exists():
            print(f"  ({key}: {path} is not there; its questions are skipped)")
            continue
        book = import_book(lib, path).book
        lib.set_read_to(book.id, book.page_count)
        found[key] = book
    return found


def open_books(lib: Library, books: dict[str, str]) -> dict[str, int]:
    ids = {key: book.id for key, book in imported(lib, books).items()}
    for book_id in ids.values():
        want(lib.db, book_id)  # the encoder's vectors, as a first deep search asks for them
    indexer_for(lib.db).wait()
    return ids


def recall(search, ids, questions, *, mode: str, show: bool) -> dict[str, list[bool]]:
    found: dict[str, list[bool]] = defaultdict(list)
    for q in questions:
        for key in (q["book"], q["book"] + "-txt"):
            if key not in ids:
                continue
            hits = search.search_book(
                ids[key], q["question"], limit=5, hybrid=mode != "BM25", deep=mode == "deep"
            )
            ok = any(fold(q["answer"]) in fold(h.text) for h in hits)
            found[key].append(ok)
            if show and not ok:
                print(f"    miss [{key}] {q['question']}  -> {q['answer']}")
    return found


def passages_mode(lib, ids, questions, *, show: bool) -> dict[str, list[tuple[bool, bool]]]:
    """Per question: (the answer is in a highlighted sentence, in a shown passage) of the
    reply passages mode gives, read from the reply itself (eval_passages.py)."""
    from eval_passages import judge

    found = judge(lib, ids, questions, show=show)
    return {k: [(x[0], x[1]) for x in v] for k, v in found.items()}


def splits_of(questions: list[dict]) -> list[tuple[str, list[dict]]]:
    """("all", every question), ("all but 2", all but "held-out-2": the set other sessions
    measured as "all"), then one line per split the questions name ("held-out", "held-out-2",
    ...), in the order they first appear; ``--split NAME`` keeps one of them."""
    names = list(dict.fromkeys(q["split"] for q in questions if q.get("split")))
    wanted = sys.argv[sys.argv.index("--split") + 1] if "--split" in sys.argv else None
    earlier = [q for q in questions if q.get("split") != "held-out-2"]
    out = [("all", questions), ("all but 2", earlier)] if wanted is None else []
    out += [(n, [q for q in questions if q.get("split") == n]) for n in names]
    return [(n, qs) for n, qs in out if wanted in (None, n)]


def main() -> None:
    show = "--misses" in sys.argv
    data = load()
    print(f"eval_search on {machine()}: {len(data['questions'])} questions")
    with tempfile.TemporaryDirectory() as tmp:
        lib = Library.open(resolve_paths(Path(tmp) / "home"))
        ids = open_books(lib, data["books"])
        search = BookSearch(lib.db)
        splits = splits_of(data["questions"])
        modes = ["BM25", "hybrid"] + (["deep"] if search.sentences.available() else [])
        for mode in modes:
            name = f"{mode:<6}"
            for split, questions in splits:
                start = time.perf_counter()
                found = recall(search, ids, questions, mode=mode, show=show)
                took = time.perf_counter() - start
                total = [x for v in found.values() for x in v]
                if not total:
                    continue
                per = ", ".join(f"{k} {sum(v)}/{len(v)}" for k, v in found.items())
                print(
                    f"  {name} recall@5 {split:>10} {100 * sum(total) / len(total):5.1f} %"
                    f"  ({per})  {took:.1f} s"
                )
        for split, questions in splits:
            shown = passages_mode(lib, ids, questions, show=show and split == "all")
            every = [x for v in shown.values() for x in v]
            if not every:
                continue
            per = ", ".join(
                f"{k} {sum(b for _, b in v)}/{len(v)} (sentence {sum(a for a, _ in v)})"
                for k, v in shown.items()
            )
            print(
                f"  passages mode {split:>10}: answer shown"
                f" {100 * sum(b for _, b in every) / len(every):.1f} %, in the highlighted"
                f" sentence {100 * sum(a for a, _ in every) / len(every):.1f} %  ({per})"
            )
        lib.close()


if __name__ == "__main__":
    main()
