"""How KOReader names a document for progress sync (``KOSync:getDocumentDigest``).

Its default ("binary") is ``util.partialMD5``: the MD5 of 1 KiB samples read at offsets
``1024 << 2i`` for i = -1 … 10 — in LuaJIT ``lshift(1024, -2)`` is 0 (the shift count is
taken modulo 32), so the offsets are 0, 1 KiB, 4 KiB, 16 KiB, … 1 GiB — stopping at the
first offset past the end of the file. Its second mode ("file name") is the MD5 of the
file's name without its folder.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

SAMPLE = 1024


def sample_offsets() -> list[int]:
    return [0 if i < 0 else SAMPLE << (2 * i) for i in range(-1, 11)]


def partial_md5(path: Path | str) -> str:
    """KOReader's partial MD5 of the file at ``path``."""
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as f:
        for offset in sample_offsets():
            f.seek(offset)
            sample = f.read(SAMPLE)
            if not sample:
                break
            digest.update(sample)
    return digest.hexdigest()


def filename_md5(name: str) -> str:
    """KOReader's document id in its "file name" mode."""
    return hashlib.md5(Path(name).name.encode("utf-8"), usedforsecurity=False).hexdigest()


def password_key(password: str) -> str:
    """What KOReader sends as ``x-auth-key`` (and registers as the password): its MD5."""
    return hashlib.md5(password.encode("utf-8"), usedforsecurity=False).hexdigest()
