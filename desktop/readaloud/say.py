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
    parser.add_argument("--rate", type=float, default=0.0)  # [read_aloud] in settings.toml
    parser.add_argument("--voice", default="")
    parser.add_argument("--voice-language", default="")
    args = parser.parse_args(argv)
    import logging

    from PySide6.QtCore import QCoreApplication, QLocale

    quiet = logging.getLogger("margin.readaloud")  # the reason is printed once, below
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False

    from desktop.readaloud.controller import ReadAloud

    app = QCoreApplication.instance() or QCoreApplication(sys.argv[:1])
    speech = ReadAloud()
    speech.set_rate(args.rate)
    speech.speaker.preferred = (args.voice, args.voice_language)
    speech.set_source(None, args.language)
    failed: list[str] = []
    speech.message.connect(failed.append)
    started: list[bool] = []

    def said(u: Utterance) -> None:
        if not started:  # first: the voice and speed (kept by the window's Read aloud menu)
            started.append(True)
            engine = speech.speaker.engine()
            if engine is not None:
                voice = engine.voice()
                language = QLocale.languageToString(voice.locale().language())
                print(f"Voice: {voice.name()} ({language}), speed {speech.speaker.rate:+.1f}")
        print(f"p. {u.page}: {u.text}", flush=True)

    speech.utteranceStarted.connect(said)
    speech.stateChanged.connect(lambda state: app.quit() if state == "stopped" else None)
    if speech.play_utterances(_lines()):
        note = speech.speaker.note  # no voice for the language: the chosen one reads
        if note and failed[:1] == [note]:
            print(f"margin: {failed.pop(0)}", file=sys.stderr)
        app.exec()
    for text in failed:
        print(f"margin: {text}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
