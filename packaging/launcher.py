"""Entry point of the bundled app: the same ``margin`` command as the installed package.

``Margin`` alone opens the window; ``Margin book.epub`` imports the book if needed and opens
it (what a file manager does); ``Margin --version`` prints versions; the CLI commands work too.
"""

from __future__ import annotations

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()  # PDF text extraction uses a spawned worker process
    from desktop.app import main

    sys.exit(main())
