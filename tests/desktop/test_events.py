"""The reading view's event stream (desktop/events.py): handlers get only their kind, in the
order they subscribed, at once; an unsubscribed handler hears nothing more."""

from __future__ import annotations

import dataclasses

import pytest

from desktop.events import BookClosed, BookOpened, Events, HighlightsChanged, PageShown


def test_handlers_get_their_kind_in_subscription_order() -> None:
    events = Events()
    heard: list[str] = []
    events.subscribe(PageShown, lambda e: heard.append(f"first {e.page}"))
    events.subscribe(BookOpened, lambda e: heard.append(f"opened {e.book_id}"))
    events.subscribe(PageShown, lambda e: heard.append(f"second {e.page}"))
    events.publish(PageShown(1, 7))
    assert heard == ["first 7", "second 7"], "only PageShown handlers, in order, at once"
    events.publish(BookOpened(1))
    assert heard[-1] == "opened 1"
    events.publish(BookClosed(1))  # nobody listens: nothing happens
    assert len(heard) == 3


def test_unsubscribe_and_a_handler_that_subscribes_another() -> None:
    events = Events()
    heard: list[int] = []

    def late(e: HighlightsChanged) -> None:
        heard.append(-e.book_id)

    def first(e: HighlightsChanged) -> None:
        heard.append(e.book_id)
        events.subscribe(HighlightsChanged, late)  # takes effect from the next event

    events.subscribe(HighlightsChanged, first)
    events.publish(HighlightsChanged(3))
    assert heard == [3]
    events.unsubscribe(HighlightsChanged, first)
    events.publish(HighlightsChanged(4))
    assert heard == [3, -4]


def test_events_are_frozen_records() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        PageShown(1, 2).page = 3  # type: ignore[misc]
