"""The reader's fixtures (the note dialog answered by the test) for the threads' tests."""

from tests.desktop.reader.conftest import note_dialog

__all__ = ["note_dialog"]
