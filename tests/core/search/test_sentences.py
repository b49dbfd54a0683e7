"""Sentences of a passage (core/search/sentences.py), as passages mode bolds them."""

from __future__ import annotations

from core.search.sentences import sentences


def test_titles_and_initials_do_not_end_a_sentence() -> None:
    text = (
        "I called on Mr. Sherlock Holmes at noon. He was with Dr. Watson. "
        "“Stop!” cried Mrs. Hudson. J. H. Watson wrote it down."
    )
    assert sentences(text) == [
        "I called on Mr. Sherlock Holmes at noon.",
        "He was with Dr. Watson.",
        "“Stop!” cried Mrs. Hudson.",
        "J. H. Watson wrote it down.",
    ]


def test_the_pronoun_i_still_ends_a_sentence() -> None:
    assert sentences("“Indeed,” said I. The rain had stopped.") == [
        "“Indeed,” said I.",
        "The rain had stopped.",
    ]


def test_a_question_inside_a_sentence_does_not_cut_it() -> None:
    assert sentences("“Why?” he asked. She laughed.") == ["“Why?” he asked.", "She laughed."]
