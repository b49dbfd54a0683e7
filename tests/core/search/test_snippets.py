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


def test_plain_texts_find_the_words_the_expressions_find() -> None:
    """A text of ASCII words (curly quotes and dashes aside) has its words found with
    ``str.find`` (``snippets._found_plain``): the very words, stems and places the regular
    expressions find, on paragraphs of two books and odd words (apostrophes, digits, "_")."""
    import random

    from core.search import snippets
    from tests.conftest import BOOKS

    paragraphs = [
        p
        for name in ("alice_in_wonderland.txt", "metamorphosis.txt")
        for p in (BOOKS / name).read_text(encoding="utf-8").split("\n\n")[:200]
        if p.strip()
    ]
    odd = "o'clock O’CLOCK don't rabbit’s x_y 1st 42nd abc'ed ’tis ‘quoted’ A—B well-known".split()
    rng = random.Random(3)
    compared = 0
    for _ in range(300):
        text = rng.choice(paragraphs)
        if rng.random() < 0.4:
            words = text.split()
            words[rng.randrange(len(words))] = rng.choice(odd)
            text = " ".join(words)
        words = [*rng.sample(text.split(), min(3, len(text.split()))), rng.choice(odd)]
        wanted = query_stems([f'"{w}"' for w in words])
        if all(w and w.isascii() for w in wanted) and snippets._plain(text):
            compared += 1
            assert snippets._found_plain(text, wanted) == snippets._found_by_expression(
                text, wanted
            ), (text, wanted)
    assert compared > 200


def test_the_best_stretch_is_the_one_every_match_is_tried_for() -> None:
    """``best_start`` finds each match's stretch by bisection: the very start that trying
    every match against every other finds (matches found twice at one place included)."""
    import random

    from core.search.snippets import best_start

    def tried(found: list[tuple[int, int, str]], reach: int) -> int:
        best, best_key = found[0][0], (-1, -1)
        for start, _, _ in found:
            inside = [f for f in found if start <= f[0] < start + reach]
            key = (len({f[2] for f in inside}), len(inside))
            if key > best_key:
                best, best_key = start, key
        return best

    rng = random.Random(5)
    for _ in range(500):
        starts = sorted(rng.choices(range(400), k=rng.randint(1, 40)))
        found = [(at, at + 4, rng.choice("abcd")) for at in starts]
        reach = rng.choice([5, 30, 120])
        assert best_start(found, reach) == tried(found, reach)
