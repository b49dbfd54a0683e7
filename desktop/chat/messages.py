"""What the transcript shows: the stored messages of the open conversation, rendered once
each (cached by key), the older ones filled in a few per event-loop turn, and the frames of
the answer being written, where a streaming tick repaints only the unfinished tail."""

from __future__ import annotations

from dataclasses import replace

import shiboken6
from PySide6.QtCore import QTimer
from PySide6.QtGui import QPalette

from core.agent.answer import AnswerState
from desktop.chat import history
from desktop.chat.render import (
    Colours,
    answer_html,
    css,
    cut_at,
    markdown,
    pieces,
    question_html,
    selection_page_name,
    settled_length,
    shown_text,
    who_html,
)
from desktop.chat.runs import LiveRun
from desktop.chat.sources import Opened
from desktop.chat.transcript import Transcript

FIRST_SHOWN = 16  # messages shown at once when a conversation opens (the newest)
BATCH = 6  # older messages inserted per event-loop turn after that (~10 ms each batch)


class Messages:
    def __init__(self, transcript: Transcript, palette: QPalette) -> None:
        self.transcript = transcript
        self.opened = Opened()
        self.shown: list[history.Shown] = []
        self.views: dict[str, AnswerState] = {}
        self.last_answer = ""
        self.follow = True
        self.labels: list[str] = []  # the book's printed page labels (chips name them)
        self._cache: dict[str, tuple[object, str]] = {}
        self._older: list[history.Shown] = []  # not yet inserted (oldest first)
        self._generation = 0
        self.set_palette(palette)
        transcript.verticalScrollBar().valueChanged.connect(self._scrolled)
        # Qt lays long documents out in pieces after the fact: keep following as it grows
        transcript.verticalScrollBar().rangeChanged.connect(self._range_changed)

    def set_palette(self, palette: QPalette) -> None:
        self.colours = Colours.from_palette(palette)
        self.css = css(self.colours)
        self._cache.clear()

    def set_labels(self, labels: list[str]) -> None:
        """The open book's printed page labels: chips drawn from now on name them."""
        if labels != self.labels:
            self.labels = labels
            self._cache.clear()

    def _scrolled(self, _value: int) -> None:
        self.follow = self.transcript.at_bottom()

    def _range_changed(self, _low: int, _high: int) -> None:
        if self.follow:
            self.transcript.scroll_to_end()

    # rendering ----------------------------------------------------------------------------

    def render(self, shown: history.Shown) -> str:
        if shown.question is not None:
            q = shown.question
            cached = self._cache.get(shown.key)
            if cached is None or cached[0] != (q.run_id, q.text):  # ids come back after a delete
                cached = (
                    (q.run_id, q.text),
                    question_html(
                        q.text,
                        q.selection_text,
                        selection_page_name(q.selection_page, self.labels),
                    ),
                )
                self._cache[shown.key] = cached
            return cached[1]
        assert shown.answer is not None
        return self.render_answer(shown.answer)

    def render_answer(self, view: AnswerState) -> str:
        key = view.key
        variant = (
            view.run_id,
            view.status,
            len(view.text),
            self.opened.variant(key),
            key == self.last_answer,
        )
        cached = self._cache.get(key)
        if cached is not None and cached[0] == variant and view.finished:
            return cached[1]
        text = answer_html(
            view,
            expanded=self.opened.expanded,
            last=key == self.last_answer,
            revealed=self.opened.revealed_in(key),
            labels=self.labels,
        )
        if view.finished:
            self._cache[key] = (variant, text)
        return text

    def placeholder(self, book_open: bool) -> str:
        words = (
            "Ask a question about this book. Select text in the book to ask about a passage."
            if book_open
            else "Open a book to talk about it."
        )
        return f"<p style='color:{self.colours.muted}'>{words}</p>"

    # the stored conversation ---------------------------------------------------------------

    def clear(self, placeholder: str) -> None:
        self._generation += 1
        self._older = []
        self.shown = []
        self.views = {}
        self.transcript.reset(self.css, placeholder)

    def show(self, shown: list[history.Shown], live: LiveRun | None, placeholder: str) -> None:
        """Show a conversation read from the store (when it changes, not per tick), with the
        answer being written in it, if any."""
        if live is not None:
            skip: set[int | None] = {live.view.run_id}
            if live.view.run_id is None:  # not started yet: its stored placeholder is this run
                skip |= {s.run_id for s in shown if s.answer and s.answer.status == "running"}
            shown = [s for s in shown if s.run_id is None or s.run_id not in skip]
        self.shown = shown
        self.views = {s.key: s.answer for s in shown if s.answer is not None}
        answers = [s.key for s in shown if s.answer is not None]
        self.last_answer = answers[-1] if answers and live is None else ""
        self.opened.whole.clear()  # long answers show their beginning again
        self.transcript.reset(self.css)
        # the newest messages at once; older ones a few per event-loop turn, above them, so
        # opening a long conversation never freezes the window
        self._generation += 1
        self._older = list(shown[:-FIRST_SHOWN]) if len(shown) > FIRST_SHOWN else []
        for s in shown[len(self._older) :]:
            self.transcript.add(s.key, self.render(s))
        if self._older:
            generation = self._generation
            QTimer.singleShot(0, lambda: self._insert_older(generation))
        if not shown and live is None:
            self.transcript.reset(self.css, placeholder)
        if live is not None:
            self.show_live(live)
        self.follow = True
        self.transcript.scroll_to_end()

    def _insert_older(self, generation: int) -> None:
        if generation != self._generation or not shiboken6.isValid(self.transcript):
            return  # another conversation was opened meanwhile
        batch = self._older[-BATCH:]
        del self._older[-BATCH:]
        bar = self.transcript.verticalScrollBar()
        follow, value, maximum = self.follow, bar.value(), bar.maximum()
        for s in reversed(batch):
            self.transcript.prepend(s.key, self.render(s))
        if follow:
            self.transcript.scroll_to_end()
        else:  # what the reader is looking at stays in place
            bar.setValue(value + bar.maximum() - maximum)
        if self._older:
            QTimer.singleShot(0, lambda: self._insert_older(generation))

    def complete(self) -> bool:
        return not self._older

    def rerender(self, key: str) -> None:
        if not shiboken6.isValid(self.transcript):
            return
        view = self.views.get(key)
        if view is None or not self.transcript.has(key):
            return
        if key in self.opened.whole:  # shown in pieces: its links are in the last one
            if self.transcript.has(f"{key}+end"):
                self.transcript.replace(f"{key}+end", self._footer(view))
            return
        self.transcript.replace(key, self.render_answer(view))

    def _footer(self, view: AnswerState) -> str:
        return answer_html(
            view,
            expanded=self.opened.expanded,
            last=view.key == self.last_answer,
            revealed=self.opened.revealed_in(view.key),
            body="",
            labels=self.labels,
        )

    def show_all(self, key: str) -> None:
        """Show all of a long answer: a piece per event-loop turn, so the window never
        freezes however long it is; its links come last."""
        view = self.views.get(key)
        if view is None or key in self.opened.whole:
            return
        self.opened.whole.add(key)
        rest = pieces(shown_text(view, self.opened.revealed_in(key)))
        self.transcript.replace(key, who_html(view) + markdown(rest.pop(0) if rest else ""))
        generation = self._generation

        def step(after: str, index: int) -> None:
            if generation != self._generation or not shiboken6.isValid(self.transcript):
                return  # another conversation is shown
            if index < len(rest):
                self.transcript.add_after(after, f"{key}+{index}", markdown(rest[index]))
                QTimer.singleShot(0, lambda: step(f"{key}+{index}", index + 1))
            else:
                self.transcript.add_after(after, f"{key}+end", self._footer(view))

        step(key, 0)

    def all_shown(self, key: str) -> bool:
        """Whether every piece of a long answer shown with Show all is in the transcript."""
        return self.transcript.has(f"{key}+end")

    def drop_last_run(self) -> None:
        """Regenerate: the previous attempt leaves the transcript at once."""
        runs = [s.run_id for s in self.shown if s.run_id is not None]
        if not runs:
            return
        for s in [s for s in self.shown if s.run_id == runs[-1]]:
            self.transcript.remove(s.key)
            self.shown.remove(s)
            self._cache.pop(s.key, None)

    def last_run(self) -> int | None:
        runs = [s.run_id for s in self.shown if s.run_id is not None]
        return runs[-1] if runs else None

    # the answer being written -----------------------------------------------------------

    def show_live(self, live: LiveRun) -> None:
        if not self.shown and not self.transcript.has(live.question_key):
            self.transcript.reset(self.css)
        if not self.transcript.has(live.question_key):
            self.transcript.add(
                live.question_key,
                question_html(
                    live.question,
                    live.selection_text,
                    selection_page_name(live.selection_page, self.labels),
                ),
            )
        self.views[live.key] = live.view
        if not self.transcript.has(live.key):
            live.settled = live.blocks = 0
            self.transcript.add(f"{live.key}#h", who_html(live.view))
        self.paint_live(live)
        self.transcript.scroll_to_end()
        self.follow = True

    def paint_live(self, live: LiveRun) -> None:
        """Repaint the live answer: blocks that became final are rendered once into their own
        frame; only the unfinished tail is replaced on each tick."""
        view = live.view
        revealed = self.opened.revealed_in(live.key)
        text = shown_text(view, revealed)
        settled = settled_length(text) if view.status == "running" else live.settled
        if settled > live.settled:
            # the tail frame keeps the finished blocks; a new tail frame follows it (a huge
            # block shows its beginning: all of it once the answer has ended)
            block = text[live.settled : settled]
            self.transcript.replace(live.key, markdown(block[: cut_at(block)]))
            self.transcript.rekey(live.key, f"{live.key}#{live.blocks}")
            live.blocks += 1
            live.settled = settled
            self.transcript.add(live.key, "")
        self.transcript.replace(
            live.key,
            answer_html(
                view,
                expanded=self.opened.expanded,
                revealed=revealed,
                body=text[live.settled :],
                labels=self.labels,
            ),
        )

    def tick(self, live: LiveRun) -> None:
        follow = self.follow
        self.paint_live(live)
        if follow:
            self.transcript.scroll_to_end()
            self.follow = True

    def repaint_live(self, live: LiveRun) -> None:
        """Paint every block of the live answer afresh (a hidden sentence was revealed)."""
        for frame in live.frame_keys()[1:-1]:
            self.transcript.remove(frame)
        live.settled = live.blocks = 0
        self.paint_live(live)

    def finish_live(self, live: LiveRun, shown: list[history.Shown]) -> None:
        """The live frames become the stored messages."""
        follow = self.follow
        run_id = live.view.run_id
        new = [s for s in shown if s.run_id == run_id]
        previous_last = self.last_answer
        self.transcript.remove(live.question_key)
        for key in live.frame_keys():
            self.transcript.remove(key)
        self.views.pop(live.key, None)
        if not self.shown:
            self.transcript.reset(self.css)
        answers = [s.key for s in shown if s.answer is not None]
        self.last_answer = answers[-1] if answers else ""
        if live.view.status == "failed":
            # the store could not keep this answer's end (a full disk, issue 46 item 7): what
            # arrived, and why it was not saved, stay on screen instead of its stored start
            shown = [_kept(s, live.view) if s.run_id == run_id else s for s in shown]
            new = [s for s in shown if s.run_id == run_id]
        for s in new:
            if s.answer is not None:
                self.opened.move(live.key, s.key)
            self._cache.pop(s.key, None)
            self.transcript.add(s.key, self.render(s))
        self.shown = shown
        self.views = {s.key: s.answer for s in shown if s.answer is not None}
        if previous_last and previous_last != self.last_answer:
            # only its Regenerate link goes: a later event-loop turn, so the close-out and
            # this re-render never add up to one long stall
            QTimer.singleShot(0, lambda: self.rerender(previous_last))
        if follow:
            self.transcript.scroll_to_end()


def _kept(shown: history.Shown, view: AnswerState) -> history.Shown:
    """``shown`` with the live answer ``view`` when the store kept only its start (its run
    left running, or marked as lost to the full disk: ``Conversations.mark_unsaved``)."""
    stored = shown.answer
    if stored is None:
        return shown
    lost = (
        stored.status == "failed" and stored.error is not None and stored.error.code == "disk_full"
    )
    if stored.status not in ("running", "unfinished") and not (lost and view.text != stored.text):
        return shown
    return replace(shown, answer=replace(view, key=stored.key))
