"""hwmon, whole and at its edges: the collector's full result over two polls (a healthy bus,
then a sagging rail, a stopped fan and a hot chip) kept as a golden file; fans and rails judged
at their limits; chips in number order."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from collectors.base import NoData
from collectors.home.hwmon.collector import HwmonCollector, judge_fan, judge_rail, read_hwmon
from collectors.home.hwmon.config import Fan, Rail
from tests.collectors.golden import as_json, matches_golden
from tests.collectors.home.hwmon.test_hwmon import FANS, RAILS, hwmon_tree
from tests.paths import FIXTURES

CAPTURE = FIXTURES / "hwmon" / "nct6779"


def test_two_polls_of_a_power_system_report_exactly_the_stored_result(tmp_path: Path) -> None:
    root = hwmon_tree(tmp_path)
    shutil.copytree(CAPTURE, root / "sys/class/hwmon/hwmon3")  # node_exporter's real nct6779 capture
    c = HwmonCollector(root, RAILS, FANS)
    first = as_json(c.collect())
    hwmon_tree(root, fan2_rpm=0, in4_mv=930, cpu_temp=78000)
    second = as_json(c.collect())
    assert matches_golden("hwmon-two-polls", {"first": first, "second": second})
    assert [(r["name"], r["ok"]) for r in second["state"]["rails"]] == [("12V battery bus", False)]
    assert [f["stalled"] for f in second["state"]["fans"]] == [True, False, True]


@pytest.mark.parametrize("fan, rpm, fan_min, held, want", [
    (Fan(name="f", chip="c", sensor="fan1"), None, None, None, (True, "no reading")),
    (Fan(name="f", chip="c", sensor="fan1"), 0, None, None, (True, "0 RPM")),
    (Fan(name="f", chip="c", sensor="fan1"), 1, None, None, (False, "1 RPM")),
    (Fan(name="f", chip="c", sensor="fan1"), 299, 300, None, (True, "299 RPM under its minimum 300")),
    (Fan(name="f", chip="c", sensor="fan1"), 300, 300, None, (False, "300 RPM")),
    (Fan(name="f", chip="c", sensor="fan1", min_rpm=500), 400, 300, None, (True, "400 RPM under its minimum 500")),
    (Fan(name="f", chip="c", sensor="fan1", min_rpm=0), 100, 300, None, (False, "100 RPM")),
    (Fan(name="f", holds="k10temp/temp1", max_celsius=70), None, None, 70.0, (False, "no tach; k10temp/temp1 at 70 °C")),
    (Fan(name="f", holds="k10temp/temp1", max_celsius=70), None, None, 70.1,
     (True, "no tach; k10temp/temp1 is 70.1 °C, over the 70 °C it should hold")),
    (Fan(name="f", holds="k10temp/temp1", max_celsius=70), None, None, None, (False, "no tach and no temperature to judge by")),
    (Fan(name="f", holds="k10temp/temp1"), None, None, 90.0, (False, "no tach and no temperature to judge by")),
])
def test_a_fan_is_judged_by_its_tach_or_by_what_it_cools(fan: Fan, rpm: float | None, fan_min: float | None,
                                                         held: float | None, want: tuple[bool, str]) -> None:
    assert judge_fan(fan, rpm, fan_min, held) == want


@pytest.mark.parametrize("rail, raw, want", [
    (Rail(name="r", chip="c", sensor="in4", multiplier=12, offset=0.1, min=11.4, max=14.6), 1.1, (13.3, True)),
    (Rail(name="r", chip="c", sensor="in4", min=11.4, max=14.6), 11.4, (11.4, True)),
    (Rail(name="r", chip="c", sensor="in4", min=11.4, max=14.6), 14.6, (14.6, True)),
    (Rail(name="r", chip="c", sensor="in4", min=11.4, max=14.6), 14.61, (14.61, False)),
    (Rail(name="r", chip="c", sensor="in4", min=11.4), 99.0, (99.0, True)),
    (Rail(name="r", chip="c", sensor="in4", max=14.6), -1.0, (-1.0, True)),
    (Rail(name="r", chip="c", sensor="in4"), None, (None, None)),
])
def test_a_rail_is_scaled_then_judged_against_its_limits_inclusive(rail: Rail, raw: float | None,
                                                                   want: tuple[float | None, bool | None]) -> None:
    v, ok = judge_rail(rail, raw)
    assert (None if v is None else round(v, 6), ok) == want


def test_chips_are_read_in_number_order_and_two_of_a_kind_are_told_apart(tmp_path: Path) -> None:
    base = tmp_path / "sys/class/hwmon"
    for d, name in (("hwmon10", "nct6779"), ("hwmon2", "nct6779"), ("hwmon1", "k10temp")):
        (base / d).mkdir(parents=True)
        (base / d / "name").write_text(name + "\n")
        (base / d / "temp1_input").write_text("40000\n")
    (base / "hwmon3").write_text("not a chip folder")
    got = [(s.chip, s.name, s.value) for s in read_hwmon(tmp_path)]
    assert got == [("k10temp", "temp1", 40.0), ("nct6779", "temp1", 40.0), ("nct6779-2", "temp1", 40.0)]


def test_a_host_without_hwmon_says_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(NoData) as err:
        read_hwmon(tmp_path)
    assert str(err.value) == f"{tmp_path / 'sys/class/hwmon'} does not exist (no hwmon drivers)"

