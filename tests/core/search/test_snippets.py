"""A hit's snippet is built from the passage search has read (not FTS5's snippet(), which
reads the passage again): about 24 words where most of the query's words are, each marked,
plural, possessive and accents folded as the index folds them."""

from __future__ import annotations

from core.search.snippets import make_snippet, query_stems

TEXT = (
    "Alice was beginning to get very tired of sitting by her sister on the bank, and of "
    "having nothing to do: once or twice she had peeped into the book her sister was reading, "
    "but it had no pictures or conversations in it, “and what is the use of a book,” thought "
    "Alice “without pictures or conversations?” So she was considering in her own mind"
)


def test_the_window_holds_the_most_query_words_marked() -> None:
    snippet = make_snippet(TEXT, query_stems(['"sisters"', '"picture"']))
    assert "«sister»" in snippet and "«pictures»" in snippet
    assert snippet.startswith("…") and snippet.endswith("…")  # the passage goes on both ways
    assert len(snippet.replace("«", "").replace("»", "").split()) <= 24


def test_possessives_accents_and_phrases_match() -> None:
    assert "«Alice’s»" in make_snippet("It was Alice’s turn.", query_stems(['"Alice"']))
    snippet = make_snippet("Un café était fermé.", query_stems(['"cafe etait"']))
    assert snippet == "Un «café» «était» fermé"
    assert make_snippet(TEXT, query_stems(['"hookah"'])) == ""  # the caller shows the opening
