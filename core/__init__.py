"""Margin's core: books, store, search, agent, settings and the CLI. No Qt here."""

__version__ = "0.1.0"  # keep in step with pyproject.toml (a test checks)
