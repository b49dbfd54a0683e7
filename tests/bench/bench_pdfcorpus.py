"""Import pdf.js's test corpus (``test/pdfs``: real-world and hostile PDFs) the way a new user
would, and count what opens, what is refused with a clear message, and what crashes or hangs.

Fetch the corpus first (nothing is downloaded here and nothing lands in the repository): a
checkout of ``mozilla/pdf.js`` or a folder holding its ``test/pdfs`` and
``test/test_manifest.json``. Many corpus PDFs are only ``.link`` files (URLs): they are not
used. Protected PDFs get the password the manifest gives them.

Run (niced, it takes a while):
    nice python tests/bench/bench_pdfcorpus.py /path/to/pdf.js [--limit N] [--out result.json]
    MARGIN_ROOT=/tmp/old-tree python tests/bench/bench_pdfcorpus.py ...   (another version)

Each file is imported with ``import_book`` into one real library (a temporary folder), then
drawn as the window would (QtPdf loads it with the password and renders page 1 offscreen).
The files run in a child process; a file that kills it or stops it for ``--hang`` seconds
is a crash or a hang, and the next child goes on after it. Peak memory is the largest
resident size of the child and of its PDF workers. pdfium's own verdict (the file loads
with the password and has pages) says which files a viewer opens: the goal is that every
one of those opens in Margin.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import queue
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(os.environ.get("MARGIN_ROOT") or Path(__file__).resolve().parents[2])
sys.path.insert(0, str(ROOT))


def manifest_passwords(checkout: Path) -> dict[str, str]:
    try:
        entries = json.loads((checkout / "test" / "test_manifest.json").read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return {
        Path(e["file"]).name: e["password"]
        for e in entries
        if isinstance(e, dict) and e.get("password") and e.get("file")
    }


def pdfium_loads(path: Path, password: str | None) -> bool:
    import pypdfium2 as pdfium

    try:
        doc = pdfium.PdfDocument(str(path), password=password)
    except Exception:
        return False
    try:
        return len(doc) > 0
    finally:
        doc.close()


def qt_draws(path: Path, password: str | None) -> tuple[str, bool]:
    """('' when QtPdf loads the file as the page view does, else what went wrong; whether
    page 1 came out blank, as a viewer shows a page it cannot draw)."""
    from PySide6.QtCore import QSize
    from PySide6.QtPdf import QPdfDocument

    try:
        from core.books.pdf_doc import password_variants

        variants = password_variants(password)
    except ImportError:  # an older Margin (MARGIN_ROOT)
        variants = [password]
    doc = QPdfDocument()
    for variant in variants:
        if variant:
            doc.setPassword(variant)
        error = doc.load(str(path))
        if error != QPdfDocument.Error.IncorrectPassword:
            break
    if error != QPdfDocument.Error.None_:
        return f"QtPdf: {error.name}", False
    image = doc.render(0, QSize(300, 400))
    doc.close()
    return "", image.isNull()


def child(files: list[str], passwords: dict[str, str], home: str, view: bool) -> None:
    """Import each file and print one JSON line per file (flushed: the parent reads it)."""
    os.environ["MARGIN_HOME"] = home
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from core.books.importer import import_book
    from core.errors import MarginError
    from core.paths import resolve_paths
    from core.store.library import Library

    if view:
        from PySide6.QtGui import QGuiApplication

        app = QGuiApplication([])  # noqa: F841  (QtPdf renders with a GUI application)
    library = Library.open(resolve_paths())
    takes_password = "password" in inspect.signature(import_book).parameters
    for name in files:
        path = Path(name)
        password = passwords.get(path.name)
        print(json.dumps({"file": path.name, "start": True}), flush=True)
        started = time.perf_counter()
        row: dict[str, object] = {"file": path.name, "password": bool(password)}
        row["pdfium"] = pdfium_loads(path, password)
        try:
            if takes_password:
                result = import_book(library, path, password=password)
            else:  # an older Margin (MARGIN_ROOT) that has no passwords
                result = import_book(library, path)
            row["outcome"] = "opened"
            row["pages"] = result.book.page_count
            texts = library.page_texts(result.book.id)
            row["pages_without_text"] = sum(1 for _, t in texts if not t.strip())
            if view:
                problem, row["blank_page1"] = qt_draws(path, password)
                if problem:
                    row["outcome"], row["message"] = "not drawn", problem
        except MarginError as exc:
            row["outcome"], row["code"], row["message"] = "clear error", exc.code, exc.message
        except Exception as exc:  # the bench's point: an unexpected exception is a crash
            row["outcome"], row["message"] = "crash", f"{type(exc).__name__}: {exc}"
        row["seconds"] = round(time.perf_counter() - started, 3)
        row["rss_mb"] = round(_peak_mb(), 1)
        print(json.dumps(row), flush=True)
    library.close()
    from core.books.pdf import shutdown_workers

    shutdown_workers(wait=True)
    print(json.dumps({"done": True, "peak_mb": round(_peak_mb(), 1)}), flush=True)


def _peak_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, workers) / 1024


def _pump(stream: object, lines: queue.Queue[str | None]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        if line.strip():
            lines.put(line)
    lines.put(None)


def run(files: list[Path], passwords: dict[str, str], hang: float, view: bool) -> dict:
    rows: dict[str, dict] = {}
    peak = 0.0
    todo = [str(f) for f in files]
    with tempfile.TemporaryDirectory(prefix="margin-pdfcorpus-") as home:
        while todo:
            spec = json.dumps({"files": todo, "passwords": passwords, "home": home, "view": view})
            proc = subprocess.Popen(
                [sys.executable, __file__, "--child", spec],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
            current, finished = "", False
            assert proc.stdout is not None
            lines: queue.Queue[str | None] = queue.Queue()
            threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True).start()
            while True:
                try:
                    line = lines.get(timeout=hang)
                except queue.Empty:
                    proc.kill()
                    rows[current] = {"file": current, "outcome": "hang"}
                    break
                if line is None:
                    break
                row = json.loads(line)
                if row.get("done"):
                    finished = True
                    peak = max(peak, float(row["peak_mb"]))
                elif row.get("start"):
                    current = row["file"]
                else:
                    rows[row["file"]] = row
                    peak = max(peak, float(row["rss_mb"]))
                    if len(rows) % 50 == 0:
                        print(f"  {len(rows)} files…", file=sys.stderr, flush=True)
            proc.wait()
            done_names = set(rows)
            if current and current not in done_names:
                rows[current] = {"file": current, "outcome": "crash", "message": "process died"}
            todo = [f for f in todo if Path(f).name not in rows]
            if finished:
                break
    return {"rows": [rows[k] for k in sorted(rows)], "peak_mb": peak}


def summarise(result: dict, seconds: float) -> int:
    from tests.bench.common import machine, report

    rows = result["rows"]
    count = {
        o: sum(1 for r in rows if r.get("outcome") == o)
        for o in ("opened", "clear error", "not drawn", "crash", "hang")
    }
    loads = [r for r in rows if r.get("pdfium")]
    missed = [r for r in loads if r.get("outcome") != "opened"]
    scanned = sum(1 for r in rows if r.get("outcome") == "opened" and r.get("pages_without_text"))
    print(machine())
    print(f"{len(rows)} PDFs in {seconds:.0f} s; pdfium loads {len(loads)} of them")
    for outcome, n in count.items():
        print(f"  {outcome:<12} {n}")
    blank = sum(1 for r in rows if r.get("blank_page1"))
    print(f"  opened with some pages without text: {scanned}")
    print(f"  opened, first page drawn blank (a page pdfium cannot load): {blank}")
    codes: dict[str, int] = {}
    for r in rows:
        if r.get("outcome") == "clear error":
            codes[str(r.get("code"))] = codes.get(str(r.get("code")), 0) + 1
    print("  clear errors by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(codes.items())))
    for r in missed:
        print(
            f"  pdfium loads but not opened: {r['file']}: {r.get('outcome')} {r.get('message', '')}"
        )
    report(
        "PDFs pdfium loads that open", f"{len(loads) - len(missed)}/{len(loads)}", "all", not missed
    )
    report(
        "crashes and hangs",
        str(count["crash"] + count["hang"]),
        "0",
        count["crash"] + count["hang"] == 0,
    )
    report("peak memory", f"{result['peak_mb']:.0f} MB", "<= 500 MB", result["peak_mb"] <= 500)
    return 0 if not missed and not count["crash"] + count["hang"] else 1


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        spec = json.loads(sys.argv[2])
        child(spec["files"], spec["passwords"], spec["home"], spec["view"])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("checkout", type=Path, help="a pdf.js checkout (test/pdfs inside)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N files")
    parser.add_argument("--hang", type=float, default=120.0, help="seconds without progress")
    parser.add_argument("--no-view", action="store_true", help="skip the QtPdf drawing check")
    parser.add_argument("--out", type=Path, help="write every file's result as JSON here")
    args = parser.parse_args()
    folder = args.checkout / "test" / "pdfs"
    files = sorted(folder.glob("*.pdf"))
    if not files:
        print(f"No PDFs in {folder}: fetch mozilla/pdf.js first.", file=sys.stderr)
        return 2
    if args.limit:
        files = files[: args.limit]
    started = time.perf_counter()
    result = run(files, manifest_passwords(args.checkout), args.hang, not args.no_view)
    if args.out:
        args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return summarise(result, time.perf_counter() - started)


if __name__ == "__main__":
    sys.exit(main())
