"""The static embedding model behind search by meaning: WordLlama (MIT), whose weights ship
inside its wheel. No download, ever, and about 0.3 s to load; loaded the first time a vector
is needed (never on the window's start-up path). A text's vector is the mean of its tokens'
vectors (the first ``DIMS`` of the 256 the wheel ships), stored as int8 (``pack``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger("margin.search.embedding")

MODEL = "wordllama-l2-supercat"
WEIGHTS = "l2_supercat"
FULL_DIMS = 256  # the width of the weights the wheel ships
DIMS = 128  # kept per chunk (Matryoshka-trained: the first dimensions carry the most)
EMBED_CHARS = 2000  # WordLlama averages token vectors: more text only blurs the passage
BATCH = 64

_model: Any = None
_model_lock = threading.Lock()
_wide: Any = None  # the token vectors as float32, in the vectors worker alone (``widen``)


class VectorsUnavailable(RuntimeError):
    """The embedding model cannot be loaded (the package is missing or damaged)."""


def model_files() -> tuple[Path, Path]:
    """(weights, tokenizer) as the ``wordllama`` wheel ships them. The package itself is not
    imported: its start-up pulls in far more than two files need (50 MB more memory)."""
    import importlib.util
    import sys

    bundle = getattr(sys, "_MEIPASS", None)  # the packaged app carries just the two files
    spec = None if bundle else importlib.util.find_spec("wordllama")
    if bundle:
        folder = Path(bundle) / "wordllama"
    elif spec is None or not spec.submodule_search_locations:
        raise VectorsUnavailable("the wordllama package is not installed")
    else:
        folder = Path(next(iter(spec.submodule_search_locations)))
    # the packaged app ships the DIMS columns it uses (write_weights), half the wheel's file
    trimmed = folder / "weights" / f"{WEIGHTS}_{DIMS}.safetensors"
    return (
        trimmed if trimmed.exists() else folder / "weights" / f"{WEIGHTS}_{FULL_DIMS}.safetensors",
        folder / "tokenizers" / f"{WEIGHTS}_tokenizer_config.json",
    )


def write_weights(folder: Path) -> Path:
    """Write the first DIMS columns of the wheel's token vectors as ``folder``/
    ``l2_supercat_128.safetensors`` (the packaging step: the app reads no other column)."""
    import json

    source, _ = model_files()
    table = _read_table(source)
    data = table.astype("<f2").tobytes()
    header = json.dumps(
        {"embedding": {"dtype": "F16", "shape": list(table.shape), "data_offsets": [0, len(data)]}}
    ).encode("utf-8")
    header += b" " * (-len(header) % 8)  # the tensor starts 8-byte aligned
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{WEIGHTS}_{DIMS}.safetensors"
    target.write_bytes(len(header).to_bytes(8, "little") + header + data)
    return target


def _read_table(path: Path) -> Any:
    """The first DIMS columns of the token vectors (float16), read through a memory map so
    the full table is never copied into memory. A safetensors file is an 8-byte header
    length, a JSON header, then the raw tensor."""
    import json

    import numpy as np

    with path.open("rb") as file:
        size = int.from_bytes(file.read(8), "little")
        header = json.loads(file.read(size))
    info = next(v for k, v in header.items() if k != "__metadata__")
    if info["dtype"] != "F16" or len(info["shape"]) != 2 or info["shape"][1] < DIMS:
        raise VectorsUnavailable(f"unexpected weights in {path.name}: {info['dtype']}")
    begin, _ = info["data_offsets"]
    mapped = np.memmap(
        path, dtype=np.float16, mode="r", offset=8 + size + begin, shape=tuple(info["shape"])
    )
    table = np.ascontiguousarray(mapped[:, :DIMS])
    del mapped
    return table


def _load_model() -> tuple[Any, Any]:
    """(token vectors, tokenizer) of the model, loaded once."""
    global _model
    with _model_lock:
        if _model is None:
            try:
                from core.search.tokenizer import Tokenizer

                weights, vocabulary = model_files()
                _model = (_read_table(weights), Tokenizer(vocabulary))
            except Exception as exc:  # any failure means: no vectors
                log.warning("the embedding model could not be loaded", exc_info=True)
                raise VectorsUnavailable(str(exc)) from exc
        return _model


def embed(texts: Sequence[str]) -> np.ndarray:
    """Unit vectors (float32, one row per text) of ``texts``: the mean of their tokens'
    vectors, as WordLlama computes it, without padding every text to the longest one (three
    times faster on a book's chunks)."""
    import numpy as np

    table, tokenizer = _load_model()
    wide = _wide
    out = np.zeros((len(texts), DIMS), dtype=np.float32)
    for start in range(0, len(texts), BATCH):
        batch = [t[:EMBED_CHARS] for t in texts[start : start + BATCH]]
        rows = [(n, ids) for n, ids in enumerate(map(tokenizer.encode, batch)) if ids]
        if not rows:
            continue
        lengths = np.array([len(ids) for _, ids in rows])
        ids = np.concatenate([np.asarray(ids, dtype=np.int64) for _, ids in rows])
        np.clip(ids, 0, table.shape[0] - 1, out=ids)
        tokens = wide[ids] if wide is not None else table[ids].astype(np.float32)
        sums = np.add.reduceat(tokens, np.r_[0, np.cumsum(lengths)[:-1]], axis=0)
        out[[start + n for n, _ in rows]] = sums / lengths[:, None]
    return _unit(out)


def widen() -> None:
    """Keep the token vectors as float32 too (16 MB more): a book's chunks are embedded
    without converting each token's vector (the vectors worker, which embeds whole books;
    never the window, which embeds a question at a time). The same vectors either way."""
    global _wide
    import numpy as np

    table, _ = _load_model()
    with _model_lock:
        if _wide is None:
            _wide = table.astype(np.float32)


def _unit(matrix: np.ndarray) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32)


def pack(matrix: np.ndarray) -> bytes:
    """int8, each row scaled so its largest component is ±127 (cosine needs no scale)."""
    import numpy as np

    peak = np.abs(matrix).max(axis=1, keepdims=True)
    peak[peak == 0] = 1.0
    return np.round(matrix / peak * 127).astype(np.int8).tobytes()


def unpack(blob: bytes, dims: int) -> np.ndarray:
    import numpy as np

    return _unit(np.frombuffer(blob, dtype=np.int8).reshape(-1, dims).astype(np.float32))
