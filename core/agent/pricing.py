"""Cost estimates for Claude models: defined in ``core.domain.pricing`` (the store adds up a
conversation's cost too); the agent and the window import them from here."""

from __future__ import annotations

from core.domain.pricing import PRICES, estimate_cost, price_for

__all__ = ["PRICES", "estimate_cost", "price_for"]
