"""A smaller ICU data library for the bundle (Linux; used by ``margin.spec``).

Qt's wheel ships ICU's whole data (``libicudata.so.73``, 31 MB), but QtCore is the only
library that calls ICU, and Margin reaches two of its services only: collation (``ucol_*``:
``QCollator``, the file dialog's sorting) and case mapping (``u_strToLower/Upper``). So the
data for services nothing calls is left out: display names of languages, regions, currencies,
units and time zones, number spell-out rules, transliterators, break iterators (with their
dictionaries), character names, and the legacy converters (``QStringDecoder`` for
Shift_JIS, KOI8-R, …: the app decodes books in Python and gives Qt Unicode text only) —
25 MB. Collation, the locale data, time-zone rules and the Unicode properties stay.
``packaging/bundle_selftest.py`` checks each kept service.

Needs ``icupkg`` (Debian: icu-devtools) and a C compiler; without them the full library
ships and the build says so.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

UNUSED_ITEMS = re.compile(
    r"^(lang|region|curr|unit|rbnf|translit|brkitr|zone)/|^unames\.icu$|\.cnv$|^cnvalias\.icu$"
)


def _run(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def _blob(library: Path) -> tuple[str, bytes]:
    """(symbol name, bytes) of the common data the library exports (``icudt73_dat``)."""
    symbols = _run("nm", "-D", "--defined-only", "-S", str(library))
    match = re.search(r"^([0-9a-f]+) ([0-9a-f]+) R (icudt\d+_dat)$", symbols, re.M)
    if match is None:
        raise RuntimeError(f"no ICU data symbol in {library.name}")
    address, size, symbol = int(match.group(1), 16), int(match.group(2), 16), match.group(3)
    sections = _run("readelf", "-S", "-W", str(library))
    for line in sections.splitlines():
        parts = line.replace("[ ", "[").split()
        if len(parts) > 5 and parts[1] == ".rodata":
            start, offset = int(parts[3], 16), int(parts[4], 16)
            data = library.read_bytes()
            return symbol, data[offset + address - start : offset + address - start + size]
    raise RuntimeError(f"no .rodata section in {library.name}")


def smaller_icu_data(library: Path, work: Path) -> tuple[Path, list[str]]:
    """(a library like ``library`` without the unused items, the items left out)."""
    if not all(shutil.which(tool) for tool in ("icupkg", "cc", "nm", "readelf")):
        raise RuntimeError("icupkg (icu-devtools), cc, nm or readelf is missing")
    symbol, blob = _blob(library)
    package = symbol.removesuffix("_dat") + "l"  # icudt73l: the items' prefix
    work.mkdir(parents=True, exist_ok=True)
    source, target = work / "full" / f"{package}.dat", work / "small" / f"{package}.dat"
    for folder in (source.parent, target.parent):
        folder.mkdir(exist_ok=True)
    target.unlink(missing_ok=True)
    source.write_bytes(blob)
    items = _run("icupkg", "-l", str(source)).split()
    unused = [item for item in items if UNUSED_ITEMS.search(item)]
    (work / "unused.txt").write_text("\n".join(unused) + "\n")
    _run("icupkg", "-r", str(work / "unused.txt"), str(source), str(target))
    assembly = work / "icudata.S"
    assembly.write_text(
        f"\t.section .rodata\n\t.globl {symbol}\n\t.type {symbol}, @object\n\t.balign 16\n"
        f'{symbol}:\n\t.incbin "{target}"\n\t.size {symbol}, . - {symbol}\n'
        '\t.section .note.GNU-stack,"",@progbits\n'
    )
    out = work / library.name
    _run("cc", "-shared", "-nostdlib", f"-Wl,-soname,{library.name}", "-o", str(out), str(assembly))
    return out, unused


def replace_icu_data(
    binaries: list[tuple[str, str, str]], work: Path
) -> list[tuple[str, str, str]]:
    """``binaries`` with Qt's ICU data library swapped for the smaller one (unchanged, with a
    note, when it cannot be made)."""
    out = []
    for dest, src, kind in binaries:
        if re.search(r"(^|/)libicudata\.so\.\d+$", dest.replace("\\", "/")) and kind == "BINARY":
            try:
                small, unused = smaller_icu_data(Path(src), work)
                print(
                    f"ICU data: left out {len(unused)} unused items ({small.stat().st_size >> 20} MB left)"
                )
                src = str(small)
            except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:
                print(f"ICU data: the full library ships ({exc})")
        out.append((dest, src, kind))
    return out
