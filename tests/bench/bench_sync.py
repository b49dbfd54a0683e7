"""Sync of 1,000 highlights between two data folders through a real WebDAV server (wsgidav
on loopback) — issue 42's goal: ≤ 2 s.

Each round makes two fresh data folders with the same book, adds N highlights (with notes)
on the first, then times: the first device's sync (finding the changes, sending one file),
the second's (reading it and writing every highlight), and a sync with nothing new on each
side (what the reader pays every time). Medians of the rounds.

    .venv/bin/python tests/bench/bench_sync.py [--rounds 5] [--count 1000] [--smoke]

``--smoke`` (1 round of 50 highlights) is what the test suite runs to keep this working.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.common import FIXTURES, machine, median, report  # noqa: E402


def one_round(count: int) -> dict[str, float]:
    from tests.core.sync.devices import Device
    from tests.fakes.webdav_server import WebDavServer

    with tempfile.TemporaryDirectory() as tmp, WebDavServer(Path(tmp) / "dav") as dav:
        a = Device(Path(tmp), "a", dav.url, "", "")
        b = Device(Path(tmp), "b", dav.url, "", "")
        try:
            book = FIXTURES / "books" / "alice_in_wonderland.epub"
            ida = a.import_book(book)
            b.import_book(book)
            lib = a.use()
            with a.db.atomic():
                for i in range(count):
                    lib.add_highlight(ida, 1 + i % 90, "Alice", note=f"note {i}", colour="blue")
            t0 = time.perf_counter()
            sent = a.sync().sent
            t1 = time.perf_counter()
            got = b.sync().received
            t2 = time.perf_counter()
            a.sync()
            b.sync()
            t3 = time.perf_counter()
            assert sent >= count and got >= count and len(b.highlights()) == count
            return {"send": t1 - t0, "receive": t2 - t1, "idle": (t3 - t2) / 2}
        finally:
            a.close()
            b.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    rounds, count = (1, 50) if args.smoke else (args.rounds, args.count)
    print(machine())
    runs = [one_round(count) for _ in range(rounds)]
    for key, goal in (("send", 2.0), ("receive", 2.0), ("idle", 1.0)):
        value = median([r[key] for r in runs])
        report(
            f"sync {count} highlights: {key}",
            f"{value * 1000:.0f} ms",
            f"≤ {goal} s",
            value <= goal,
        )
    total = median([r["send"] + r["receive"] for r in runs])
    report(
        f"sync {count} highlights: send + receive", f"{total * 1000:.0f} ms", "≤ 2 s", total <= 2.0
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
