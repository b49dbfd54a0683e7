"""Run Debian's Orca with its debug file flushed every 0.2 s (Orca buffers it, and a killed
Orca would lose what it said). Run by the system's Python: /usr/bin/python3 orca_run.py ARGS."""

import runpy
import sys
import threading
import time


def flush() -> None:
    from orca import debug

    while True:
        time.sleep(0.2)
        out = getattr(debug, "debugFile", None)
        if out is not None:
            try:
                out.flush()
            except (ValueError, OSError):
                pass


sys.argv = ["orca", *sys.argv[1:]]
threading.Thread(target=flush, daemon=True).start()
runpy.run_path("/usr/bin/orca", run_name="__main__")
