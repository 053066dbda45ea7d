"""Tables that read on a phone: each body cell is labelled with its column's header.

Under 600 px the stylesheet turns a table row into a stack of "label: value" lines
(`td::before { content: attr(data-label) }`), so nothing scrolls sideways. The labels are
written here, once, for every page and every collector's section, instead of by hand in each
template: a plug-in's table reads on a phone without knowing about it. It works without
JavaScript, like the rest of the first render.
"""

from __future__ import annotations

import html
import re

_TAG = re.compile(r"<(/?)(table|thead|tr|td|th)\b([^>]*)>", re.I)
_SPAN = re.compile(r"""\bcolspan\s*=\s*["']?(\d+)""")
_MARKUP = re.compile(r"<[^>]+>")


def header_labels(thead: str) -> list[str]:
    """The text of each header cell, tags and extra spaces removed ("Serial <small>(WWN)</small>")."""
    cells = re.findall(r"<th\b[^>]*>(.*?)</th>", thead, re.S)
    return [" ".join(html.unescape(_MARKUP.sub(" ", th)).split()) for th in cells]


def label_cells(page: str) -> str:
    """`page` with data-label on every body cell of every table that has a header row.

    One pass over the table tags (a page is rendered for every request and refresh): the
    header cells of a <thead> name the columns, and each later row's cells are labelled by
    their column, a colspan moving the count along. Tables do not nest in these pages."""
    if "<table" not in page:
        return page
    out: list[str] = []
    last = 0
    labels: list[str] = []
    in_head = False
    head_start = 0
    column = 0
    for m in _TAG.finditer(page):
        closing, tag, attrs = m.group(1), m.group(2).lower(), m.group(3)
        if tag == "table":
            labels, column = [], 0
        elif tag == "thead":
            if closing:
                labels = header_labels(page[head_start:m.start()])
            else:
                head_start = m.end()
            in_head = not closing
        elif tag == "tr" and not closing:
            column = 0
        elif tag in ("td", "th") and not closing and not in_head:
            span = _SPAN.search(attrs)
            width = int(span.group(1)) if span else 1
            label = labels[column] if column < len(labels) else ""
            column += width
            # A cell across columns ("No changes recorded.") speaks for itself; row headers too.
            if tag == "td" and width == 1 and label and "data-label" not in attrs:
                out.append(page[last:m.start()])
                out.append(f'<td data-label="{html.escape(label, quote=True)}"{attrs}>')
                last = m.end()
    out.append(page[last:])
    return "".join(out)
