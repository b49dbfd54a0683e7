"""Migrations run no live application code: ``core/store/migrations.py`` and the frozen
copies it runs (``core/store/frozen/``) import nothing from Margin but each other, the error
types and the stored pages' preset dictionary, so an old migration never changes meaning
when the models, the anchoring or the message classes change. Read from the source with the
import checker of tests/test_import_cycles.py (imports inside functions count)."""

from __future__ import annotations

from pathlib import Path

import peewee as pw

from core.store import models as m
from core.store.frozen import pages_v8
from core.store.migrations import SCHEMA_VERSION, current_version, migrate
from core.store.page_blocks import margin_page
from tests.support.import_graph import ROOT, Module, imports_of, modules_under

# what a migration may import from Margin: never logic that can change
ALLOWED = {
    "core.errors",  # the error types (what people are told), not behaviour
    "core.store.page_dict",  # part of the stored format: NEVER CHANGED (its docstring)
}


def migration_modules(root: Path = ROOT) -> list[Module]:
    everything = modules_under(root, "core")
    return [
        module
        for name, module in everything.items()
        if name == "core.store.migrations" or name.startswith("core.store.frozen")
    ]


def live_imports(modules: list[Module], known: set[str]) -> list[str]:
    """``module imports name`` for every import of Margin's own code not allowed."""
    own = {module.name for module in modules}
    wrong = []
    for module in modules:
        for name in sorted(imports_of(module, known)):
            if name not in own and name not in ALLOWED and name != "core":
                wrong.append(f"{module.name} imports {name}")
    return wrong


def test_migrations_import_no_live_code() -> None:
    modules = migration_modules()
    assert {module.name for module in modules} >= {
        "core.store.migrations",
        "core.store.frozen.schema_v1",
        "core.store.frozen.messages_v4",
        "core.store.frozen.pages_v8",
        "core.store.frozen.quotes_v15",
    }
    known = set(modules_under(ROOT, "core"))
    assert live_imports(modules, known) == []


def test_the_check_catches_a_migration_calling_live_code(tmp_path: Path) -> None:
    """A step that imports the anchoring (even inside the function) is named."""
    (tmp_path / "core" / "store" / "frozen").mkdir(parents=True)
    for package in ("core", "core/store", "core/store/frozen"):
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "core" / "errors.py").write_text("")
    (tmp_path / "core" / "store" / "anchoring.py").write_text("")
    (tmp_path / "core" / "store" / "migrations.py").write_text(
        "from core.errors import StorageError\nfrom core.store.frozen import old\n\n\n"
        "def _step(db):\n    from core.store.anchoring import backfill\n"
    )
    (tmp_path / "core" / "store" / "frozen" / "old.py").write_text("from ..anchoring import x\n")
    modules = migration_modules(tmp_path)
    known = set(modules_under(tmp_path, "core"))
    assert live_imports(modules, known) == [
        "core.store.frozen.old imports core.store.anchoring",
        "core.store.migrations imports core.store.anchoring",
    ]


def test_a_new_library_gets_the_models_tables() -> None:
    """The frozen schema 1 and the steps after it give every table and column the live
    models name (so the frozen copy is the schema the models expect)."""
    db = pw.SqliteDatabase(":memory:")
    db.register_function(m.page_text, "margin_text", 1, deterministic=True)
    db.register_function(m.unpack_chunk, "margin_chunk", 3, deterministic=True)
    db.register_function(margin_page, "margin_page", 2, deterministic=True)
    assert migrate(db) == 0 and current_version(db) == SCHEMA_VERSION
    for model in m.ALL_MODELS:
        table = model._meta.table_name
        columns = {row[1] for row in db.execute_sql(f'PRAGMA table_info("{table}")')}
        if table == "chunk_index":
            continue  # FTS5: its columns are its own
        wanted = {field.column_name for field in model._meta.sorted_fields}
        assert wanted <= columns, (table, wanted - columns)


def test_frozen_packing_reads_and_writes_as_the_live_format() -> None:
    """Pages and chunks packed by the frozen v8 copy are read by the live models, and a page
    the live code packs is read by the frozen copy (v15 reads pages with it)."""
    text = "One morning, when Gregor Samsa woke from troubled dreams.\n\nHe lay on his back."
    html = "<p>One morning</p>"
    for page_html in (None, "", html):
        stored = pages_v8.pack_page(text, page_html)
        assert stored == m.pack_page(text, page_html)
        assert m.page_text(stored) == text and pages_v8.page_text(stored) == text
    pages = pages_v8.chunk_pages(text, text)
    chunk = pages_v8.pack_chunk(text[13:60], pages)
    packed = m.pack_page(text, None)
    assert m.unpack_chunk(chunk, packed, packed) == text[13:60]
    assert pages_v8.unpack_text(pages_v8.pack_text(html, text)) == html
