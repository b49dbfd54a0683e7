"""Issue 17, item 4: a server that echoes the API key in an error body never gets the key
written to disk — not into the database, the event logs or margin.log — whatever the key's
form. Real ``margin ask`` subprocesses against the fake server."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.paths import resolve_paths
from core.settings import Settings, save_settings
from tests.fakes.anthropic_server import FakeAnthropic, Reply
from tests.reliability.clirun import imported, run

KEYS = {
    "anthropic": "sk-ant-api03-" + "Q7w9ZtY2xK4m" * 4,
    "plain": "local-llm-key-7Hq2Vb",
    "hex": "0123456789abcdef0123456789abcdef",
    "base64": "Zm9vYmFyLzEyMz0+PT0=",
}


def everything_written(home: Path) -> bytes:
    data = b""
    for path in sorted(home.rglob("*")):
        if path.is_file():
            data += path.read_bytes()
    return data


@pytest.mark.parametrize(
    "shape",
    # two shapes in the normal run; all under make soak
    [
        s if s in ("anthropic", "plain") else pytest.param(s, marks=pytest.mark.soak)
        for s in sorted(KEYS)
    ],
)
def test_echoed_key_is_never_written(tmp_path: Path, books_dir: Path, shape: str) -> None:
    key = KEYS[shape]
    home = imported(tmp_path / "home", books_dir / "metamorphosis.txt")
    with FakeAnthropic() as fake:
        save_settings(
            resolve_paths(home),
            Settings(provider="anthropic", base_url=fake.url, model="claude-test"),
        )
        fake.add(Reply.error(400, "invalid_request_error", f"bad key {key} (x-api-key: {key})"))
        bad = run(home, "ask", "1", "First?", key=key)
        assert bad.returncode == 1 and "[redacted]" in bad.stderr and key not in bad.stderr
        # a 500 without an error type, echoing the key (the SDK retries it twice, at once:
        # the server asks for no wait)
        fake.add(
            *[Reply.error(500, "", f"upstream said {key}", retry_after=0.01) for _ in range(3)]
        )
        failed = run(home, "ask", "1", "Second?", key=key)
        assert failed.returncode == 1 and key not in failed.stderr
        assert all(
            key in (r.headers.get("x-api-key", "") + r.headers.get("authorization", ""))
            for r in fake.message_requests
        )
    written = everything_written(home)
    assert (home / "logs" / "margin.log").exists() and list((home / "events").iterdir())
    assert key.encode() not in written
    con = sqlite3.connect(home / "library.sqlite3")
    errors = [e for (e,) in con.execute("SELECT error_message FROM run ORDER BY id")]
    con.close()
    assert len(errors) == 2 and "[redacted]" in errors[0]


@pytest.mark.parametrize("shape", sorted(KEYS))
def test_log_never_shows_a_registered_key_in_messages_or_tracebacks(
    tmp_path: Path, shape: str
) -> None:
    """The log filter knows the configured key itself (any form), and cleans tracebacks too:
    an exception's text may quote a server that echoed the key."""
    import logging

    from core.log import register_secret, setup_logging

    key = KEYS[shape]
    paths = resolve_paths(tmp_path / "logs-home")
    paths.ensure()
    handler = setup_logging(paths)
    register_secret(key)
    log = logging.getLogger("margin.test")
    log.warning("server said %s", key)
    try:
        raise RuntimeError(f"upstream echoed {key}")
    except RuntimeError:
        log.exception("it failed")
    handler.flush()
    text = (paths.logs / "margin.log").read_text("utf-8")
    assert "server said [redacted]" in text and "upstream echoed [redacted]" in text
    assert key not in text
