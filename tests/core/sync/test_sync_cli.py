"""``margin sync``: nothing is sent until the reader turns it on; then it syncs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from tests.fakes.webdav_server import WebDavServer

pytest.importorskip("wsgidav", reason="wsgidav (the dev extras) runs the WebDAV server")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_off_by_default_then_on(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    books_dir: Path,
) -> None:
    with WebDavServer(tmp_path / "dav", user="me", password="pw-123456") as dav:
        assert run(capsys, "import", str(books_dir / "metamorphosis.epub"))[0] == 0
        code, _, err = run(capsys, "sync")
        assert code == 1 and "off; nothing was sent" in err and dav.requests == 0
        monkeypatch.setenv("MARGIN_WEBDAV_PASSWORD", "pw-123456")
        code, out, err = run(capsys, "sync", "--setup", dav.url, "--user", "me", "--json")
        assert code == 0, err
        assert json.loads(out.split("\n", 1)[1])["sent"] >= 2
        code, out, _ = run(capsys, "sync")
        assert code == 0 and "Synced: sent 0 changes" in out
        assert run(capsys, "sync", "--off")[0] == 0
        before = dav.requests
        assert run(capsys, "sync")[0] == 1 and dav.requests == before


def test_bench_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.bench.bench_sync import main as bench

    assert bench(["--smoke"]) == 0
    assert "MISSED" not in capsys.readouterr().out
