"""The system's voices through Qt's text to speech (speech-dispatcher on Linux, SAPI/WinRT
on Windows, AVSpeechSynthesizer on macOS), one utterance at a time.

``Speaker`` turns the engine's states into four plain signals (started, word, finished,
failed) and its troubles into sentences for people: no engine installed, no voice for the
book's language, an engine that fails. ``MARGIN_SPEECH_ENGINE`` names the engine to load
(the tests use Qt's "mock" engine, which speaks to no sound card)."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from PySide6.QtCore import QLocale, QObject, Signal

if TYPE_CHECKING:
    from PySide6.QtTextToSpeech import QTextToSpeech, QVoice

log = logging.getLogger("margin.readaloud")

INSTALL_HINT = (
    "On Linux install speech-dispatcher and a voice (Debian and Ubuntu: "
    "sudo apt install speech-dispatcher speech-dispatcher-espeak-ng)."
)
NO_ENGINE = "Reading aloud needs a speech engine, and none was found. " + INSTALL_HINT
RATE_STEP = 0.1


def _tts_class() -> type[QTextToSpeech] | None:
    try:
        from PySide6.QtTextToSpeech import QTextToSpeech
    except ImportError:  # a PySide6 without its add-ons
        log.warning("QtTextToSpeech is not available", exc_info=True)
        return None
    return QTextToSpeech


class Speaker(QObject):
    started = Signal()  # an utterance began
    word = Signal(int, int)  # start and length in the utterance
    finished = Signal()  # the utterance was said to its end
    failed = Signal(str)  # the engine failed: the sentence for people

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tts: QTextToSpeech | None = None
        self._speaking = False
        self._stopping = False
        self.problem = ""  # why there is no speech, for people ("" when there is)
        self.rate = 0.0
        # the voice chosen (its name and language, kept in settings): used for that language
        self.preferred: tuple[str, str] = ("", "")
        self.note = ""  # said when reading starts: the chosen voice reads another language

    # the engine ------------------------------------------------------------------------

    def ready(self) -> bool:
        """Load the engine once; False (and ``problem`` says why) when there is none."""
        if self._tts is not None:
            return True
        tts_class = _tts_class()
        if tts_class is None:
            self.problem = NO_ENGINE
            return False
        engines = list(tts_class.availableEngines())
        wanted = os.environ.get("MARGIN_SPEECH_ENGINE", "")
        engines = [e for e in engines if e != "mock"] if not wanted else engines
        if (wanted and wanted not in engines) or not engines:
            log.warning("speech engines: %s (wanted %r)", engines, wanted)
            self.problem = NO_ENGINE
            return False
        tts = tts_class(wanted or engines[0], self)
        if tts.state() == tts_class.State.Error:
            log.warning("speech engine failed: %s", tts.errorString())
            self.problem = (
                f"The speech engine could not start ({tts.errorString() or 'no reason given'}). "
                + INSTALL_HINT
            )
            tts.deleteLater()
            return False
        tts.stateChanged.connect(self._state)
        tts.sayingWord.connect(lambda _w, _id, start, length: self.word.emit(start, length))
        tts.errorOccurred.connect(lambda _r, text: self._fail(text))
        self._tts = tts
        self._states = tts_class.State
        tts.setRate(self.rate)
        self.problem = ""
        return True

    def engine(self) -> QTextToSpeech | None:
        return self._tts

    def use_language(self, language: str) -> str:
        """Speak ``language`` (a BCP 47 tag such as "fr" or "en-GB"); "" when a voice for
        it exists (or the reader chose one: ``note`` then says it reads in another
        language), else the sentence saying there is none. No language (a book without
        one): the chosen voice's."""
        self.note = ""
        language = language or self.preferred[1]
        if not language or not self.ready():
            return ""
        tts = self._tts
        assert tts is not None
        wanted = QLocale(language.replace("_", "-"))
        locales = list(tts.availableLocales())
        same = [loc for loc in locales if loc.language() == wanted.language()]
        if not same:
            name = QLocale.languageToString(wanted.language())
            chosen = self._installed(*self.preferred)
            if chosen is not None:  # the reader chose a voice: it reads, and it is said
                tts.setVoice(chosen)
                self.note = (
                    f"There is no {name} voice installed: reading with "
                    f"{chosen.name()} ({QLocale.languageToString(chosen.locale().language())}), "
                    "the voice chosen under Read aloud › Voice."
                )
                return ""
            return (
                f"There is no {name} voice installed, so this book cannot be read aloud in "
                f"its language. Choose another voice under Read aloud › Voice, or install "
                f"one for {name} (on Linux: espeak-ng has most languages)."
            )
        exact = [loc for loc in same if loc.territory() == wanted.territory()]
        tts.setLocale((exact or same)[0])
        name, voice_language = self.preferred
        if name and QLocale(voice_language).language() == wanted.language():
            chosen = self._installed(name, voice_language)
            if chosen is not None and tts.voice().name() != name:
                tts.setVoice(chosen)  # the voice chosen before, for its language
            elif chosen is None:
                log.info("the voice %r chosen before is not installed", name)
        return ""

    def _installed(self, name: str, language: str) -> QVoice | None:
        """The installed voice ``name`` speaking ``language``, or None."""
        tts = self._tts
        if not name or tts is None:
            return None
        want = QLocale(language).language()
        # the current locale's voices first: every voice is a longer list to ask the engine for
        for voices in (lambda: list(tts.availableVoices()), self.voices):
            for voice in voices():
                if voice.name() == name and voice.locale().language() == want:
                    return voice
        return None

    def voices(self, language: str = "") -> list[QVoice]:
        """The voices for ``language`` (every locale of it); all voices when it has none
        or none is asked for."""
        tts = self._tts
        if tts is None:
            return []
        # (Qt takes a pointer: None asks for every locale's voices; the stubs say QLocale)
        every = list(tts.allVoices(None)) if hasattr(tts, "allVoices") else []  # type: ignore[arg-type]
        every = every or list(tts.availableVoices())  # Qt before 6.6: the locale's voices
        if language:
            want = QLocale(language.replace("_", "-")).language()
            same = [v for v in every if v.locale().language() == want]
            return same or every
        return every

    def current_voice(self) -> str:
        return str(self._tts.voice().name()) if self._tts is not None else ""

    def set_voice(self, voice: QVoice) -> tuple[str, str]:
        """Speak with ``voice`` from now on; its (name, language) to keep."""
        if self._tts is not None:
            self._tts.setVoice(voice)
        self.preferred = (str(voice.name()), str(voice.locale().bcp47Name()))
        return self.preferred

    def set_rate(self, rate: float) -> float:
        """Speed from -1 (slowest) to 1 (fastest); 0 is the voice's own."""
        self.rate = max(-1.0, min(1.0, round(rate, 2)))
        if self._tts is not None:
            self._tts.setRate(self.rate)
        return self.rate

    # speaking --------------------------------------------------------------------------

    def say(self, text: str) -> None:
        if not self.ready():
            self.failed.emit(self.problem)
            return
        assert self._tts is not None
        self._speaking = True
        self._tts.say(text)

    def pause(self) -> None:
        if self._tts is not None:
            self._tts.pause()

    def resume(self) -> None:
        if self._tts is not None:
            self._tts.resume()

    def stop(self) -> None:
        """Stop at once; no ``finished`` follows."""
        self._speaking = False
        if self._tts is not None:
            self._stopping = True
            try:
                self._tts.stop()
            finally:
                self._stopping = False

    def _state(self, state: object) -> None:
        states = self._states
        if state == states.Speaking and self._speaking:
            self.started.emit()
        elif state == states.Ready and self._speaking and not self._stopping:
            self._speaking = False
            self.finished.emit()
        elif state == states.Error:
            tts = self._tts
            self._fail(tts.errorString() if tts is not None else "")

    def _fail(self, text: str) -> None:
        log.warning("speech engine error: %s", text)
        self._speaking = False
        self.failed.emit(
            f"The speech engine failed ({text or 'no reason given'}). Reading aloud stopped."
        )
