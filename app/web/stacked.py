"""Tables that read on a phone: each body cell is labelled with its column's header.

Under 600 px the stylesheet turns a table row into a stack of "label: value" lines
(`td::before { content: attr(data-label) }`), so nothing scrolls sideways. The labels are
written here, once, for every page and every collector's section, instead of by hand in each
template: a plug-in's table reads on a phone without knowing about it. It works without
JavaScript, like the rest of the first render.

They are written into the templates' source when Jinja loads them (`LabelledTables`), not into
each rendered page: a pass over every page's HTML cost 10-20 % of a page's CPU. A header that is
worked out while rendering (``<th>{{ w }}</th>``) labels nothing there; its template writes the
label itself. A test renders every page and checks its labels against `label_cells` run on the
page itself, which is what this did at every request before.
"""

from __future__ import annotations

import functools
import html
import re

from jinja2.ext import Extension

# Opening tags only, and </thead>: closing cells need no work, and skipping them is half the
# matches. Lower case, as every template here writes its tags (re.I made the scan 30 % slower).
_TAG = re.compile(r"<(table|thead|/thead|tr|td|th)\b([^>]*)>")
_SPAN = re.compile(r"""\bcolspan\s*=\s*["']?(\d+)""")
_MARKUP = re.compile(r"<[^>]+>")


def header_labels(thead: str) -> list[str]:
    """The text of each header cell, tags and extra spaces removed ("Serial <small>(WWN)</small>")."""
    cells = re.findall(r"<th\b[^>]*>(.*?)</th>", thead, re.S)
    return [" ".join(html.unescape(_MARKUP.sub(" ", th)).split()) for th in cells]


@functools.lru_cache(maxsize=512)
def _quoted_labels(thead: str) -> tuple[str, ...]:
    """header_labels quoted for an attribute, once per distinct header (a page's headers repeat
    on every render)."""
    return tuple(html.escape(label, quote=True) for label in header_labels(thead))


def _source_labels(thead: str) -> tuple[str, ...]:
    """In a template's source: a header with template code in it is only known when rendering."""
    return tuple("" if "{" in label else label for label in _quoted_labels(thead))


def _width(attrs: str) -> int:
    if "colspan" not in attrs:
        return 1
    span = _SPAN.search(attrs)
    return int(span.group(1)) if span else 1


def label_cells(page: str, source: bool = False) -> str:
    """`page` with data-label on every body cell of every table that has a header row
    (``source``: `page` is a template's source).

    One pass over the table tags (a page is rendered for every request and refresh): the
    header cells of a <thead> name the columns, and each later row's cells are labelled by
    their column, a colspan moving the count along. Tables do not nest in these pages."""
    if "<table" not in page:
        return page
    out: list[str] = []
    last = 0
    labels: tuple[str, ...] = ()
    in_head = False
    head_start = 0
    column = 0
    for m in _TAG.finditer(page):
        tag, attrs = m.group(1, 2)
        if tag == "td":
            if in_head:
                continue
            width = _width(attrs)
            # A cell across columns ("No changes recorded.") speaks for itself.
            if width == 1 and column < len(labels) and labels[column] and "data-label" not in attrs:
                out.append(page[last:m.start()])
                out.append(f'<td data-label="{labels[column]}"{attrs}>')
                last = m.end()
            column += width
        elif tag == "tr":
            column = 0
        elif tag == "th":
            if not in_head:  # a row header takes its column, unlabelled
                column += _width(attrs)
        elif tag == "table":
            labels, column = (), 0
        elif tag == "thead":
            in_head, head_start = True, m.end()
        else:  # </thead>
            thead = page[head_start:m.start()]
            labels, in_head = _source_labels(thead) if source else _quoted_labels(thead), False
    out.append(page[last:])
    return "".join(out)


class LabelledTables(Extension):
    """Jinja extension: label the cells of every template's tables once, as it is loaded."""

    def preprocess(self, source: str, name: str | None, _filename: str | None = None) -> str:
        return label_cells(source, source=True)
