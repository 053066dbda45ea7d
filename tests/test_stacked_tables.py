"""A table's header labels its cells, so a phone can stack each row as "label: value"."""

from __future__ import annotations

import pytest

from app.web.stacked import header_labels, label_cells


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        # every body cell gets its column's header
        ("<table><thead><tr><th>Bay</th><th>Serial</th></tr></thead><tbody><tr><td>7</td><td>ZA1</td></tr></tbody></table>",
         '<table><thead><tr><th>Bay</th><th>Serial</th></tr></thead><tbody><tr><td data-label="Bay">7</td>'
         '<td data-label="Serial">ZA1</td></tr></tbody></table>'),
        # a cell's own attributes stay; a colspan moves the next cell's column along
        ('<table><thead><tr><th>A</th><th>B</th><th>C</th></tr></thead><tr><td colspan="2" class="x">ab</td><td>c</td></tr></table>',
         '<table><thead><tr><th>A</th><th>B</th><th>C</th></tr></thead><tr><td colspan="2" class="x">ab</td>'
         '<td data-label="C">c</td></tr></table>'),
        # a row header (th in the body) takes a column but is not labelled
        ("<table><thead><tr><th>Array</th><th>State</th></tr></thead><tr><th>md0</th><td>clean</td></tr></table>",
         '<table><thead><tr><th>Array</th><th>State</th></tr></thead><tr><th>md0</th><td data-label="State">clean</td></tr></table>'),
        # an empty header (an actions column) labels nothing; a hand-written label is kept
        ('<table><thead><tr><th>Rule</th><th></th></tr></thead><tr><td data-label="R">x</td><td><button>Ack</button></td></tr></table>',
         '<table><thead><tr><th>Rule</th><th></th></tr></thead><tr><td data-label="R">x</td><td><button>Ack</button></td></tr></table>'),
        # a table without a header row is left alone, and so is a page without tables
        ("<table><tr><td>1</td></tr></table>", "<table><tr><td>1</td></tr></table>"),
        ("<p>no tables</p>", "<p>no tables</p>"),
        # more cells than headers: the extra ones stay unlabelled
        ("<table><thead><tr><th>A</th></tr></thead><tr><td>1</td><td>2</td></tr></table>",
         '<table><thead><tr><th>A</th></tr></thead><tr><td data-label="A">1</td><td>2</td></tr></table>'),
    ],
)
def test_each_body_cell_is_labelled_with_its_columns_header(page: str, expected: str) -> None:
    assert label_cells(page) == expected


def test_a_header_with_markup_and_entities_becomes_plain_quoted_text() -> None:
    assert header_labels('<thead><tr><th>Serial <small>(WWN)</small></th><th>In &amp; out</th></tr></thead>') == [
        "Serial (WWN)", "In & out"]
    page = '<table><thead><tr><th>Say "hi" &lt;b&gt;</th></tr></thead><tr><td>x</td></tr></table>'
    assert '<td data-label="Say &quot;hi&quot; &lt;b&gt;">x</td>' in label_cells(page)


def test_two_tables_on_a_page_keep_their_own_headers() -> None:
    page = ("<table><thead><tr><th>A</th></tr></thead><tr><td>1</td></tr></table>"
            "<p>between</p><table><thead><tr><th>B</th></tr></thead><tr><td>2</td></tr></table>")
    assert label_cells(page).count('data-label="A"') == 1 and '<td data-label="B">2</td>' in label_cells(page)
