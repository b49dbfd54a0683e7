"""The errors of sync and of outside book sources, in words for people."""

from __future__ import annotations

from core.errors import MarginError


class SyncError(MarginError):
    """A sync server, a catalogue or an outside library cannot be used. Codes: ``unreachable``,
    ``timeout``, ``unauthorized``, ``server``, ``bad_response``, ``not_configured``,
    ``not_found``, ``too_large``, ``busy``, ``moved``."""
