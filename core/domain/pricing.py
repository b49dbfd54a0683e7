"""Rough cost estimates for Claude models (US dollars per million tokens, list prices).

Shown to the reader as an estimate; local servers and passages mode cost nothing here.
"""

from __future__ import annotations

from core.domain.messages import Usage

# (input, output) per million tokens; cache writes cost 1.25× input, cache reads 0.1× input.
PRICES: dict[str, tuple[float, float]] = {
    "opus-4-5": (5.0, 25.0),
    "opus-4-6": (5.0, 25.0),
    "opus-4": (15.0, 75.0),
    "sonnet": (3.0, 15.0),
    "haiku-4-5": (1.0, 5.0),
    "haiku-3-5": (0.8, 4.0),
    "haiku": (1.0, 5.0),
}


def price_for(model: str) -> tuple[float, float] | None:
    name = model.lower()
    for key, price in PRICES.items():
        if key in name:
            return price
    return None


def estimate_cost(model: str, usage: Usage) -> float | None:
    price = price_for(model)
    if price is None:
        return None
    inp, out = price
    total = (
        usage.input_tokens * inp
        + usage.output_tokens * out
        + usage.cache_write_tokens * inp * 1.25
        + usage.cache_read_tokens * inp * 0.1
    )
    return round(total / 1_000_000, 6)
