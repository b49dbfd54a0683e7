"""What the bundle leaves out, for ``margin.spec`` (imported by it at build time only).

``drop`` filters the TOCs PyInstaller's Analysis made: the files matching ``UNUSED`` (Qt
plugins for other platforms and embedded devices, network-information, TLS and rarely used
image-format plugins, translations, sources and type stubs inside packages, the AVX2 copies
of rapidfuzz's extensions) and then the shared libraries that only those files needed (the
GTK platform-theme plugin alone pulled in cairo, pango, atk and gdk-pixbuf: 5 MB). A library
is removed only when a dropped file needed it and no kept file does, so a library loaded
through ctypes (needed by no file) is never removed by guess.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

# Each line: what it is, and why the app does not need it.
UNUSED = re.compile(
    "|".join(
        [
            # Qt translations except English: the app's own texts are English
            r"Qt6?/translations/(?!qtbase_en)",
            # QML, Quick, WebEngine, Multimedia, 3D, Charts, Designer: never imported (the
            # Multimedia library itself stays: QtTextToSpeech links it, for read aloud)
            r"/qml/",
            r"libQt6(Quick|Qml|WebEngine|Multimedia(?!\.so)|3D|Charts|Designer)",
            # read aloud's engines are the system's (speech-dispatcher, SAPI/WinRT, macOS):
            # Qt's test engine is for the tests only
            r"plugins/texttospeech/(lib)?qtexttospeech_mock",
            # PulseAudio's client (libQt6Multimedia links it; read aloud plays nothing itself):
            # the system's own must match its sound server, and without one QtTextToSpeech
            # does not load and read aloud says so. Its codecs (sndfile, FLAC, …) go with it
            r"^lib(pulse|pulsecommon-[\d.]+|sndfile|FLAC|vorbis|vorbisenc|opus|mpg123|mp3lame|ogg|asyncns)\.so",
            r"plugins/(sqldrivers|multimedia|qmltooling|position|sensors|webview|designer)/",
            # the GTK platform theme: pulls in GTK's stack; the palette is the app's own and
            # the system colour scheme comes from the XDG desktop portal plugin (kept)
            r"plugins/platformthemes/libqgtk3",
            # platforms for embedded devices and remote screens (the desktop uses xcb or
            # wayland; the smoke test uses offscreen), and their input and EGL plugins
            r"plugins/platforms/libq(eglfs|linuxfb|minimal|minimalegl|vkkhrdisplay|vnc)\.so",
            r"plugins/(egldeviceintegrations|generic)/",
            # network information and TLS: Qt's network stack is linked by QtPdf, but the
            # app never opens a Qt socket (Claude is reached through httpx)
            r"plugins/(networkinformation|tls)/",
            # image formats no book or comic uses (kept: jpeg, gif, svg, webp, tiff)
            r"plugins/imageformats/libq(icns|ico|tga|wbmp|pdf)\.so",
            # Wayland: compositor-side buffer integrations and shells other than xdg-shell
            r"wayland-graphics-integration-client/lib(dmabuf|drm-egl|shm-emulation|vulkan)-server",
            r"wayland-shell-integration/lib(fullscreen-shell-v1|ivi-shell|qt-shell|wl-shell-plugin)",
            # Cython sources, headers and type stubs inside packages
            r"^(?!PySide6/Qt/).*\.(c|h|hpp|pyx|pxd|pxi|pyi)$",
            # rapidfuzz: the app calls fuzz.ratio and partial_ratio_alignment only (compiled
            # build kept); its AVX2 copies fall back to the SSE2 build (same results), its
            # distance metrics and process helpers to their pure-Python versions
            r"^rapidfuzz/.*_avx2\.",
            r"^rapidfuzz/(distance/metrics_cpp|process_cpp_impl)\.",
        ]
    )
)


def _dest(entry: tuple[str, str, str]) -> str:
    return entry[0].replace("\\", "/")


def _is_library(dest: str) -> bool:
    """A shared library other files link to (not a Python extension, plugin or libpython)."""
    name = os.path.basename(dest)
    return (
        name.startswith("lib")
        and ".so" in name
        and "/plugins/" not in dest
        and not re.search(r"cpython-|abi3|^libpython", name)
    )


def _needed(src: str) -> set[str]:
    from PyInstaller.depend import bindepend

    try:
        return {os.path.basename(name) for name, _ in bindepend.get_imports(src)}
    except Exception:  # not an ELF file, or ldd failed: it needs nothing we know of
        return set()


def drop(
    binaries: Iterable[tuple[str, str, str]], datas: Iterable[tuple[str, str, str]]
) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]], list[str]]:
    """(binaries, datas, names of what was left out)."""
    binaries, datas = list(binaries), list(datas)
    gone = [e for e in binaries + datas if UNUSED.search(_dest(e))]
    keep_bin = [e for e in binaries if not UNUSED.search(_dest(e))]
    keep_dat = [e for e in datas if not UNUSED.search(_dest(e))]
    real = [e for e in keep_bin if e[2] != "SYMLINK"]
    wanted_by_gone: set[str] = set()
    for entry in gone:
        if entry[2] in ("BINARY", "EXTENSION"):
            wanted_by_gone |= _needed(entry[1])
    # a library is a candidate when a dropped file needed it; every other kept file is a
    # root, and whatever a root needs (ldd lists the whole chain) stays
    candidates = {
        os.path.basename(_dest(e))
        for e in real
        if _is_library(_dest(e)) and os.path.basename(_dest(e)) in wanted_by_gone
    }
    reached: set[str] = set()
    for entry in real:
        if os.path.basename(_dest(entry)) not in candidates:
            reached |= _needed(entry[1])
    orphans = candidates - reached
    keep_bin = [e for e in keep_bin if os.path.basename(_dest(e)) not in orphans]
    # a symbolic link (PyInstaller lists them with the data) to a removed library goes too
    present = {_dest(e) for e in keep_bin + keep_dat}

    def linked(entry: tuple[str, str, str]) -> bool:
        return entry[2] != "SYMLINK" or entry[1].replace("\\", "/") in present

    keep_bin = [e for e in keep_bin if linked(e)]
    keep_dat = [e for e in keep_dat if linked(e)]
    names = sorted({_dest(e) for e in gone} | orphans)
    return keep_bin, keep_dat, names
