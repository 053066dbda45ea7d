"""A number stays with its unit: the page's filters and every plug-in's drawn section put a
no-break space between them, so a narrow line breaks between words, never inside "10.86 V"."""

from __future__ import annotations

import pytest

from app.web.templating import templates, whole_values, whole_values_in_html

NB = "\u00a0"


@pytest.mark.parametrize("html, expected", [
    ("turning: 2400 RPM", f"turning: 2400{NB}RPM"),
    ("battery 10.86 V, 100 %, load 23 %", f"battery 10.86{NB}V, 100{NB}%, load 23{NB}%"),
    ("RSCP -106 dBm, 6.2 MB dropped", f"RSCP -106{NB}dBm, 6.2{NB}MB dropped"),
    ("3 h 5 min ago", f"3{NB}h 5{NB}min ago"),
    ("<td>88.0 Mbit/s</td>", f"<td>88.0{NB}Mbit/s</td>"),
    # not values: inside a word, a tag's attributes, a unit that is the start of a longer word
    ("sda2 s", "sda2 s"),
    ("v1.2 V", "v1.2 V"),
    ('<path stroke-width=2 d="M0 0">', '<path stroke-width=2 d="M0 0">'),
    ("<td colspan=2 s>", "<td colspan=2 s>"),
    ("2 days, 3 Bays, 5 hosts", "2 days, 3 Bays, 5 hosts"),
    ("4 B/s", "4 B/s"),
])
def test_a_value_in_drawn_html_is_bound_to_its_unit_and_nothing_else_is_touched(html: str, expected: str) -> None:
    assert whole_values_in_html(html) == expected


@pytest.mark.parametrize("text", ["turning: 2400 RPM", "RSCP -106 dBm, 6.2 MB dropped", "3 h 5 min ago", "sda2 s"])
def test_the_section_pass_and_the_whole_filter_agree_on_text(text: str) -> None:
    assert whole_values_in_html(text) == whole_values(text)


def test_the_filters_that_write_values_bind_them() -> None:
    env = templates()
    page = env.from_string("{{ 6.2e6|bytes }} | {{ 3725|duration }} | {{ '%.2f V'|format(10.857) }} | "
                           "{{ '%.0f %%'|format(99.6) }}").render()
    assert page == f"6.2{NB}MB | 1{NB}h 2{NB}min | 10.86{NB}V | 100{NB}%"
