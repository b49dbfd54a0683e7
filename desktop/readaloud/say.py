"""``python -m desktop.readaloud.say [--language TAG]``: the speaking half of ``margin
speak``. Reads "PAGE<TAB>TEXT" lines on stdin, says each with the system's voice, and prints
it as it starts; a clear sentence on stderr and exit status 1 when it cannot speak."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

from core.speech import Utterance


def _lines() -> Iterator[Utterance]:
    for line in sys.stdin:
        page, _, text = line.rstrip("\n").partition("\t")
        if text.strip():
            yield Utterance(int(page) if page.isdigit() else 0, 0, len(text), text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="margin speak")
    parser.add_argument("--language", default="")
    args = parser.parse_args(argv)
    import logging

    from PySide6.QtCore import QCoreApplication

    quiet = logging.getLogger("margin.readaloud")  # the reason is printed once, below
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False

    from desktop.readaloud.controller import ReadAloud

    app = QCoreApplication.instance() or QCoreApplication(sys.argv[:1])
    speech = ReadAloud()
    speech.set_source(None, args.language)
    failed: list[str] = []
    speech.message.connect(failed.append)
    speech.utteranceStarted.connect(lambda u: print(f"p. {u.page}: {u.text}", flush=True))
    speech.stateChanged.connect(lambda state: app.quit() if state == "stopped" else None)
    if speech.play_utterances(_lines()):
        app.exec()
    for text in failed:
        print(f"margin: {text}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
