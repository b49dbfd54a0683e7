"""AES-CBC for the keyring in the bundle, from the OpenSSL library Python already ships.

The bundle's only user of the ``cryptography`` package (12 MB, a Rust build of its own
OpenSSL) is ``secretstorage`` (the keyring's Secret Service backend on Linux), and all it
calls is ``Cipher(algorithms.AES(key), modes.CBC(iv), default_backend())`` to encrypt and
decrypt a secret it pads itself. This runtime hook (``margin.spec`` leaves ``cryptography``
out) puts those three names in its place, backed by ``libcrypto`` (which ``_ssl`` and
``_hashlib`` link to) through ctypes. ``tests/packaging/test_rthook_cipher.py`` checks it
against ``cryptography`` itself.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

# ctypes is imported on first use, not at every start of the bundle

_lib: Any = None


def _crypto() -> Any:
    global _lib
    if _lib is None:
        import _hashlib  # noqa: F401  (links libcrypto: loaded before we ask for it by name)
        import ctypes

        here = os.path.join(getattr(sys, "_MEIPASS", ""), "libcrypto.so.3")
        lib = ctypes.CDLL(here if os.path.exists(here) else "libcrypto.so.3")
        lib.EVP_CIPHER_CTX_new.restype = ctypes.c_void_p
        lib.EVP_CIPHER_CTX_free.argtypes = [ctypes.c_void_p]
        for size in (128, 192, 256):
            getattr(lib, f"EVP_aes_{size}_cbc").restype = ctypes.c_void_p
        lib.EVP_CipherInit_ex.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_int]
        lib.EVP_CIPHER_CTX_set_padding.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.EVP_CipherUpdate.argtypes = [
            ctypes.c_void_p,
            ctypes.c_char_p,
            ctypes.POINTER(ctypes.c_int),
            ctypes.c_char_p,
            ctypes.c_int,
        ]
        lib.EVP_CipherFinal_ex.argtypes = [
            ctypes.c_void_p,
            ctypes.c_char_p,
            ctypes.POINTER(ctypes.c_int),
        ]
        _lib = lib
    return _lib


class AES:
    block_size = 128

    def __init__(self, key: bytes) -> None:
        if len(key) not in (16, 24, 32):
            raise ValueError(f"Invalid key size ({len(key) * 8}) for AES.")
        self.key = bytes(key)


class CBC:
    def __init__(self, initialization_vector: bytes) -> None:
        if len(initialization_vector) != 16:
            raise ValueError("Invalid IV size for CBC.")
        self.initialization_vector = bytes(initialization_vector)


class _Context:
    def __init__(self, key: bytes, iv: bytes, encrypt: bool) -> None:
        lib = _crypto()
        self._lib = lib
        self._ctx = lib.EVP_CIPHER_CTX_new()
        if not self._ctx:
            raise MemoryError("EVP_CIPHER_CTX_new failed")
        cipher = getattr(lib, f"EVP_aes_{len(key) * 8}_cbc")()
        if lib.EVP_CipherInit_ex(self._ctx, cipher, None, key, iv, int(encrypt)) != 1:
            raise ValueError("AES-CBC could not start")
        lib.EVP_CIPHER_CTX_set_padding(self._ctx, 0)  # the caller pads (as cryptography's)

    def update(self, data: bytes) -> bytes:
        import ctypes

        data = bytes(data)
        out = ctypes.create_string_buffer(len(data) + 16)
        written = ctypes.c_int(0)
        if self._lib.EVP_CipherUpdate(self._ctx, out, ctypes.byref(written), data, len(data)) != 1:
            raise ValueError("AES-CBC failed")
        return out.raw[: written.value]

    def finalize(self) -> bytes:
        import ctypes

        out = ctypes.create_string_buffer(16)
        written = ctypes.c_int(0)
        ok = self._lib.EVP_CipherFinal_ex(self._ctx, out, ctypes.byref(written))
        self._lib.EVP_CIPHER_CTX_free(self._ctx)
        self._ctx = None
        if ok != 1:
            raise ValueError(
                "The length of the provided data is not a multiple of the block length."
            )
        return out.raw[: written.value]


class Cipher:
    def __init__(self, algorithm: AES, mode: CBC, backend: object = None) -> None:
        if not isinstance(algorithm, AES) or not isinstance(mode, CBC):
            raise TypeError("only AES in CBC mode is available in this bundle")
        self.algorithm, self.mode = algorithm, mode

    def encryptor(self) -> _Context:
        return _Context(self.algorithm.key, self.mode.initialization_vector, True)

    def decryptor(self) -> _Context:
        return _Context(self.algorithm.key, self.mode.initialization_vector, False)


def install() -> None:
    """Register ``cryptography``'s names that ``secretstorage`` imports."""
    names = (
        "cryptography",
        "cryptography.hazmat",
        "cryptography.hazmat.backends",
        "cryptography.hazmat.primitives",
        "cryptography.hazmat.primitives.ciphers",
    )
    modules = {name: types.ModuleType(name) for name in names}
    for name, module in modules.items():
        module.__path__ = []  # a package: its children import
        sys.modules.setdefault(name, module)
    modules["cryptography.hazmat.backends"].default_backend = lambda: None  # type: ignore[attr-defined]
    ciphers = modules["cryptography.hazmat.primitives.ciphers"]
    ciphers.Cipher = Cipher  # type: ignore[attr-defined]
    ciphers.algorithms = types.SimpleNamespace(AES=AES)  # type: ignore[attr-defined]
    ciphers.modes = types.SimpleNamespace(CBC=CBC)  # type: ignore[attr-defined]


if getattr(sys, "frozen", False):
    install()
