"""Property: two devices that each make 50 random edits offline converge after syncing,
and no note either of them wrote or edited is lost."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.sync.devices import Device
from tests.fakes.webdav_server import WebDavServer

pytest.importorskip("wsgidav", reason="wsgidav (the dev extras) runs the WebDAV server")

OPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "add", "edit", "edit", "delete", "highlight", "unhighlight"]),
        st.integers(min_value=0, max_value=1000),
    ),
    min_size=50,
    max_size=50,
)


def _edit(device: Device, ops: list[tuple[str, int]]) -> set[str]:
    """Apply ``ops``; returns the texts this device wrote that must survive."""
    lib = device.use()
    book = lib.list_books()[0].id
    written: dict[int, str] = {}
    for n, (op, pick) in enumerate(ops):
        notes = lib.list_notes(book)
        marks = lib.list_highlights(book)
        text = f"{device.name} {n}"
        if op == "add" or (op in ("edit", "delete") and not notes):
            written[lib.add_note(book, text).id] = text
        elif op == "edit":
            target = notes[pick % len(notes)]
            lib.update_note(target.id, text)
            written[target.id] = text
        elif op == "delete":
            target = notes[pick % len(notes)]
            lib.delete_note(target.id)
            written.pop(target.id, None)
        elif op == "highlight" or not marks:
            lib.add_highlight(book, 1, "Text", note=text)
        else:
            lib.delete_highlight(marks[pick % len(marks)].id)
    return set(written.values())


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(left=OPS, right=OPS)
def test_fifty_offline_edits_a_side_converge_keeping_every_note(
    books_dir: Path, left: list[tuple[str, int]], right: list[tuple[str, int]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp, WebDavServer(Path(tmp) / "dav") as dav:
        a = Device(Path(tmp), "a", dav.url, "", "")
        b = Device(Path(tmp), "b", dav.url, "", "")
        try:
            for device in (a, b):
                device.import_book(books_dir / "test_minimal_valid.epub")
            lib = a.use()
            for i in range(5):  # notes both devices start from
                lib.add_note(lib.list_books()[0].id, f"shared {i}")
            a.sync()
            b.sync()
            kept = _edit(a, left) | _edit(b, right)  # both offline
            a.sync()
            b.sync()
            a.sync()
            assert a.notes() == b.notes()
            assert a.highlights() == b.highlights()
            assert kept <= {text for text, _ in a.notes()}
        finally:
            a.close()
            b.close()
