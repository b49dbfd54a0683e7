"""MathML tables (issue 45, item 5): matrices and aligned equations keep their rows and
columns on the page, and read as a linear form in the text search and the model read."""

from __future__ import annotations

from core.books.htmlblocks import html_to_blocks

SYSTEM = (
    '<math display="block"><mtable columnalign="right left">'
    "<mtr><mtd><msub><mi>x</mi><mn>1</mn></msub><mo>+</mo><mn>2</mn><msub><mi>x</mi><mn>2</mn>"
    "</msub><mo>+</mo><mn>2</mn><msub><mi>x</mi><mn>3</mn></msub></mtd><mtd><mo>=</mo><mn>4</mn>"
    "</mtd></mtr><mtr><mtd><msub><mi>x</mi><mn>2</mn></msub></mtd><mtd></mtd></mtr>"
    "<mlabeledtr><mtd><mtext>3</mtext></mtd><mtd><msub><mi>x</mi><mn>3</mn></msub></mtd>"
    "<mtd><mo>=</mo><mn>1</mn></mtd></mlabeledtr></mtable></math>"
)
MATRIX = (
    "<p>Let <math><mi>A</mi><mo>=</mo><mrow><mo>[</mo><mtable><mtr><mtd><mn>1</mn></mtd>"
    "<mtd><mn>2</mn></mtd></mtr><mtr><mtd><mn>3</mn></mtd><mtd><mn>4</mn></mtd></mtr></mtable>"
    "<mo>]</mo></mrow></math>.</p>"
)
FENCED = (
    '<math display="block"><mfenced open="(" close=")"><mtable><mtr><mtd><mi>a</mi></mtd>'
    "<mtd><mi>b</mi></mtd></mtr></mtable></mfenced></math>"
)


def blocks(body: str) -> list[tuple[str, str, str]]:
    _, found = html_to_blocks(f"<html><body>{body}</body></html>")
    return [(b.kind, b.text, b.html) for b in found]


def test_aligned_equations_read_row_by_row() -> None:
    ((kind, text, page),) = blocks(SYSTEM)
    assert text.strip() == "x_1 + 2x_2 + 2x_3 = 4; x_2; x_3 = 1 (3)"
    assert kind == "table" and page.count("<tr>") == 3
    assert '<td align="right"><i>x</i><sub>1</sub>' in page and '<td align="left"> = 4</td>' in page


def test_a_matrix_reads_as_rows_of_cells_between_its_brackets() -> None:
    found = blocks(MATRIX)
    texts = [t.strip() for _, t, _ in found]
    assert "A = [1, 2; 3, 4]" in texts
    page = next(h for _, t, h in found if t.strip().startswith("A ="))
    start = page.rindex('<table class="mtable"')
    inner = page[start : page.index("</table>", start)]
    assert inner.count("<tr>") == 2 and inner.count("<td") == 4  # two rows of two columns
    assert 'font-size: 180%">[</td>' in page  # the bracket as tall as the rows


def test_mfenced_matrix() -> None:
    ((_, text, _),) = blocks(FENCED)
    assert text.strip() == "(a, b)"
