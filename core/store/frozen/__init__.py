"""Frozen copies of the code old migrations run (``core.store.migrations``): each module
belongs to the steps it names and is never changed with the live code it was copied from.
They import nothing from Margin but each other, the error types and the stored format's
preset dictionary (tests/core/store/test_migrations_frozen.py)."""
