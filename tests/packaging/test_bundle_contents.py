"""What the bundle leaves out (packaging/bundle_prune.py) and its size once built."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "dist" / "Margin"
MAX_MB = 180

sys.path.insert(0, str(ROOT / "packaging"))
from bundle_prune import UNUSED, drop  # noqa: E402


@pytest.mark.parametrize(
    "dest",
    [
        "PySide6/Qt/plugins/platformthemes/libqgtk3.so",
        "PySide6/Qt/plugins/platforms/libqeglfs.so",
        "PySide6/Qt/plugins/platforms/libqvnc.so",
        "PySide6/Qt/plugins/tls/libqopensslbackend.so",
        "PySide6/Qt/plugins/networkinformation/libqglib.so",
        "PySide6/Qt/plugins/imageformats/libqtga.so",
        "PySide6/Qt/translations/qtbase_de.qm",
        "selectolax/lexbor.c",
        "selectolax/lexbor.pyi",
        "rapidfuzz/fuzz_cpp_avx2.cpython-313-x86_64-linux-gnu.so",
        "rapidfuzz/distance/metrics_cpp.cpython-313-x86_64-linux-gnu.so",
        "rapidfuzz/process_cpp_impl.cpython-313-x86_64-linux-gnu.so",
        "PySide6/Qt/plugins/texttospeech/libqtexttospeech_mock.so",
        "PySide6/Qt/plugins/multimedia/libffmpegmediaplugin.so",
        "PySide6/Qt/lib/libQt6MultimediaWidgets.so.6",
        "PySide6/Qt/lib/libQt6MultimediaQuick.so.6",
        "libpulse.so.0",
        "libpulsecommon-16.1.so",
        "libsndfile.so.1",
        "libFLAC.so.12",
        "libmp3lame.so.0",
    ],
)
def test_unused_files_are_left_out(dest: str) -> None:
    assert UNUSED.search(dest)


@pytest.mark.parametrize(
    "dest",
    [
        "PySide6/Qt/plugins/platforms/libqxcb.so",
        "PySide6/Qt/plugins/platforms/libqwayland.so",
        "PySide6/Qt/plugins/platforms/libqoffscreen.so",
        "PySide6/Qt/plugins/platformthemes/libqxdgdesktopportal.so",
        "PySide6/Qt/plugins/platforminputcontexts/libcomposeplatforminputcontextplugin.so",
        "PySide6/Qt/plugins/platforminputcontexts/libibusplatforminputcontextplugin.so",
        "PySide6/Qt/plugins/wayland-shell-integration/libxdg-shell.so",
        "PySide6/Qt/plugins/imageformats/libqjpeg.so",
        "PySide6/Qt/plugins/imageformats/libqwebp.so",
        "PySide6/Qt/plugins/imageformats/libqsvg.so",
        "PySide6/Qt/plugins/iconengines/libqsvgicon.so",
        "PySide6/Qt/translations/qtbase_en.qm",
        "PySide6/Qt/lib/libQt6Network.so.6",
        "rapidfuzz/fuzz_cpp.cpython-313-x86_64-linux-gnu.so",
        "rapidfuzz/distance/_initialize_cpp.cpython-313-x86_64-linux-gnu.so",
        "selectolax/lexbor.cpython-313-x86_64-linux-gnu.so",
        "PySide6/QtTextToSpeech.abi3.so",
        "PySide6/Qt/lib/libQt6TextToSpeech.so.6",
        "PySide6/Qt/lib/libQt6Multimedia.so.6",  # QtTextToSpeech links it
        "PySide6/Qt/plugins/texttospeech/libqtexttospeech_speechd.so",
    ],
)
def test_what_the_app_uses_is_kept(dest: str) -> None:
    assert not UNUSED.search(dest)


@pytest.mark.skipif(sys.platform != "linux", reason="reads ELF dependencies with ldd")
def test_libraries_only_a_dropped_plugin_needed_go_with_it(tmp_path: Path) -> None:
    """The GTK theme plugin needs libgtk; a library nothing else needs goes, one a kept
    file needs stays, and one no file needs (ctypes) is never removed by guess."""
    import PySide6

    qt = Path(PySide6.__file__).parent / "Qt"
    gtk = qt / "plugins" / "platformthemes" / "libqgtk3.so"
    if not gtk.exists():
        pytest.skip("this PySide6 has no GTK platform-theme plugin")
    from PyInstaller.depend import bindepend

    needs = {os.path.basename(n): p for n, p in bindepend.get_imports(str(gtk)) if p}
    only_gtk = next(n for n in ("libcairo.so.2", "libpango-1.0.so.0") if n in needs)
    core = qt / "lib" / "libQt6Core.so.6"
    binaries = [
        ("PySide6/QtCore.abi3.so", str(qt.parent / "QtCore.abi3.so"), "BINARY"),
        ("PySide6/Qt/plugins/platformthemes/libqgtk3.so", str(gtk), "BINARY"),
        ("PySide6/Qt/lib/libQt6Core.so.6", str(core), "BINARY"),
        (only_gtk, needs[only_gtk], "BINARY"),
        ("libglib-2.0.so.0", needs["libglib-2.0.so.0"], "BINARY"),
        ("libpdfium.so", str(tmp_path / "libpdfium.so"), "BINARY"),
        ("libQt6Core.so.6", "PySide6/Qt/lib/libQt6Core.so.6", "SYMLINK"),
    ]
    kept, _datas, left_out = drop(binaries, [])
    names = [entry[0] for entry in kept]
    assert "PySide6/Qt/plugins/platformthemes/libqgtk3.so" in left_out and only_gtk in left_out
    assert names == [
        "PySide6/QtCore.abi3.so",
        "PySide6/Qt/lib/libQt6Core.so.6",
        "libglib-2.0.so.0",
        "libpdfium.so",
        "libQt6Core.so.6",
    ]


@pytest.mark.skipif(not DIST.exists(), reason="no bundle built (run `make package`)")
def test_built_bundle_size() -> None:
    files = [p for p in DIST.rglob("*") if p.is_file() and not p.is_symlink()]
    sizes = sorted(((p.stat().st_size, p) for p in files), reverse=True)
    total = sum(size for size, _ in sizes) / 2**20
    largest = "\n".join(f"{s / 2**20:6.1f} MB  {p.relative_to(DIST)}" for s, p in sizes[:20])
    assert total <= MAX_MB, f"the bundle is {total:.0f} MB (at most {MAX_MB}):\n{largest}"
    left = [p.relative_to(DIST) for p in files if p.suffix in {".c", ".pyx", ".pyi", ".h"}]
    assert not left, f"sources and stubs in the bundle: {left[:10]}"


@pytest.mark.skipif(not DIST.exists() or sys.platform != "linux", reason="no bundle built")
def test_built_bundle_speaks_through_speech_dispatcher_only() -> None:
    """Read aloud's Qt parts are in the bundle (its module, library and speech-dispatcher
    plugin), and nothing else of the add-ons: no test engine, no multimedia plugins."""
    files = {str(p.relative_to(DIST)).replace("\\", "/") for p in DIST.rglob("*")}
    assert any(
        f.endswith("PySide6/Qt/plugins/texttospeech/libqtexttospeech_speechd.so") for f in files
    )
    assert any(f.endswith("PySide6/Qt/lib/libQt6TextToSpeech.so.6") for f in files)
    assert not [f for f in files if "qtexttospeech_mock" in f or "plugins/multimedia/" in f]
    assert not [f for f in files if re.search(r"libQt6(Quick|Qml|Multimedia\w)", f)]


ICU_CHECK = """
from PySide6.QtCore import QCollator, QLocale
print(QCollator(QLocale("sv_SE")).compare("ö", "z") > 0, QCollator(QLocale("de_DE")).compare("ö", "z") < 0,
      QLocale("tr_TR").toUpper("i"), QLocale("en_US").toUpper("ß"))
