"""Desktop integration files, icons, the spec, the install script, and the built bundle."""

from __future__ import annotations

import configparser
import os
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RES = ROOT / "resources"
BUNDLE = ROOT / "dist" / "Margin" / "Margin"


def test_desktop_entry_keys_and_mime_types() -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(RES / "linux" / "app.margin.Margin.desktop")
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application" and entry["Name"] == "Margin"
    assert entry["Exec"].endswith("%F") and entry["Icon"] == "app.margin.Margin"
    mimes = set(entry["MimeType"].rstrip(";").split(";"))
    assert {"application/epub+zip", "application/pdf", "text/plain", "text/markdown"} <= mimes


@pytest.mark.skipif(
    shutil.which("desktop-file-validate") is None, reason="desktop-file-validate is not installed"
)
def test_desktop_file_validate() -> None:
    done = subprocess.run(
        ["desktop-file-validate", str(RES / "linux" / "app.margin.Margin.desktop")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_metainfo_is_well_formed() -> None:
    root = ET.parse(RES / "linux" / "app.margin.Margin.metainfo.xml").getroot()
    assert root.tag == "component" and root.get("type") == "desktop-application"
    assert root.findtext("id") == "app.margin.Margin"
    assert root.find("launchable").text == "app.margin.Margin.desktop"  # type: ignore[union-attr]
    assert root.findtext("metadata_license") and root.findtext("summary")


@pytest.mark.skipif(shutil.which("appstreamcli") is None, reason="appstreamcli is not installed")
def test_appstreamcli_validate() -> None:
    done = subprocess.run(
        [
            "appstreamcli",
            "validate",
            "--no-net",
            "--pedantic",
            str(RES / "linux" / "app.margin.Margin.metainfo.xml"),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("size", [16, 24, 32, 48, 64, 128, 256, 512])
def test_png_icons_have_their_size(size: int) -> None:
    data = (RES / "icons" / f"margin-{size}.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (size, size)


def test_ico_and_icns_containers() -> None:
    ico = (RES / "icons" / "margin.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", ico[:6])
    assert (reserved, kind) == (0, 1) and count >= 5
    for i in range(count):
        _w, _h, _c, _r, _planes, _bits, length, offset = struct.unpack(
            "<BBBBHHII", ico[6 + 16 * i : 22 + 16 * i]
        )
        assert ico[offset : offset + 8] == b"\x89PNG\r\n\x1a\n" and offset + length <= len(ico)
    icns = (RES / "icons" / "margin.icns").read_bytes()
    assert icns[:4] == b"icns" and struct.unpack(">I", icns[4:8])[0] == len(icns)
    assert b"ic08" in icns and b"ic09" in icns


def test_spec_leaves_out_unused_qt_and_has_platform_sections() -> None:
    spec = (ROOT / "packaging" / "margin.spec").read_text()
    for module in ("QtWebEngineCore", "QtQml", "QtQuick", "QtMultimedia", "Qt3DCore"):
        assert f'"PySide6.{module}"' in spec
    assert 'bundle_identifier="app.margin.Margin"' in spec and "CFBundleDocumentTypes" in spec
    assert "margin.ico" in spec and "VSVersionInfo" in spec
    assert '"prompts"' in spec and '"resources"' in spec


def test_install_script_into_a_prefix(tmp_path: Path) -> None:
    fake_bundle = tmp_path / "bundle"
    fake_bundle.mkdir()
    (fake_bundle / "Margin").write_text("#!/bin/sh\n")
    (fake_bundle / "Margin").chmod(0o755)
    prefix = tmp_path / "prefix"
    env = {**os.environ, "PREFIX": str(prefix), "HOME": str(tmp_path)}
    done = subprocess.run(
        ["bash", str(ROOT / "packaging" / "install-linux.sh"), str(fake_bundle)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    desktop = (prefix / "share" / "applications" / "app.margin.Margin.desktop").read_text()
    assert f'Exec="{fake_bundle}/Margin" %F' in desktop
    assert (
        prefix / "share" / "icons" / "hicolor" / "256x256" / "apps" / "app.margin.Margin.png"
    ).exists()
    assert (prefix / "share" / "metainfo" / "app.margin.Margin.metainfo.xml").exists()
    assert (prefix / "bin" / "margin").is_symlink()
    done = subprocess.run(
        ["bash", str(ROOT / "packaging" / "uninstall-linux.sh")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0
    assert not (prefix / "share" / "applications" / "app.margin.Margin.desktop").exists()


def test_install_script_without_a_bundle_says_so(tmp_path: Path) -> None:
    env = {**os.environ, "PREFIX": str(tmp_path / "p")}
    done = subprocess.run(
        ["bash", str(ROOT / "packaging" / "install-linux.sh"), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 1 and "build it first" in done.stderr


def test_launcher_runs_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "launcher.py"), "--version"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout.startswith("Margin ")


@pytest.mark.skipif(not BUNDLE.exists(), reason="no bundle built (run `make package`)")
def test_built_bundle_smoke(tmp_path: Path) -> None:
    before = set(BUNDLE.parent.rglob("*"))
    env = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "QT_QPA_PLATFORM": "offscreen",
    }
    png = tmp_path / "shot.png"
    from tests.conftest import BOOKS

    book = BOOKS / "metamorphosis.epub"
    done = subprocess.run(
        [str(BUNDLE), "--open", str(book), "--page", "3", "--screenshot", str(png)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert png.stat().st_size > 10_000
    assert (tmp_path / "data" / "Margin" / "library.sqlite3").exists(), (
        "data goes to the user data folder"
    )
    assert set(BUNDLE.parent.rglob("*")) == before, "nothing is written inside the bundle"
    version = subprocess.run(
        [str(BUNDLE), "--version"], capture_output=True, text=True, env=env, timeout=60
    )
    assert "Qt (PySide6) 6.12" in version.stdout and "anthropic SDK 2." in version.stdout
