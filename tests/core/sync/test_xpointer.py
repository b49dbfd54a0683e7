"""XPointers as KOReader (crengine) writes them, read in real EPUBs."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.sync.xpointer import positions_of, split_xpointer


def test_split_reads_koreaders_forms() -> None:
    assert split_xpointer("/body/DocFragment[20]/body/p[22]/text().45") == (
        [("body", 1), ("DocFragment", 20), ("body", 1), ("p", 22), ("text()", 1)],
        45,
    )
    assert split_xpointer("/body/DocFragment[3]/body/div/h2")[1] == 0  # type: ignore[index]
    assert split_xpointer("69") is None  # a PDF page is not an XPointer
    assert split_xpointer("/body/p[x]") is None


@pytest.mark.parametrize("name", ["alice_in_wonderland.epub", "metamorphosis.epub"])
def test_every_text_node_round_trips(books_dir: Path, name: str) -> None:
    positions = positions_of(books_dir / name)
    assert len(positions.nodes) > 100
    for i in range(0, len(positions.nodes), 7):
        xp = positions.xpointer(i, 3)
        assert positions.node_at(xp) == (i, min(3, len(positions.nodes[i].text)))


def test_first_of_several_siblings_carries_its_index(books_dir: Path) -> None:
    positions = positions_of(books_dir / "alice_in_wonderland.epub")
    firsts = [n for n in positions.nodes if n.element.endswith("/p[1]")]
    assert firsts, "crengine writes p[1] when the parent has several p"
    # a pointer to an element is its first text; one that this reading lacks falls back
    element = firsts[0].element
    at = positions.node_at(element)
    assert at is not None and positions.nodes[at[0]].element.startswith(element)
    at2 = positions.node_at(element + "/span[9]/text().4")
    assert at2 is not None and positions.nodes[at2[0]].element.startswith(element)
    assert positions.node_at("/body/DocFragment[999]/body/p/text().0") is None
