"""Sentences of a passage (core/search/sentences.py), as passages mode bolds them."""

from __future__ import annotations

from core.agent.providers.passages_reply import whole_sentences
from core.search.sentences import is_heading, paragraphs, sentences


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


def test_headings_captions_and_ornaments_are_told_from_prose() -> None:
    for heading in ("CHAPTER VII. A Mad Tea-Party", "Stave I", "Incident of the Letter", "II"):
        assert is_heading(heading), heading
    assert is_heading("* * * * * * *")
    for prose in ("Alice folded her hands, and began:—", "How doth the little crocodile"):
        assert not is_heading(prose), prose


def test_passages_mode_never_bolds_a_heading_nor_ends_at_a_title() -> None:
    text = (
        "CHAPTER VII. A Mad Tea-Party\n\nThere was a table set out under a tree. "
        "The Hatter was having tea at it.\n\nThen came a certain Mr."
    )
    assert paragraphs(text)[0] == "CHAPTER VII. A Mad Tea-Party"
    assert whole_sentences(text) == [
        "There was a table set out under a tree.",
        "The Hatter was having tea at it.",
    ], "the heading is not a sentence, a passage cut after 'Mr.' loses its last piece"
