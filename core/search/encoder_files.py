"""Where the sentence encoder's weights live (``core.search.encoder``), without numpy: the
window asks whether they are there when a question is asked, long before it needs them."""

from __future__ import annotations

import os
import sys
from pathlib import Path

WEIGHTS_FILE = "model.safetensors"
VOCAB_FILE = "vocab.txt"
ENV_FOLDER = "MARGIN_ENCODER_DIR"  # tests and benches may point at another folder


def model_folder() -> Path:
    """Where the converted weights live: ``$MARGIN_ENCODER_DIR``, else
    ``resources/models/minilm-l6-v2`` of the app (inside the bundle when packaged)."""
    override = os.environ.get(ENV_FOLDER)
    if override:
        return Path(override)
    bundle = getattr(sys, "_MEIPASS", None)
    root = Path(bundle) if bundle else Path(__file__).resolve().parents[2]
    return root / "resources" / "models" / "minilm-l6-v2"


def weights_present() -> bool:
    """Whether the encoder's weights and vocabulary are there (two file checks)."""
    folder = model_folder()
    return (folder / WEIGHTS_FILE).exists() and (folder / VOCAB_FILE).exists()
