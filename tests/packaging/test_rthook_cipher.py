"""The bundle's AES-CBC (packaging/rthook_cipher.py) against ``cryptography`` itself."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location(
    "rthook_cipher", ROOT / "packaging" / "rthook_cipher.py"
)
assert spec and spec.loader
hook = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hook)  # not frozen: nothing is installed


@pytest.mark.skipif(sys.platform != "linux", reason="the bundle's keyring cipher is Linux's")
@pytest.mark.parametrize("size", [16, 32])
def test_same_bytes_as_cryptography_both_ways(size: int) -> None:
    from cryptography.hazmat.backends import default_backend
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    key, iv = os.urandom(size), os.urandom(16)
    secret = "the key: sk-ant-ünïcode".encode().ljust(32, b"!")  # two blocks
    real = Cipher(algorithms.AES(key), modes.CBC(iv), default_backend())
    ours = hook.Cipher(hook.AES(key), hook.CBC(iv), None)
    encryptor = ours.encryptor()
    encrypted = encryptor.update(secret[:20]) + encryptor.update(secret[20:]) + encryptor.finalize()
    expected = real.encryptor()
    assert encrypted == expected.update(secret) + expected.finalize()
    decryptor = ours.decryptor()
    assert decryptor.update(encrypted) + decryptor.finalize() == secret
    with pytest.raises(ValueError, match="multiple of the block"):
        partial = ours.encryptor()
        partial.update(secret[:5])
        partial.finalize()


def test_secretstorage_imports_what_it_needs_from_the_hook() -> None:
    """With the hook's modules in place of ``cryptography``, secretstorage imports and
    encrypts a secret as it does with the real package."""
    ours = ("cryptography", "secretstorage")
    saved = {name: m for name, m in sys.modules.items() if name.split(".")[0] in ours}
    for name in saved:
        del sys.modules[name]
    try:
        hook.install()
        import secretstorage.util as util

        assert util.Cipher is hook.Cipher
        session = util.Session()
        session.object_path = "/org/freedesktop/secrets/session/1"
        session.aes_key = os.urandom(16)
        session.encrypted = True
        iv, encrypted = util.format_secret(session, b"secret", "text/plain")[1:3]
        decryptor = hook.Cipher(hook.AES(session.aes_key), hook.CBC(bytes(iv))).decryptor()
        padded = decryptor.update(bytes(encrypted)) + decryptor.finalize()
        assert padded[: -padded[-1]] == b"secret"
    finally:
        for name in [name for name in sys.modules if name.split(".")[0] in ours]:
            del sys.modules[name]
        sys.modules.update(saved)
