"""X-Ray's merges of one person's names (issue 39, item 9) measured on three real books against
a hand-made key: for each book, clusters of the names one person goes by (only names whose
owner is plain from the story; ambiguous ones such as "John" or "McCarthy" are left out).

Within each X-Ray entry, every pair of its names that the key knows is a *true merge* (same
person) or a *false merge* (two people); *possible* merges are the pairs of one person's
names that X-Ray shows at all. Measured at three bounds per book (an early page, a middle one and the end),
with and without the address evidence (``xray_address``, the newest rule), interleaved in
one run. The figures are counts, not times: one round is enough (the builds are
deterministic).

Run: PYTHONPATH=$PWD .venv/bin/python tests/bench/bench_xray_merges.py
Smoke (one book, one bound): MARGIN_BENCH_SMOKE=1 … (the suite runs it).
"""

from __future__ import annotations

import itertools
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.bench.common import SMOKE, machine

BOOKS = Path(__file__).resolve().parents[1] / "fixtures" / "books"

KEY: dict[str, list[set[str]]] = {
    "pride_and_prejudice.epub": [
        {"Elizabeth Bennet", "Elizabeth", "Lizzy", "Eliza", "Miss Eliza", "Eliza Bennet"}
        | {"Miss Elizabeth Bennet", "Miss Eliza Bennet", "Miss Elizabeth", "Lizzie"},
        {"Jane Bennet", "Jane", "Miss Jane Bennet"},
        {"Mr. Bingley", "Bingley", "Charles", "Charles Bingley"},
        {"Caroline Bingley", "Miss Bingley", "Caroline"},
        {"Mrs. Hurst", "Louisa"},
        {"Mr. Hurst", "Hurst"},
        {"Mr. Darcy", "Darcy", "Fitzwilliam Darcy", "Mr. Fitzwilliam Darcy"},
        {"Miss Darcy", "Georgiana", "Georgiana Darcy", "Miss Georgiana Darcy"},
        {"Mrs. Bennet"},
        {"Mr. Bennet"},
        {"Charlotte Lucas", "Charlotte", "Miss Lucas", "Mrs. Collins"},
        {"Mr. Collins", "Collins", "William Collins"},
        {"Sir William Lucas", "Sir William"},
        {"Lady Lucas"},
        {"Maria Lucas", "Maria"},
        {"Lydia", "Lydia Bennet", "Mrs. Wickham"},
        {"Catherine", "Kitty", "Kitty Bennet"},
        {"Mary", "Mary Bennet"},
        {"Mr. Wickham", "Wickham", "George Wickham"},
        {"Lady Catherine", "Lady Catherine de Bourgh", "Lady Catherine De Bourgh"},
        {"Colonel Fitzwilliam"},
        {"Mrs. Gardiner"},
        {"Mr. Gardiner"},
        {"Mrs. Philips"},
        {"Mr. Philips"},
        {"Colonel Forster"},
        {"Mrs. Forster", "Harriet"},
        {"Miss de Bourgh", "Miss De Bourgh", "Anne"},
        {"Mrs. Jenkinson"},
        {"Mrs. Long"},
    ],
    "the_adventures_of_sherlock_holmes.epub": [
        {"Sherlock Holmes", "Holmes", "Mr. Holmes", "Mr. Sherlock Holmes"},
        {"Dr. Watson", "Watson"},
        {"the King of Bohemia", "King of Bohemia", "Count Von Kramm", "Majesty", "Ormstein"}
        | {"the Duke of Cassel-Felstein", "the King"},
        {"Irene Adler", "Miss Irene Adler", "Irene", "Miss Irene"},
        {"Godfrey Norton", "Mr. Godfrey Norton", "Norton"},
        {"Mary Jane"},
        {"Jabez Wilson", "Mr. Jabez Wilson", "Mr. Wilson", "Wilson"},
        {"John Clay", "Mr. John Clay", "Clay", "Vincent Spaulding", "Spaulding"},
        {"Duncan Ross", "Mr. Duncan Ross", "Ross"},
        {"Mr. Merryweather", "Merryweather"},
        {"Peter Jones", "Mr. Jones", "Jones"},
        {"Mary Sutherland", "Miss Mary Sutherland", "Miss Sutherland"},
        {"Hosmer Angel", "Mr. Hosmer Angel", "Mr. Angel", "Hosmer"},
        {"John Turner", "Mr. Turner", "Turner", "Mr. John Turner"},
        {"Miss Turner", "Alice Turner"},
        {"James McCarthy", "Mr. James McCarthy"},
        {"Charles McCarthy", "Mr. Charles McCarthy"},
        {"Inspector Lestrade", "Lestrade", "Mr. Lestrade", "Mr. Lestrade of Scotland Yard"},
        {"Neville St. Clair", "Mr. Neville St. Clair", "Neville", "Mr. Neville"},
        {"Mrs. St. Clair"},
        {"Isa Whitney", "Isa", "Mr. Isa Whitney"},
        {"Kate Whitney", "Kate"},
        {"Henry Baker", "Mr. Henry Baker", "Mr. Baker", "Baker"},
        {"Mrs. Henry Baker"},
        {"James Ryder", "Ryder", "Mr. Ryder", "John Robinson"},
        {"John Cobb"},
        {"Mr. Breckinridge", "Breckinridge"},
        {"Helen Stoner", "Miss Helen Stoner", "Helen", "Miss Stoner", "Stoner"},
        {"Dr. Grimesby Roylott", "Dr. Roylott", "Roylott", "Grimesby Roylott"},
        {"Victor Hatherley", "Mr. Hatherley", "Hatherley"},
        {"Colonel Lysander Stark", "Colonel Stark", "Lysander Stark"},
        {"Lord St. Simon", "Lord Robert St. Simon", "Robert St. Simon"},
        {"Hatty Doran", "Miss Hatty Doran"},
        {"Aloysius Doran", "Mr. Aloysius Doran"},
        {"Flora Millar", "Miss Flora Millar", "Flora"},
        {"Alexander Holder", "Mr. Holder", "Holder"},
        {"Arthur", "Arthur Holder"},
        {"Mary Holder", "Miss Holder"},
        {"Sir George Burnwell", "Sir George", "George Burnwell"},
        {"Violet Hunter", "Miss Hunter", "Hunter", "Miss Violet Hunter", "Violet"},
        {"Jephro Rucastle", "Mr. Rucastle", "Rucastle"},
        {"Mrs. Rucastle"},
        {"Alice", "Miss Alice", "Miss Rucastle", "Alice Rucastle"},
        {"Mrs. Toller"},
        {"Miss Stoper"},
        {"Mrs. Hudson", "Hudson"},
    ],
    "a_christmas_carol.epub": [
        {"Scrooge", "Ebenezer Scrooge", "Mr. Scrooge", "Ebenezer"},
        {"Marley", "Jacob Marley", "Jacob"},
        {"Bob Cratchit", "Bob", "Cratchit", "Mr. Cratchit", "Robert"},
        {"Mrs. Cratchit"},
        {"Tiny Tim", "Tim"},
        {"Fred"},
        {"Fezziwig", "Mr. Fezziwig", "old Fezziwig"},
        {"Mrs. Fezziwig"},
        {"Belle"},
        {"Martha", "Martha Cratchit"},
        {"Peter", "Peter Cratchit", "Master Peter Cratchit"},
        {"Belinda", "Belinda Cratchit"},
        {"Dick Wilkins", "Dick"},
        {"Topper"},
        {"Joe", "old Joe"},
        {"Mrs. Dilber"},
        {"Fan"},
        {"Ali Baba"},
        {"Robin Crusoe", "Robinson Crusoe"},
    ],
}
MIDDLE = {  # where a scene of several people talking had misled the address rule (Carol)
    "pride_and_prejudice.epub": 150,
    "the_adventures_of_sherlock_holmes.epub": 170,
    "a_christmas_carol.epub": 55,
}
EARLY = {
    "pride_and_prejudice.epub": 54,
    "the_adventures_of_sherlock_holmes.epub": 19,
    "a_christmas_carol.epub": 25,
}


