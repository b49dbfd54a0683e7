"""What an EPUB says reaches the page text and HTML (issue 29), on books made here in the
shape of the W3C EPUB 3 tests: fallbacks, SVG pages, MathML, powers, links, resources,
hiding, quotation marks, DTD subsets, XML problems, container errors, UTF-8 names."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest

from core.books.epubcheck import late_problems
from core.books.parse import parse_book
from core.errors import BookCode, BookError
from tests.core.books.epubgen import CONTAINER, make_epub

# a test replaces a generated chapter or nav by writing the same name again (the last wins)
pytestmark = pytest.mark.filterwarnings("ignore:Duplicate name:UserWarning")

XHTML = (
    '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>T</title></head><body>{}</body></html>'
)


def _text(path: Path) -> str:
    return "\n".join(p.text for p in parse_book(path).pages)


def _html(path: Path) -> str:
    return "\n".join(p.html or "" for p in parse_book(path).pages)


def test_a_spine_item_with_an_xhtml_fallback_shows_the_fallback_text(tmp_path: Path) -> None:
    path = make_epub(
        tmp_path / "f.epub",
        [("One", "<p>First chapter.</p>")],
        extra_manifest='<item id="j" href="moby.json" media-type="application/json" fallback="fb"/>'
        '<item id="fb" href="fb.xhtml" media-type="application/xhtml+xml"/>',
        extra_spine_first='<itemref idref="j"/>',
        extra_files={
            "OEBPS/moby.json": '{"a": 1}',
            "OEBPS/fb.xhtml": XHTML.format("<p>Call me Ishmael.</p>"),
        },
    )
    assert _text(path).startswith("Call me Ishmael.")


def test_an_svg_spine_item_is_drawn_and_its_words_are_text(tmp_path: Path) -> None:
    svg = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 40"><text x="5" y="20">Chapter Seven</text></svg>'
    path = make_epub(
        tmp_path / "s.epub",
        [("One", "<p>Before.</p>")],
        extra_manifest='<item id="s" href="page.svg" media-type="image/svg+xml"/>',
        extra_spine_first='<itemref idref="s"/>',
        extra_files={"OEBPS/page.svg": svg},
    )
    book = parse_book(path)
    assert book.pages[0].text == "Chapter Seven"
    assert 'src="book:/OEBPS/page.svg"' in (book.pages[0].html or "")


def test_mathml_keeps_its_formula_in_text_and_draws_a_superscript(tmp_path: Path) -> None:
    math = (
        '<p>Suppose <math xmlns="http://www.w3.org/1998/Math/MathML"><mi>A</mi></math> and '
        "<math><mi>B</mi></math> are square with <math><mrow><mi>A</mi><mi>B</mi><mo>=</mo>"
        "<mi>I</mi></mrow></math>. Then <math><msup><mrow><mo>(</mo><mi>a</mi><mo>+</mo>"
        "<mi>b</mi><mo>)</mo></mrow><mn>2</mn></msup></math> and <math><mfrac><mn>1</mn>"
        "<mi>n</mi></mfrac></math>.</p>"
    )
    path = make_epub(tmp_path / "m.epub", [("Algebra", math)])
    text = _text(path)
    assert "Suppose A and B are square with AB = I. Then (a + b)^2 and 1/n." in text
    assert "<sup>2</sup>" in _html(path)


def test_math_alttext_stands_in_when_there_is_no_markup(tmp_path: Path) -> None:
    body = '<p>See <math alttext="x squared"><semantics><annotation>x^2</annotation></semantics></math>.</p>'
    assert "See x squared." in _text(make_epub(tmp_path / "a.epub", [("A", body)]))


def test_a_power_reads_with_a_caret_and_an_ordinal_does_not(tmp_path: Path) -> None:
    body = "<p>About 10<sup>16</sup> stars on the 1<sup>st</sup> night.</p>"
    text = _text(make_epub(tmp_path / "p.epub", [("P", body)]))
    assert "About 10^16 stars on the 1st night." in text


def test_links_inside_the_book_jump_to_their_page(tmp_path: Path) -> None:
    long = "".join(f"<p>{'Filler sentence here. ' * 40}</p>" for _ in range(4))
    path = make_epub(
        tmp_path / "l.epub",
        [
            (
                "One",
                '<p>See <a href="c1.xhtml#far">the far place</a> and <a href="c1.xhtml">two</a>.</p>',
            ),
            ("Two", f'{long}<p id="far">The far place is here.</p>'),
        ],
    )
    book = parse_book(path)
    far = next(p.number for p in book.pages if "far place is here" in p.text)
    two = next(p.number for p in book.pages if p.text.startswith("Two"))
    assert far != two
    first = book.pages[0].html or ""
    assert f'href="page:{far}"' in first and f'href="page:{two}"' in first
    assert "margin:" not in "".join(p.html or "" for p in book.pages)


def test_a_note_reference_names_its_note_for_the_pop_up(tmp_path: Path) -> None:
    body = (
        '<p>A claim<a href="#n1" epub:type="noteref">1</a>.</p>'
        '<aside epub:type="footnote" id="n1"><p>The source of the claim.</p></aside>'
    )
    path = make_epub(tmp_path / "n.epub", [("N", body)])
    html = _html(path)
    match = re.search(r'class="noteref" href="page:(\d+)#([^"]+)"', html)
    assert match and match.group(2) == "OEBPS/c0.xhtml#n1"
    assert f'<a name="{match.group(2)}"></a>' in html  # the pop-up finds the note by it


def test_images_come_only_from_the_manifest_as_a_browser_resolves_them(tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"0" * 20
    body = (
        '<p><img src="../../../../img/a.png" alt="clamped"/><img src="/img/b.png" alt="rooted"/>'
        '<img src="img/c.psd" alt="fallback"/><img src="unlisted.png" alt="unlisted"/>'
        '<img src="data:image/png;base64,iVBORw0KGgo=" alt="inline"/></p>'
    )
    path = make_epub(
        tmp_path / "r.epub",
        [("R", body)],
        extra_manifest='<item id="a" href="../img/a.png" media-type="image/png"/>'
        '<item id="b" href="/img/b.png" media-type="image/png"/>'
        '<item id="c" href="img/c.psd" media-type="image/psd" fallback="d"/>'
        '<item id="d" href="img/d.png" media-type="image/png"/>',
        extra_files={
            "img/a.png": png,
            "img/b.png": png,
            "OEBPS/img/d.png": png,
            "OEBPS/unlisted.png": png,
        },
    )
    html = _html(path)
    assert 'src="book:/img/a.png"' in html and 'src="book:/img/b.png"' in html
    assert 'src="book:/OEBPS/img/d.png"' in html
    assert "unlisted.png" not in html and "[Illustration: unlisted]" in html
    assert 'src="data:image/png;base64,' in html


def test_hidden_elements_and_dtd_subsets_are_not_shown_and_q_gets_marks(tmp_path: Path) -> None:
    body = (
        '<p hidden="">Secret one.</p><p style="display: none">Secret two.</p>'
        "<p>He said <q>hello</q> &xxe;.</p>"
    )
    doc = (
        '<?xml version="1.0"?><!DOCTYPE html [ <!ENTITY xxe SYSTEM "file:///etc/passwd"> ]>'
        + XHTML.format(body)
    )
    path = make_epub(tmp_path / "h.epub", [("H", "<p>x</p>")], extra_files={"OEBPS/c0.xhtml": doc})
    text = _text(path)
    assert "Secret" not in text and "]>" not in text and "xxe" not in text
    assert "He said “hello” ." in text


def test_not_well_formed_xhtml_is_read_and_reported(tmp_path: Path) -> None:
    path = make_epub(tmp_path / "w.epub", [("W", "<p>Unclosed paragraph.</div>")])
    book = parse_book(path)
    assert "Unclosed paragraph." in book.pages[0].text
    # (checked once the book is read: core.books.epubcheck)
    assert "not well-formed" in late_problems(path, book.extra)


def test_bzip2_compression_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "bz.epub"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_BZIP2) as z:
        z.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        z.writestr("META-INF/container.xml", CONTAINER)
    with pytest.raises(BookError) as err:
        parse_book(path)
    assert err.value.code == BookCode.UNSUPPORTED and "bzip2" in err.value.message


def test_utf8_names_without_the_zip_flag_keep_every_chapter(tmp_path: Path) -> None:
    source = make_epub(tmp_path / "src.epub", [("A", "<p>x</p>")])
    opf = zipfile.ZipFile(source).read("OEBPS/content.opf").decode()
    opf = opf.replace('href="c0.xhtml"', 'href="第一章.xhtml"')
    path = tmp_path / "jp.epub"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/epub+zip")
        z.writestr("META-INF/container.xml", CONTAINER)
        z.writestr("OEBPS/content.opf", opf)
        info = zipfile.ZipInfo("OEBPS/第一章.xhtml")
        z.writestr(info, XHTML.format("<p>吾輩は猫である。</p>"))
    raw = bytearray(path.read_bytes())
    # what `zip` writes under a POSIX locale: UTF-8 bytes, no UTF-8 flag (bit 11)
    for sig, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = 0
        while (at := raw.find(sig, start)) >= 0:
            raw[at + offset] &= ~0x08 & 0xFF
            raw[at + offset + 1] &= ~0x08 & 0xFF
            start = at + 4
    path.write_bytes(bytes(raw))
    assert "吾輩は猫である。" in _text(path)


def test_an_image_contents_entry_is_named_by_its_alt_text(tmp_path: Path) -> None:
    nav = XHTML.format(
        '<nav epub:type="toc"><ol><li><a href="c0.xhtml">Start</a></li>'
        '<li><a href="c1.xhtml"><img src="x.jpg" alt="The abbey"/></a></li></ol></nav>'
    )
    path = make_epub(
        tmp_path / "t.epub",
        [("A", "<p>a</p>"), ("B", "<p>b</p>")],
        extra_files={"OEBPS/nav.xhtml": nav},
    )
    assert [t.title for t in parse_book(path).toc] == ["Start", "The abbey"]


def test_rtl_metadata_is_isolated_right_to_left(tmp_path: Path) -> None:
    src = make_epub(tmp_path / "x.epub", [("A", "<p>a</p>")])
    opf = zipfile.ZipFile(src).read("OEBPS/content.opf").decode()
    opf = opf.replace("<dc:title>", '<dc:title dir="rtl">')
    path = make_epub(tmp_path / "rtl.epub", [("A", "<p>a</p>")], opf_override=opf)
    assert parse_book(path).title == "\u2067Test Book\u2069"


def test_a_package_dir_rtl_leaves_the_language_code_alone(tmp_path: Path) -> None:
    """Issue 45, item 8: the package's ``dir="rtl"`` isolates prose (the title) but a code is
    not prose: the language stays "ar", not "\u2067ar\u2069"."""
    src = make_epub(tmp_path / "x.epub", [("A", "<p>a</p>")])
    opf = zipfile.ZipFile(src).read("OEBPS/content.opf").decode()
    opf = opf.replace("<package ", '<package dir="rtl" ').replace(">en<", ">ar<")
    path = make_epub(tmp_path / "rtl.epub", [("A", "<p>a</p>")], opf_override=opf)
    book = parse_book(path)
    assert book.language == "ar"
    assert book.title == "\u2067Test Book\u2069"


def _page_list_book(tmp_path: Path) -> Path:
    """Three printed pages (38–40) over two chapters, each long enough for several of
    Margin's pages; the nav's page-list points at page-break markers."""
    long = "".join(f"<p>{'Words of the printed page here. ' * 40}</p>" for _ in range(3))
    one = f'<span epub:type="pagebreak" id="p38" title="38"/>{long}<p>Middle <span epub:type="pagebreak" id="p39"/>of a paragraph.</p>{long}'
    two = f'<p id="p40">Page forty begins.</p>{long}'
    nav = XHTML.format(
        '<nav epub:type="toc"><ol><li><a href="c0.xhtml">One</a></li><li><a href="c1.xhtml">Two</a></li></ol></nav>'
        '<nav epub:type="page-list"><ol><li><a href="c0.xhtml#p38">38</a></li>'
        '<li><a href="c0.xhtml#p39">39</a></li><li><a href="c1.xhtml#p40">40</a></li></ol></nav>'
    )
    return make_epub(
        tmp_path / "pl.epub", [("One", one), ("Two", two)], extra_files={"OEBPS/nav.xhtml": nav}
    )


def test_a_page_list_labels_pages_with_the_printed_page_they_start_in(tmp_path: Path) -> None:
    pages = parse_book(_page_list_book(tmp_path)).pages
    labels = [p.label for p in pages]
    middle = next(p for p in pages if "Middle of a paragraph" in p.text)
    forty = next(p for p in pages if p.text.startswith("Two"))
    assert labels[0] == "38"  # the marker is at the top of the first page
    assert middle.label == "38"  # page 39 starts inside it
    assert pages[middle.number].label == "39"  # the next page starts in printed page 39
    assert forty.label == "40"
    assert all(p.label == "40" for p in pages[forty.number - 1 :])
    assert "Middle of a paragraph." in middle.text  # the marker adds no text


def test_an_rtl_title_keeps_its_isolate_on_display() -> None:
    from core.labels import display_title

    assert display_title("\u2067CSS: הרפתקה חדשה!\u2069") == "\u2067CSS: הרפתקה חדשה!\u2069"
    assert display_title("A\u202eB") == "AB"  # a bare override is still removed


def test_an_inline_svg_is_kept_as_an_image_with_the_pages_css(tmp_path: Path) -> None:
    import base64

    body = (
        "<p>Look:</p><svg viewBox='0 0 10 10'><path class='x' d='M0 0h10v10z'/>"
        "<text x='1' y='5'>Label</text></svg>"
    )
    doc = XHTML.replace(
        "<head><title>T</title></head>", "<head><style>.x { fill: green }</style></head>"
    )
    path = make_epub(
        tmp_path / "svg.epub",
        [("S", "<p>x</p>")],
        extra_files={"OEBPS/c0.xhtml": doc.replace("{}", body)},
    )
    book = parse_book(path)
    match = re.search(r'src="data:image/svg\+xml;base64,([^"]+)"', book.pages[0].html or "")
    assert match
    svg = base64.b64decode(match.group(1)).decode()
    assert (
        "<style>.x { fill: green }</style>" in svg and 'xmlns="http://www.w3.org/2000/svg"' in svg
    )
    assert "Label" in book.pages[0].text


def test_the_cli_import_says_what_was_repaired(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from core.cli import main

    path = make_epub(tmp_path / "w.epub", [("W", "<p>Unclosed paragraph.</div>")])
    code = main(["import", str(path)])
    err = capsys.readouterr().err
    assert code == 0
    assert "w.epub: repaired: OEBPS/c0.xhtml: not well-formed XML" in err


def test_q_gets_no_marks_when_the_books_css_draws_its_own_or_the_text_has_them(
    tmp_path: Path,
) -> None:
    body = "<p>Joyce: <q>So I do,</q> says she. Poe: “<q>La musique</q>,” says Marmontel.</p>"
    css = 'q::before,\nq::after{\n\tcontent: "";\n}'
    own = make_epub(
        tmp_path / "se.epub",
        [("Q", body)],
        extra_manifest='<item id="css" href="core.css" media-type="text/css"/>',
        extra_files={"OEBPS/core.css": css},
    )
    assert "Joyce: So I do, says she." in _text(own)
    plain = _text(make_epub(tmp_path / "plain.epub", [("Q", body)]))
    assert "Joyce: “So I do,” says she." in plain
    assert "“La musique,” says" in plain  # its marks are already in the text


def test_q_marks_follow_the_documents_language_not_the_packages(tmp_path: Path) -> None:
    """Issue 45, item 8 (W3C pkg-lang_but_not_content): a French package whose content
    document declares no language gives <q> the default marks; a document in French, « »."""
    src = make_epub(tmp_path / "x.epub", [("Q", "<p>a</p>")])
    opf = zipfile.ZipFile(src).read("OEBPS/content.opf").decode().replace(">en<", ">fr<")
    body = "<p>Il dit <q>bonjour</q>.</p>"
    unmarked = make_epub(tmp_path / "n.epub", [("Q", body)], opf_override=opf)
    assert "Il dit “bonjour”." in _text(unmarked)
    french = XHTML.replace("<html ", '<html xml:lang="fr" ').replace("{}", body)
    marked = make_epub(
        tmp_path / "f.epub", [("Q", body)], opf_override=opf, extra_files={"OEBPS/c0.xhtml": french}
    )
    assert "Il dit « bonjour »." in _text(marked)


def test_a_picture_with_a_careless_media_type_is_still_shown(tmp_path: Path) -> None:
    path = make_epub(
        tmp_path / "jpg.epub",
        [("J", '<p><img src="a.jpg" alt="A"/></p>')],
        extra_manifest='<item id="a" href="a.jpg" media-type="image/jpg"/>',
        extra_files={"OEBPS/a.jpg": b"\xff\xd8\xff\xe0JFIF"},
    )
    assert 'src="book:/OEBPS/a.jpg"' in _html(path)


def test_a_hostile_formula_nested_thousands_deep_is_read_without_a_crash() -> None:
    from core.books.htmlblocks import html_document

    deep = "<math>" + "<mrow>" * 5000 + "<mi>x</mi>" + "</mrow>" * 5000 + "</math>"
    _, blocks, _ = html_document(f"<body><p>Before {deep} after.</p></body>", doc="a.xhtml")
    assert blocks and blocks[0].text.startswith("Before") and blocks[0].text.endswith("after.")
