"""Power, whole and at its edges: the hwmon collector's full result over two polls (a healthy
bus, then a sagging rail, a stopped fan and a hot chip) kept as a golden file; NUT's replies
and UPS-MIB's values in every form, each error in its exact words."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from collectors.base import CollectorError, NoData, ParseError
from collectors.home.hwmon.collector import HwmonCollector, judge_fan, judge_rail, read_hwmon
from collectors.home.hwmon.config import Fan, Rail
from collectors.home.nut.collector import UpsState, parse_list_ups, parse_list_var, ups_state
from collectors.home.nut.upsmib import ups_mib_to_nut
from tests.collectors.golden import as_json, matches_golden
from tests.collectors.test_power import FANS, RAILS, hwmon_tree

CAPTURE = Path(__file__).parent.parent / "fixtures" / "hwmon" / "nct6779"


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


@pytest.mark.parametrize("lines, message", [
    (["ERR DRIVER-NOT-CONNECTED"], "ups: Driver not connected (the UPS driver is not running or lost the UPS)"),
    (["ERR SOMETHING-NEW"], "ups: SOMETHING-NEW"),
    ([], "empty reply to LIST VAR"),
    (["BEGIN LIST VAR ups", "END LIST VAR other"],
     "ups: LIST VAR reply not framed by BEGIN/END: 'BEGIN LIST VAR ups' ... 'END LIST VAR other'"),
    (["BEGIN LIST VAR ups", 'VAR other battery.charge "1"', "END LIST VAR ups"],
     "ups: unexpected line in LIST VAR: 'VAR other battery.charge \"1\"'"),
])
def test_each_bad_list_var_reply_is_an_error_in_these_words(lines: list[str], message: str) -> None:
    with pytest.raises(CollectorError) as err:
        parse_list_var(lines, "ups")
    assert str(err.value) == message


def test_list_ups_names_every_ups_with_its_description() -> None:
    assert parse_list_ups(["BEGIN LIST UPS", 'UPS ups12v "12 V \\"rack\\" battery"', 'UPS eaton ""',
                           "END LIST UPS"]) == {"ups12v": '12 V "rack" battery', "eaton": ""}


@pytest.mark.parametrize("lines, error, message", [
    (["ERR ACCESS-DENIED"], CollectorError, "access denied (check upsd.users and the login in the config)"),
    (["ERR ODD"], CollectorError, "ERR ODD"),
    ([], ParseError, "LIST UPS reply not framed by BEGIN/END: []"),
    (["BEGIN LIST UPS"], ParseError, "LIST UPS reply not framed by BEGIN/END: ['BEGIN LIST UPS']"),
    (["BEGIN LIST UPS", "UPS x", "END LIST UPS"], ParseError, "unexpected line in LIST UPS: 'UPS x'"),
])
def test_each_bad_list_ups_reply_is_an_error_in_these_words(lines: list[str], error: type[Exception],
                                                            message: str) -> None:
    with pytest.raises(error) as err:
        parse_list_ups(lines)
    assert str(err.value) == message and type(err.value) is error


def test_a_ups_state_carries_its_flags_and_reads_numbers_that_are_numbers() -> None:
    st = ups_state("ups12v", {"ups.status": "OB DISCHRG LB", "battery.charge": "9", "battery.runtime": "n/a"})
    assert st == UpsState("ups12v", frozenset({"OB", "DISCHRG", "LB"}), st.vars)
    assert (st.num("battery.charge"), st.num("battery.runtime"), st.num("ups.load")) == (9.0, None, None)
    assert ups_state("u", {}).flags == frozenset()


def test_a_ups_whose_driver_has_not_reported_yet_says_so() -> None:
    with pytest.raises(CollectorError) as err:
        ups_state("ups12v", {"ups.status": "WAIT"})
    assert str(err.value) == "ups12v: upsd is still waiting for the driver's first data (ups.status WAIT)"


@pytest.mark.parametrize("source, battery, status", [
    (2, 2, "OFF"), (3, 2, "OL"), (4, 1, "OL BYPASS"), (5, 2, "OB DISCHRG"), (6, 2, "OL BOOST"), (7, 2, "OL TRIM"),
    (3, 3, "OL LB"), (5, 4, "OB DISCHRG LB"), (1, 3, "LB"),
])
def test_every_ups_mib_output_source_maps_to_nuts_status(source: int, battery: int, status: str) -> None:
    assert ups_mib_to_nut({"output_source": source, "battery_status": battery}) == {"ups.status": status}


def test_ups_mib_values_are_scaled_like_nuts_and_missing_ones_left_out() -> None:
    got = ups_mib_to_nut({"output_source": 3, "battery_status": 2, "charge_remaining": 100, "battery_voltage": 136,
                          "input_voltage": 230, "output_voltage": 229, "output_load": 17, "minutes_remaining": 0})
    assert got == {"ups.status": "OL", "battery.charge": "100", "battery.voltage": "13.6", "input.voltage": "230",
                   "output.voltage": "229", "ups.load": "17", "battery.runtime": "0"}


@pytest.mark.parametrize("source", [None, 1, 8])
def test_an_agent_without_a_usable_output_source_is_not_a_ups(source: int | None) -> None:
    with pytest.raises(CollectorError) as err:
        ups_mib_to_nut({"output_source": source, "battery_status": 2})
    assert str(err.value) == f"UPS-MIB: unusable upsOutputSource {source!r} (is this a UPS-MIB agent?)"


@pytest.mark.parametrize("fan, rpm, fan_min, held, want", [
    (Fan(name="f", chip="c", sensor="fan1"), None, None, None, (True, "no reading")),
    (Fan(name="f", chip="c", sensor="fan1"), 0, None, None, (True, "0 RPM")),
    (Fan(name="f", chip="c", sensor="fan1"), 1, None, None, (False, "1 RPM")),
    (Fan(name="f", chip="c", sensor="fan1"), 299, 300, None, (True, "299 RPM under its minimum 300")),
    (Fan(name="f", chip="c", sensor="fan1"), 300, 300, None, (False, "300 RPM")),
    (Fan(name="f", chip="c", sensor="fan1", min_rpm=500), 400, 300, None, (True, "400 RPM under its minimum 500")),
    (Fan(name="f", chip="c", sensor="fan1", min_rpm=0), 100, 300, None, (False, "100 RPM")),
    (Fan(name="f", holds="k10temp/temp1", max_celsius=70), None, None, 70.0, (False, "no tach; k10temp/temp1 at 70.0 °C")),
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
