"""The book's own CSS kept on its stored pages: what is kept, what never is, and that the
text and its pages stay as they were (citations depend on them)."""

from __future__ import annotations

import re
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser

from core.books.bookcss import BREAK, BookStyles, continued, declarations, rules, styled
from core.books.epub import parse_epub
from core.books.pages import paginate
from tests.core.books.bookcss_book import CSS, styled_epub


def pages_of(path: Path) -> list[object]:
    return list(paginate(parse_epub(path).chapters)[0])


def test_rules_keep_plain_rules_and_leave_out_media_pseudo_elements_and_bad_values() -> None:
    found = dict(rules(CSS))
    assert found["p"] == {
        "margin-top": "0",
        "margin-right": "0",
        "margin-bottom": "0",
        "margin-left": "0",
        "text-indent": "1em",
    }
    assert found["h1"]["text-align"] == "center" and found["h2"]["font-variant"] == "small-caps"
    assert '[epub\\:type~="z3998:letter"] header' in found, "the epub| namespace as HTML names it"
    assert not any("first-letter" in s for s in found), "pseudo-elements are left out"
    assert all(d.get("text-align") != "center" for s, d in rules(CSS) if s == "p"), "no @media"
    assert found[".evil"] == {"font-size": "2.5em"}, "script-like values dropped, sizes clamped"


def test_declarations_check_every_value() -> None:
    assert declarations("text-align: start; font-weight: 700; font-style: oblique") == {
        "text-align": "left",
        "font-weight": "bold",
        "font-style": "italic",
    }
    assert declarations("margin-left: 40%; text-indent: -99em; color: red") == {
        "text-indent": "-4em"
    }
    assert declarations("margin: 1em 2.5em") == {
        "margin-top": "1em",
        "margin-right": "2.5em",
        "margin-bottom": "1em",
        "margin-left": "2.5em",
    }
    assert declarations('font-variant: "><script>; text-align: center;;') == {
        "text-align": "center"
    }


def test_styles_follow_specificity_inheritance_and_the_style_attribute() -> None:
    tree = LexborHTMLParser(
        '<html><body><blockquote epub:type="z3998:letter"><header><p id="h">Monday.</p>'
        '</header><p class="signature" style="font-style: italic">J.</p></blockquote>'
        "<h1>One</h1><p id='x'>After</p><p id='y'>Next</p></body></html>"
    )
    styles = BookStyles(tree, [CSS])
    header_p = tree.css_first("#h")
    assert header_p is not None
    assert "text-align: right" in styles.block_style(header_p), "inherited from the header"
    assert "font-style: italic" in styles.block_style(header_p)
    signature = tree.css_first(".signature")
    assert signature is not None
    look = styles.block_style(signature)
    assert "font-variant: small-caps" in look and "text-align: right" in look
    assert "font-style: italic" in look, "the style attribute wins"
    after, following = tree.css_first("#x"), tree.css_first("#y")
    assert after is not None and following is not None
    assert "text-indent: 0" in styles.block_style(after), "h1 + p is more specific than p"
    assert "text-indent: 1em" in styles.block_style(following)


def test_styled_puts_the_style_on_the_block_and_a_break_before_it() -> None:
    assert styled("<p>x</p>", "text-indent: 1em") == '<p style="text-indent: 1em">x</p>'
    assert styled("<blockquote><p>x</p></blockquote>", "text-align: right") == (
        '<blockquote><p style="text-align: right">x</p></blockquote>'
    )
    broken = styled("<p>x</p>", f"text-indent: 0; {BREAK}")
    assert broken.startswith("<hr") and '<p style="text-indent: 0">' in broken
    assert continued(f"text-indent: 1em; margin-top: 2em; text-align: right; {BREAK}") == (
        "text-align: right"
    )


def test_an_epub_keeps_its_look_on_its_pages(tmp_path: Path) -> None:
    pages = pages_of(styled_epub(tmp_path))
    html = "\n".join(p.html for p in pages)  # type: ignore[attr-defined]
    assert re.search(r'<h1 style="[^"]*text-align: center[^"]*font-variant: small-caps', html)
    assert '<p style="text-indent: 1em; margin: 0">first' in html
    assert re.search(r'<hr [^>]*><p style="text-indent: 0; margin: 0">after0x0', html)
    assert re.search(r'<p style="text-align: right[^"]*font-style: italic[^"]*">Netherfield', html)
    assert re.search(r'<p style="text-align: right[^"]*font-variant: small-caps[^"]*">Jane', html)
    assert '<b><span style="font-weight: normal; font-variant: small-caps">Mr. Darcy' in html
    assert 'margin: 0 0 0 2em">The owl' in html, "verse keeps its indent"
    for bad in ("expression", "javascript", "url(", "first-letter", "900em"):
        assert bad not in html


def test_the_text_and_the_pages_stay_as_without_styles(tmp_path: Path) -> None:
    styled_pages = pages_of(styled_epub(tmp_path))
    plain_pages = pages_of(styled_epub(tmp_path, css=False))
    assert [p.text for p in styled_pages] == [p.text for p in plain_pages]  # type: ignore[attr-defined]
    assert "style=" not in "".join(p.html for p in plain_pages)  # type: ignore[attr-defined]
