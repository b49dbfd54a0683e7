"""Entry point of the bundled app: the same ``margin`` command as the installed package.

``Margin`` alone opens the window; ``Margin book.epub`` imports the book if needed and opens
it (what a file manager does); ``Margin --version`` prints versions; the CLI commands work too.
``Margin --bundle-self-test [PDF]`` runs the bundle's own checks (packaging/bundle_selftest.py).
"""

from __future__ import annotations

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()  # the PDF and EPUB workers are multiprocessing ones
    if sys.argv[1:2] == ["--bundle-self-test"]:
        import bundle_selftest

        sys.exit(bundle_selftest.main(sys.argv[2:]))
    if sys.argv[1:2] == ["--vectors-child"]:  # the background vectors' worker process
        from core.search.vector_worker import main as vectors

        sys.exit(vectors())
    if sys.argv[1:2] == ["--sentences-child"]:  # passages mode's reading ahead
        from core.agent.providers.sentence_worker import main as sentences

        sys.exit(sentences())
    if sys.argv[1:2] == ["--speak-child"]:  # the speaking half of `margin speak`
        from desktop.readaloud.say import main as speak

        sys.exit(speak(sys.argv[2:]))
    from desktop.app import main

    sys.exit(main())
