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

_TABLE = re.compile(r"<table\b.*?</table>", re.S)
_HEAD = re.compile(r"<thead\b.*?</thead>", re.S)
_HEADER = re.compile(r"<th\b[^>]*>(.*?)</th>", re.S)
_ROW = re.compile(r"(<tr\b[^>]*>)(.*?)(</tr>)", re.S)
_CELL = re.compile(r"<(td|th)\b([^>]*)>")
_SPAN = re.compile(r"""\bcolspan\s*=\s*["']?(\d+)""")
_TAG = re.compile(r"<[^>]+>")


def header_labels(thead: str) -> list[str]:
    """The text of each header cell, tags and extra spaces removed ("Serial <small>(WWN)</small>")."""
    return [" ".join(html.unescape(_TAG.sub(" ", th)).split()) for th in _HEADER.findall(thead)]


def _label_row(labels: list[str], row: re.Match[str]) -> str:
    column = 0

    def cell(m: re.Match[str]) -> str:
        nonlocal column
        tag, attrs = m.group(1), m.group(2)
        label = labels[column] if column < len(labels) else ""
        span = _SPAN.search(attrs)
        width = int(span.group(1)) if span else 1
        column += width
        # A cell across columns ("No changes recorded.") speaks for itself.
        if tag == "th" or width > 1 or not label or "data-label" in attrs:
            return m.group(0)
        return f'<td data-label="{html.escape(label, quote=True)}"{attrs}>'

    return row.group(1) + _CELL.sub(cell, row.group(2)) + row.group(3)


def _label_table(m: re.Match[str]) -> str:
    table = m.group(0)
    head = _HEAD.search(table)
    if head is None:
        return table
    labels = header_labels(head.group(0))
    body = _ROW.sub(lambda row: _label_row(labels, row), table[head.end():])
    return table[:head.end()] + body


def label_cells(page: str) -> str:
    """`page` with data-label on every body cell of every table that has a header row."""
    if "<table" not in page:
        return page
    return _TABLE.sub(_label_table, page)
