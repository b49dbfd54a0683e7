"""Test isolation for the whole suite.

Every test gets its own MARGIN_HOME (data + config) in a temp folder, an in-memory keyring,
a socket guard that refuses any connection that is not to the loopback address, and a write
guard that refuses files outside the temp folders, so no test can touch the real user folders,
the real keyring or the network, or leave files behind. Every test process
sees the same fonts (DejaVu only), and the slow tests are run first.

``make test`` runs the suite in several processes (pytest-xdist): nothing here is shared
between them (each test has its own temp folders, each process its own Qt application, fake
servers listen on a free port, an Xvfb server picks a free display).
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["PYTHON_KEYRING_BACKEND"] = "tests.support.memory_keyring.MemoryKeyring"
for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "MARGIN_PROVIDER"):
    os.environ.pop(var, None)


def _find_fixtures() -> Path:
    """The fixture books and PDFs the tests read: the repository's own ``tests/fixtures``
    (their sources and licences are in its README), or MARGIN_FIXTURES to try another set."""
    if os.environ.get("MARGIN_FIXTURES"):
        return Path(os.environ["MARGIN_FIXTURES"])
    return Path(__file__).resolve().parent / "fixtures"


FIXTURES = _find_fixtures()

# The fonts every test sees: only DejaVu (fonts-dejavu-core, which .ci/system-packages
# installs), whatever else the machine has. GUI tests measure text, and a machine with
# Liberation (calibre pulls it in) would otherwise resolve "serif" to another font.
FONT_DIRS = (
    "/usr/share/fonts/truetype/dejavu",  # Debian, Ubuntu
    "/usr/share/fonts/dejavu",  # openSUSE
    "/usr/share/fonts/dejavu-serif-fonts",  # Fedora (one folder per family)
    "/usr/share/fonts/dejavu-sans-fonts",
    "/usr/share/fonts/dejavu-sans-mono-fonts",
    "/usr/share/fonts/TTF",  # Arch
)
TEST_FONTS = ("DejaVu Serif", "DejaVu Sans", "DejaVu Sans Mono")


def _pin_fonts() -> None:
    """A fontconfig file of the suite's own (read by Qt here and in the subprocesses the tests
    start): the system's rendering rules and aliases, the DejaVu folders, no other font folder
    (a rules file that adds folders or includes others is left out)."""
    dirs = [d for d in FONT_DIRS if any(Path(d).glob("DejaVu*.ttf"))]
    if not dirs:
        return  # the GUI tests then say which package to install (tests/desktop/conftest.py)
    folder = Path(tempfile.mkdtemp(prefix="margin-test-fonts-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    rules = sorted(Path("/etc/fonts/conf.d").glob("*.conf"))
    lines = [f"  <dir>{escape(d)}</dir>" for d in dirs]
    lines += [f"  <cachedir>{escape(str(folder / 'cache'))}</cachedir>"]
    lines += [
        f'  <include ignore_missing="yes">{escape(str(rule))}</include>'
        for rule in rules
        if not re.search(r"<(dir|include)\b", rule.read_text("utf-8", errors="replace"))
    ]
    config = folder / "fonts.conf"
    config.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n'
        "<fontconfig>\n" + "\n".join(lines) + "\n</fontconfig>\n",
        encoding="utf-8",
    )
    os.environ["FONTCONFIG_FILE"] = str(config)


_pin_fonts()

# Property tests use fixed examples in the normal run (a test run must not fail at random) and
# fresh random ones under `make soak`, which is where new cases get found.
from hypothesis import HealthCheck  # noqa: E402
from hypothesis import settings as _hypothesis_settings  # noqa: E402
from hypothesis.configuration import set_hypothesis_home_dir  # noqa: E402

# Hypothesis keeps a cache of the constants it finds in the code (even without a database):
# in a temp folder of the run's own, not .hypothesis/ in the project (the write guard below)
_HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="margin-test-hypothesis-")
atexit.register(shutil.rmtree, _HYPOTHESIS_HOME, ignore_errors=True)
set_hypothesis_home_dir(_HYPOTHESIS_HOME)

# No time limits in the normal run: on a loaded machine an example may take 250 ms and fail
# Hypothesis's 200 ms deadline or its too_slow check at random (speed is for tests/bench/)
_hypothesis_settings.register_profile(
    "margin",
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
_hypothesis_settings.register_profile("soak", derandomize=False, database=None)
_hypothesis_settings.load_profile("soak" if os.environ.get("MARGIN_SOAK") == "1" else "margin")
BOOKS = FIXTURES / "books"
PDFS = FIXTURES / "pdf"


# real processes and waits: started first, so that none is left running alone at the end
SLOW_FIRST = ("tests/reliability/", "tests/packaging/")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not item.nodeid.startswith(SLOW_FIRST))


def _is_loopback(address: object) -> bool:
    if isinstance(address, tuple) and address:
        host = str(address[0])
        return host in ("localhost", "::1") or host.startswith("127.")
    return True  # Unix sockets and the like are local.


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _guarded_connect(self: socket.socket, address: object) -> None:
    if not _is_loopback(address):
        raise OSError(f"tests may not reach the network (tried {address!r})")
    _real_connect(self, address)  # type: ignore[arg-type]


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    if not _is_loopback(address):
        raise OSError(f"tests may not reach the network (tried {address!r})")
    return _real_connect_ex(self, address)  # type: ignore[arg-type]


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def margin_home(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """A fresh data + config folder for every test; the real user folders are never used."""
    home = tmp_path / "margin-home"
    home.mkdir()
    monkeypatch.setenv("MARGIN_HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    from tests.support import memory_keyring

    memory_keyring.MemoryKeyring.clear()
    from core.api_key import forget_keyring_read

    forget_keyring_read()  # each test's keyring is read afresh
    # the sentence encoder's vectors take minutes of CPU per book in a background process:
    # only the tests marked deep_vectors ask for them (every other deep search is the hybrid)
    deep = request.node.get_closest_marker("deep_vectors") is not None
    monkeypatch.setenv("MARGIN_DEEP_VECTORS", "1" if deep else "0")
    # the background workers at the tests' own priority: the suite's parallel processes keep
    # both cores busy, and a worker niced to 10 gets a tenth of a core (minutes for a book)
    monkeypatch.setenv("MARGIN_WORKER_NICE", "0")
    # passages mode's reading ahead spawns a worker that loads the encoder (about 0.4 s of
    # CPU) whenever a window keeps a book open 2 s: only its own tests read ahead
    monkeypatch.setenv("MARGIN_READ_AHEAD", "off")
    yield home


@pytest.fixture(autouse=True)
def writes_stay_in_tmp() -> Iterator[None]:
    """A test writes only in its temp folders (or MARGIN_SHOTS): anything else is refused and
    fails the test (tests/support/writes.py)."""
    from tests.support.writes import GUARD

    GUARD.start()
    yield
    outside = GUARD.stop()
    if outside:
        pytest.fail("wrote outside its temp folder: " + "; ".join(dict.fromkeys(outside)))


@pytest.fixture
def books_dir() -> Path:
    return BOOKS


@pytest.fixture
def pdf_dir() -> Path:
    return PDFS


@pytest.fixture
def fake_anthropic() -> Iterator[object]:
    """A running fake Anthropic Messages server (see tests/fakes/anthropic_server.py)."""
    from tests.fakes.anthropic_server import FakeAnthropic

    with FakeAnthropic() as fake:
        yield fake


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """No worker process outlives the test process: background vectors and PDF text workers
    started by tests in this process are ended (an xdist worker exits without the
    interpreter's usual clean-up of daemon processes)."""
    if "core.search.vectors" in sys.modules:
        from core.search.vector_indexer import stop_all_now

        stop_all_now()
    if "core.books.pdf" in sys.modules:
        from core.books.pdf import shutdown_workers

        shutdown_workers()
