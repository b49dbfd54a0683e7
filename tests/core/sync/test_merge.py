from __future__ import annotations

from core.sync.merge import Version, resolve


def test_edit_from_the_local_version_wins_without_a_copy() -> None:
    local = Version(3, "a", data={"text": "x"})
    remote = Version(4, "b", base=local.clock, data={"text": "y"})
    assert resolve(local, remote) == (remote, None)
    older = Version(2, "b", data={"text": "old"})
    mine = Version(5, "a", base=older.clock, data={"text": "new"})
    assert resolve(mine, older) == (mine, None)


def test_concurrent_edits_keep_both_the_same_way_on_each_side() -> None:
    a = Version(5, "a", base="2.z", data={"text": "from a"})
    b = Version(5, "b", base="2.z", data={"text": "from b"})
    assert resolve(a, b) == (b, a)
    assert resolve(b, a) == (b, a)


def test_a_concurrent_delete_never_takes_an_edit_with_it() -> None:
    edit = Version(3, "a", base="1.z", data={"text": "kept"})
    gone = Version(9, "b", base="1.z", deleted=True)
    assert resolve(edit, gone) == (gone, edit)
    assert resolve(gone, edit) == (gone, edit)
    both = Version(9, "a", base="1.z", deleted=True)
    assert resolve(both, gone)[1] is None
