"""The bundle's small BLAS (packaging/tinyblas.c) gives numpy's products as OpenBLAS does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))
import tinyblas  # noqa: E402

# each case: numpy's product of matrices of these shapes and layouts, in each number type
PRODUCTS = """
import sys
import numpy as np
rng = np.random.default_rng(7)
out = {}
for t in (np.float32, np.float64, np.complex64, np.complex128):
    for m, n, k in ((1, 1, 1), (5, 3, 7), (9, 37, 19), (64, 48, 70)):
        a = (rng.standard_normal((m, k)) + (1j * rng.standard_normal((m, k)) if t(0).imag is not None and np.iscomplexobj(t(0)) else 0)).astype(t)
        b = rng.standard_normal((k, n)).astype(t)
        v = rng.standard_normal(k).astype(t)
        key = f"{np.dtype(t).name}-{m}-{n}-{k}"
        out[key + "-ab"] = a @ b
        out[key + "-abT"] = a @ np.ascontiguousarray(b.T).T
        out[key + "-aFb"] = np.asfortranarray(a) @ b
        out[key + "-aaT"] = a @ a.T
        out[key + "-aTa"] = a.T @ a
        out[key + "-av"] = a @ v
        out[key + "-vaT"] = v @ a.T
        out[key + "-vv"] = np.array(v @ v)
        out[key + "-vdot"] = np.array(np.vdot(v, v))
        out[key + "-strided"] = a[::2] @ b[:, ::3]
        out[key + "-reversed"] = np.array(np.dot(v[::-1], v[::2].repeat(2)[: len(v)]))
np.savez(sys.argv[1], **out)
if len(sys.argv) > 2:
    np.linalg.inv(np.eye(2))
"""


@pytest.mark.skipif(
    sys.platform != "linux" or not shutil.which("cc"), reason="needs Linux and a C compiler"
)
def test_numpy_products_match_openblas(tmp_path: Path) -> None:
    lib = tinyblas.build("libtinyblas-test.so", tmp_path, optimise="-O1")
    script = tmp_path / "products.py"
    script.write_text(PRODUCTS)
    env = {**os.environ, "LD_PRELOAD": str(lib)}  # its names take the place of OpenBLAS's
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "tiny.npz"), "then-lapack"],
        env=env,
        capture_output=True,
        text=True,
    )
    exec(
        PRODUCTS.replace("sys.argv[1]", repr(str(tmp_path / "openblas.npz"))).replace(
            "len(sys.argv) > 2", "False"
        ),
        {},
    )
    ours, theirs = np.load(tmp_path / "tiny.npz"), np.load(tmp_path / "openblas.npz")
    assert len(ours.files) == 4 * 4 * 11
    wrong = [k for k in theirs.files if not np.allclose(ours[k], theirs[k], rtol=1e-4, atol=1e-4)]
    assert not wrong
    # LAPACK is not there: numpy.linalg stops with a message (so the products were ours)
    assert done.returncode != 0 and "Margin's bundle has no LAPACK (" in done.stderr


def test_only_numpys_openblas_is_replaced() -> None:
    assert tinyblas.OPENBLAS.search("numpy.libs/libscipy_openblas64_-4b78795a.so")
    assert not tinyblas.OPENBLAS.search("libscipy_openblas64_-4b78795a.so")  # the link to it
    assert not tinyblas.OPENBLAS.search("numpy.libs/libgfortran-040039e1.so.5.0.0")
