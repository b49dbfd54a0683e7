"""A chunk cut into the windows the sentence encoder reads whole (``sentence_vectors``).

The encoder reads at most 254 word pieces of a text; a chunk is often longer (Alice: half of
its chunks). So each chunk is cut into windows of whole sentences, each of at most ``size``
word pieces, in order, that together hold every word of the chunk; a sentence longer than a
window is cut between words. A window may start with the last sentences of the one before
(``overlap`` word pieces at most), so a thought that straddles a cut is also read whole.
A chunk is ranked by its best window (``sentence_vectors.SentenceVectors.cosines``).
"""

from __future__ import annotations

from collections.abc import Callable

from core.search.sentences import sentences


def _units(text: str, count: Callable[[str], int], size: int) -> list[tuple[str, int]]:
    """The sentences of ``text`` with their word pieces; one longer than ``size`` is cut
    between words into parts of at most ``size`` (a single word longer stays whole: the
    encoder reads its first pieces)."""
    units: list[tuple[str, int]] = []
    for sentence in sentences(text):
        n = count(sentence)
        if n <= size:
            units.append((sentence, n))
            continue
        words: list[str] = []
        held = 0
        for word in sentence.split():
            pieces = count(word)
            if words and held + pieces > size:
                units.append((" ".join(words), held))
                words, held = [], 0
            words.append(word)
            held += pieces
        if words:
            units.append((" ".join(words), held))
    return units


def windows(
    text: str, count: Callable[[str], int], size: int, overlap: int = 0, *, head: bool = False
) -> list[str]:
    """The windows of ``text``: runs of whole sentences of at most ``size`` word pieces
    (``count`` tells how many a text has), in order, covering every sentence; each after
    the first starts with the previous window's last sentences that fit in ``overlap``
    pieces (never all of them: a window always adds something new). A text with no words
    is one window of itself. ``head``: the first window is the whole text, of which the
    encoder reads the first ``size`` pieces (as it read a chunk before windows), and the
    windows after it start where that head ends (with the overlap)."""
    units = _units(text, count, size)
    if not units:
        return [text]
    if not head:
        return _packed(units, size, overlap)
    held = 0
    inside = 0  # units wholly within the head
    while inside < len(units) and held + units[inside][1] <= size:
        held += units[inside][1]
        inside += 1
    if inside == len(units):
        return [" ".join(u[0] for u in units)]
    start = inside
    carried = 0
    while start > 1 and carried + units[start - 1][1] <= overlap:
        start -= 1
        carried += units[start][1]
    return [" ".join(u[0] for u in units), *_packed(units[start:], size, overlap)]


def _packed(units: list[tuple[str, int]], size: int, overlap: int) -> list[str]:
    out: list[str] = []
    window: list[tuple[str, int]] = []
    held = 0
    fresh = 0  # units of the current window not in the one before
    for unit in units:
        if window and held + unit[1] > size:
            out.append(" ".join(u[0] for u in window))
            kept: list[tuple[str, int]] = []
            carried = 0
            for old in reversed(window[1:]):  # the first never: something new each time
                if carried + old[1] > overlap or carried + old[1] + unit[1] > size:
                    break
                kept.insert(0, old)
                carried += old[1]
            window, held = kept, carried
            fresh = 0
        window.append(unit)
        held += unit[1]
        fresh += 1
    if fresh:
        out.append(" ".join(u[0] for u in window))
    return out
