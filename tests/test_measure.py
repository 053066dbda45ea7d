"""One rounding per unit: a page said "3702.94 RPM" beside "3703 RPM", a legend "0.493°C", a
table "18.20 kWh" beside "18.2 kWh". collectors/measure.py is the rule for the pages and the
findings; static/app.js keeps the same for the charts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from collectors.measure import DECIMALS, FIXED, measure
from tests.paths import TESTS
from tests.test_web import PAGE_READS, demo_app, fetch


@pytest.mark.parametrize(("value", "unit", "said"), [
    (34, "°C", "34 °C"), (21.34, "°C", "21.3 °C"), (21.0, "°C", "21 °C"), (-7.46, "°C", "-7.5 °C"),
    (-0.01, "°C", "0 °C"), (3702.94, "RPM", "3703 RPM"), (0, "RPM", "0 RPM"), (35.4, "W", "35 W"),
    (4.23, "W", "4.2 W"), (1234.5, "W", "1234 W"), (12.4801, "V", "12.48 V"), (13.6, "V", "13.60 V"), (12, "V", "12.00 V"),
    (None, "W", "–"), ("n/a", "°C", "–"), (float("nan"), "V", "–"), (float("inf"), "RPM", "–"),
])
def test_a_value_is_said_in_its_units_one_rounding(value: object, unit: str, said: str) -> None:
    assert measure(value, unit) == said


def test_the_charts_round_each_unit_as_the_pages_do() -> None:
    script = (TESTS.parent / "static" / "app.js").read_text()
    decimals, fixed = (re.search(rf"var {name} = (\{{.*?\}});", script) for name in ("DECIMALS", "FIXED"))
    assert decimals and fixed, "static/app.js has no DECIMALS or FIXED"
    assert {unit: tuple(d) for unit, d in json.loads(decimals[1]).items()} == DECIMALS
    assert set(json.loads(fixed[1])) == FIXED


# A number and its unit as a page says it: no-break space, or an HTML one.
_SAID = re.compile(r"(?<![\w.])(-?\d+(?:\.(\d+))?)(?:\u00a0|&nbsp;| )(°C|RPM|W|V)(?![\w/])")


@pytest.mark.parametrize("path", [p for p in PAGE_READS if not p.startswith("/entity")] + ["/disks/ZA1000AK"])
def test_no_page_says_a_unit_with_more_decimals_than_its_rounding(tmp_path: Path, path: str) -> None:
    page = fetch(demo_app(tmp_path, 80, runs=2), path).text
    page = re.sub(r"<(script|style)\b.*?</\1>|<[^>]+>", " ", page, flags=re.S)  # the text, not the markup
    over = [m[0] for m in _SAID.finditer(page) if len(m[2] or "") > max(DECIMALS[m[3]])]
    assert over == []