def score(entries: list[set[str]], key: list[set[str]]) -> tuple[int, int, list[tuple[str, str]]]:
    """(true merges, possible merges, false merges) over the pairs of names the key knows."""
    owner = {name: i for i, cluster in enumerate(key) for name in cluster}
    shown = {n for names in entries for n in names if n in owner}
    possible = sum(1 for a, b in itertools.combinations(sorted(shown), 2) if owner[a] == owner[b])
    true, false = 0, []
    for names in entries:
        known = sorted(n for n in names if n in owner)
        for a, b in itertools.combinations(known, 2):
            if owner[a] == owner[b]:
                true += 1
            else:
                false.append((a, b))
    return true, possible, false


def main() -> None:
    os.environ["MARGIN_HOME"] = tempfile.mkdtemp(prefix="bench-xray-merges-")
    from core.books.importer import import_book
    from core.companions import xray, xray_merge
    from core.paths import resolve_paths
    from core.store.library import Library

    print(machine())
    library = Library.open(resolve_paths().ensure())
    address = xray_merge._merge_addressed
    books = list(KEY)[:1] if SMOKE else list(KEY)
    print(f"{'book':40} {'read_to':>7}  {'rule':8} {'true/possible':>14} {'false':>6}")
    for name in books:
        book = import_book(library, BOOKS / name).book
        bounds = [EARLY[name]] if SMOKE else [EARLY[name], MIDDLE[name], book.page_count]
        for bound in bounds:
            made: dict[str, list[set[str]]] = {}
            for rule in ("without", "with"):  # interleaved: the same pages scanned once
                xray_merge._merge_addressed = address if rule == "with" else _none  # type: ignore[assignment]
                try:
                    found = xray.build(library.db, book.id, bound)
                finally:
                    xray_merge._merge_addressed = address  # type: ignore[assignment]
                made[rule] = [set(e.names()) for e in found.entries if e.kind != "thing"]
                true, possible, false = score(made[rule], KEY[name])
                print(f"{name:40} {bound:>7}  {rule:8} {true:>6}/{possible:<7} {len(false):>6}")
                if rule == "with" and false:
                    print("    false merges:", "; ".join(f"{a} = {b}" for a, b in false))
            new = [n for n in made["with"] if n not in made["without"]]
            for names in new:
                print("    the address rule made:", ", ".join(sorted(names)))
    library.close()


def _none(*_args: object) -> None:
    return None


if __name__ == "__main__":
    main()
