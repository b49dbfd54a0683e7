"""Citations as the Messages API sends them, for the fake server's scripted replies."""

from __future__ import annotations

from typing import Any


def search_result_citation(
    source: str, title: str, cited_text: str, index: int = 0
) -> dict[str, Any]:
    """A ``search_result_location`` citation as the API sends it in a ``citations_delta``."""
    return {
        "type": "search_result_location",
        "source": source,
        "title": title,
        "cited_text": cited_text,
        "search_result_index": index,
        "start_block_index": 0,
        "end_block_index": 0,
    }
