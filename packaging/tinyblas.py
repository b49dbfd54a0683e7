"""A small BLAS in place of numpy's OpenBLAS in the bundle (Linux; used by ``margin.spec``).

numpy's wheel brings OpenBLAS (``numpy.libs/libscipy_openblas64_-*.so``, 22 MB: kernels for
every CPU family, LAPACK, threads) for its matrix products. The app multiplies float32
matrices of a few hundred rows (the MiniLM encoder, vector scores) and never calls LAPACK,
so ``tinyblas.c`` (70 KB) takes its place under the same name: the routines numpy links to,
a blocked float and double kernel (AVX2 + FMA when the processor has them), plain loops for
complex numbers, and LAPACK names that stop the program if called.
``tests/packaging/test_tinyblas.py`` checks numpy's products against OpenBLAS's.

Needs a C compiler; without one OpenBLAS ships and the build says so.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

SOURCE = Path(__file__).with_name("tinyblas.c")
OPENBLAS = re.compile(r"(^|/)numpy\.libs/(libscipy_openblas\w*-[0-9a-f]+\.so)$")


def build(soname: str, work: Path, optimise: str = "-O3") -> Path:
    """The library, compiled under ``work`` with the name numpy's modules link to."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise RuntimeError("no C compiler (cc)")
    work.mkdir(parents=True, exist_ok=True)
    out = work / soname
    subprocess.run(
        [
            compiler,
            optimise,
            "-fPIC",
            "-shared",
            f"-Wl,-soname,{soname}",
            "-o",
            str(out),
            str(SOURCE),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return out


def replace_openblas(
    binaries: list[tuple[str, str, str]], work: Path
) -> list[tuple[str, str, str]]:
    """``binaries`` with numpy's OpenBLAS swapped for the small library (unchanged, with a
    note, when it cannot be built)."""
    out = []
    for dest, src, kind in binaries:
        match = OPENBLAS.search(dest.replace("\\", "/"))
        if match and kind == "BINARY":
            try:
                small = build(match.group(2), work)
                print(f"BLAS: numpy's OpenBLAS replaced ({small.stat().st_size >> 10} KB)")
                src = str(small)
            except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:
                print(f"BLAS: OpenBLAS ships ({exc})")
        out.append((dest, src, kind))
    return out
