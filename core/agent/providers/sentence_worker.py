"""The sentence worker: a worker process that reads a book's sentences ahead for passages
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
from collections.abc import Callable
from typing import Any

log = logging.getLogger("margin.agent.warmup")


FLAG = "--sentences-child"  # the bundle's launcher runs ``main`` for this argument


def encode_sentences(texts: list[str], send: Callable[[Any], None], batch: int) -> None:
    """The vectors of ``texts`` in ``batch``es, each sent back as (its first text's index,
    float16 bytes); nothing is sent when the encoder cannot be loaded. Ends quietly when
    the window stops listening."""
    try:
        from core.agent.providers.answer_sentence import _encoder, _short

        encoder = _encoder()
        if encoder is None:
            return
        import numpy as np

        for start in range(0, len(texts), batch):
            vectors = encoder.encode([_short(t) for t in texts[start : start + batch]])
            send((start, vectors.astype(np.float16).tobytes()))
    except (BrokenPipeError, EOFError, ConnectionResetError):
        pass  # the window stopped the reading ahead, or has gone


def main() -> int:
    """The worker process (``core.processes.PythonWorker``: ``python -m
    core.agent.providers.sentence_worker``, ``Margin --sentences-child`` in the bundle; no
    ``multiprocessing`` resource tracker beside it). Its job on stdin: the sentences, the
    batch and its window's pid; each batch's vectors on stdout as ``[first, base64]``."""
    import base64

    from core.processes import worker_send
    from core.store.owner import first_job

    try:
        job = first_job()
        if job is None:
            return 0
        encode_sentences(
            [str(t) for t in job["texts"]],
            lambda sent: worker_send([sent[0], base64.b64encode(sent[1]).decode("ascii")]),
            int(job["batch"]),
        )
    except (BrokenPipeError, ConnectionResetError, KeyboardInterrupt):
        pass
    except Exception:  # only a head start: a reply encodes what it needs itself
        log.debug("the sentence worker failed", exc_info=True)
        return 1
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
