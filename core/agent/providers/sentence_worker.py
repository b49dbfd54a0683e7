"""The sentence worker: a spawned process that reads a book's sentences ahead for passages
mode (``sentence_warmup.SentenceWarmup`` starts it and stores what it sends back).

The sentence encoder and numpy take 40–60 MB of a process's memory (issue 41: the window
with a 117-page PDF open rose from about 130 to 175–195 MB when the reading ahead ran in
it). Here they live only as long as the reading ahead, in a process of their own at a low
priority; the window keeps the vectors alone, as float16 bytes (768 a sentence). The first
question then loads the encoder in the window for its own words (the chat pane loads it
when the reader starts typing).
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("margin.agent.warmup")


def encode_sentences(texts: list[str], send: Any, batch: int) -> None:
    """In the worker process: the vectors of ``texts`` in ``batch``es, each sent back as
    (its first text's index, float16 bytes); nothing is sent when the encoder cannot be
    loaded. Ends quietly when the window stops listening."""
    from core.processes import lower_priority

    lower_priority()
    try:
        from core.agent.providers.answer_sentence import _encoder, _short

        encoder = _encoder()
        if encoder is None:
            return
        import numpy as np

        for start in range(0, len(texts), batch):
            vectors = encoder.encode([_short(t) for t in texts[start : start + batch]])
            send.send((start, vectors.astype(np.float16).tobytes()))
    except (BrokenPipeError, EOFError, ConnectionResetError):
        pass  # the window stopped the reading ahead, or has gone
    finally:
        send.close()
