"""The sentences that lead the no-model reply (core/agent/providers/passages_reply.py
``leads``): the sentence after one that repeats the question's words gains from it, and each
lead comes with the sentences after it. Real chunks of the fixture books, the real encoder."""

from __future__ import annotations

import pytest

from core.agent.providers import passages_reply
from core.agent.providers.passages import choose, query_for
from core.agent.providers.passages_reply import (
    lead_block,
    leads,
    whole_sentences,
    words_before_fold,
)
from core.agent.types import Passage, Question
from core.search.sentences import stems
from core.store.library import BookInfo, Library
from tests.core.agent.test_passages_answer import chunk_with, needs_encoder


def lead_text(passage: Passage, question: str) -> str:
    query = query_for(Question(question))
    ((_, shown),) = choose([passage], query)
    block, _ = lead_block(leads([(passage, shown.answer)], query))
    return " ".join(block.split())


@needs_encoder
def test_a_lead_comes_with_the_sentences_after_it(
    library: Library, read_metamorphosis: BookInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    passage = chunk_with(library, read_metamorphosis, "ticking on the chest of drawers")
    question = "What time does Gregor's alarm clock show when he wakes?"
    text = lead_text(passage, question)
    assert "half past six" in text, text
    # the sentence that names the clock leads, in bold; the time follows it, not bold
    bold = text.split("**")[1]
    assert "half past six" not in bold and "alarm clock" in bold
    assert text.index("half past six") > text.index(bold)
    monkeypatch.setattr(passages_reply, "FOLLOWERS", 0)
    assert "half past six" not in lead_text(passage, question), "the followers show it"


@needs_encoder
def test_the_leads_stay_short_exact_and_cited(library: Library, alice: BookInfo) -> None:
    passages = [
        chunk_with(library, alice, "why you are painting those roses"),
        chunk_with(library, alice, "three gardeners at it, busily painting them red"),
    ]
    query = query_for(Question("Why are the gardeners painting the roses?"))
    chosen = choose(passages, query)
    found = leads([(p, shown.answer) for p, shown in chosen], query)
    block, cites = lead_block(found)
    assert 1 <= len(found) <= passages_reply.LEADS
    assert words_before_fold(block) <= passages_reply.LEAD_WORDS + 10 * len(found)
    book = " ".join(" ".join(p.text.split()) for p in passages)
    for lead in found:
        assert lead.sentence in book and lead.after in book, "the book's exact words"
        assert f"**{lead.sentence}** {lead.after}".strip() in block
    assert all(c.quoted_text in book for c in cites) and cites
    # no sentence is shown twice before the fold
    sentences = [s for lead in found for s in (lead.sentence, lead.after) if s]
    assert len(sentences) == len(set(sentences))


@needs_encoder
def test_the_sentence_after_the_questions_words_gains_from_them(
    library: Library, alice: BookInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    passage = chunk_with(library, alice, "why you are painting those roses")
    question = "Why are the gardeners painting the roses?"
    monkeypatch.setattr(passages_reply, "FOLLOWERS", 0)
    monkeypatch.setattr(passages_reply, "LEADS", 1)
    asked = "why you are painting those roses?”**"
    assert asked in lead_text(passage, question), "Alice's question repeats the words"
    monkeypatch.setattr(passages_reply, "AFTER_TELLING", 3.0)  # the rule, made to decide
    text = lead_text(passage, question)
    assert asked not in text, "another sentence leads"
    parts = whole_sentences(passage.text)
    (at,) = [i for i, p in enumerate(parts) if f"**{p}**" in text]
    assert at > 0 and stems(question) & stems(parts[at - 1]), "its previous sentence tells"