"""


@pytest.mark.skipif(
    sys.platform != "linux" or not all(shutil.which(t) for t in ("icupkg", "cc", "nm", "readelf")),
    reason="needs icupkg (icu-devtools), cc and binutils",
)
def test_smaller_icu_data_keeps_what_qt_calls(tmp_path: Path) -> None:
    """Qt with the smaller ICU data library collates and maps case as with the full one;
    the same check fails when the collation data is left out too."""
    import re
    import subprocess

    import icu_subset
    import PySide6

    full = Path(PySide6.__file__).parent / "Qt" / "lib" / "libicudata.so.73"
    small, unused = icu_subset.smaller_icu_data(full, tmp_path / "small")
    assert small.stat().st_size < full.stat().st_size * 0.3 and len(unused) > 2500
    assert not [u for u in unused if u.startswith("coll/") or u in ("ucase.icu", "uprops.icu")]

    def run(library: Path | None) -> str:
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
        if library is not None:
            env["LD_PRELOAD"] = str(library)  # same soname: QtCore's ICU loads this one
        done = subprocess.run(
            [sys.executable, "-c", ICU_CHECK], capture_output=True, text=True, env=env, timeout=60
        )
        return done.stdout.strip()

    assert run(None) == "True True İ SS"
    assert run(small) == run(None)
    original = icu_subset.UNUSED_ITEMS
    try:
        icu_subset.UNUSED_ITEMS = re.compile(r"^coll/|\.cnv$")
        broken, _ = icu_subset.smaller_icu_data(full, tmp_path / "broken")
    finally:
        icu_subset.UNUSED_ITEMS = original
    assert run(broken) != run(None)
