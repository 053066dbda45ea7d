"""FreeIPMI's outputs, line by line: every column read as ipmi-sensors(8) and ipmi-sel(8) write
it, each threshold judged at its exact edge, both date forms of the SEL, and the errors that quote
(at most 200 characters of) the line they could not read. The captured outputs are read whole in
test_freeipmi_outputs.py; these are the edges a capture does not happen to hold."""

from __future__ import annotations

import pytest

from collectors.base import ParseError
from collectors.host.ipmi.freeipmi import (
    SelInfo,
    SensorReading,
    _csv,
    _events,
    judged_state,
    parse_dcmi_power,
    parse_sel,
    parse_sel_info,
    parse_sensors,
)

SENSORS = "ID,Name,Type,State,Reading,Units,Lower NR,Lower C,Lower NC,Upper NC,Upper C,Upper NR,Event\n"
SEL = "ID,Date,Time,Name,Type,State,Event Direction,Event\n"


def sensor(reading: float | None, state: str | None = "Nominal", **thresholds: float) -> SensorReading:
    names = {"lnr": "Lower NR", "lc": "Lower C", "lnc": "Lower NC", "unc": "Upper NC", "uc": "Upper C", "unr": "Upper NR"}
    return SensorReading(name="T", type="Temperature", state=state, reading=reading, unit="C",
                         thresholds={names[k]: v for k, v in thresholds.items()}, events=())


@pytest.mark.parametrize(("s", "judged"), [
    (sensor(74.9, unc=75.0, uc=90.0), "Nominal"),
    (sensor(75.0, unc=75.0, uc=90.0), "Warning"),  # at the threshold is past it, as FreeIPMI's "At or Above"
    (sensor(89.9, unc=75.0, uc=90.0), "Warning"),
    (sensor(90.0, unc=75.0, uc=90.0), "Critical"),
    (sensor(95.0, unr=95.0), "Critical"),
    (sensor(94.9, unr=95.0), "Nominal"),
    (sensor(10.0, lnc=10.0), "Warning"),
    (sensor(10.1, lnc=10.0), "Nominal"),
    (sensor(5.0, lc=5.0), "Critical"),
    (sensor(5.1, lc=5.0), "Nominal"),
    (sensor(1.0, lnr=1.0), "Critical"),
    (sensor(1.1, lnr=1.0), "Nominal"),
    (sensor(50.0, "Warning", unc=75.0), "Warning"),  # FreeIPMI's own word is kept when it says more
    (sensor(80.0, "Critical", unc=75.0), "Critical"),  # never lowered by a threshold only non-critical
    (sensor(50.0, "Critical"), "Critical"),
    (sensor(None, "Warning", uc=1.0), "Warning"),  # no reading: FreeIPMI's word as it is
    (sensor(None, None), None),
    (sensor(20.0, None), None),  # nothing to judge by: unknown stays unknown
])
def test_a_reading_is_judged_at_the_exact_edge_of_each_of_its_own_thresholds(s: SensorReading,
                                                                              judged: str | None) -> None:
    assert judged_state(s) == judged


def test_every_column_of_a_sensor_line_is_read_and_an_empty_field_is_no_value() -> None:
    (fan,) = parse_sensors(SENSORS + "4,FAN3,Fan,Warning,,RPM,,600.00,N/A,,N/A,,'At or Below (<=) Lower Non-Critical Threshold'\n")
    assert fan == SensorReading(name="FAN3", type="Fan", state="Warning", reading=None, unit="RPM",
                                thresholds={"Lower C": 600.0}, events=("At or Below (<=) Lower Non-Critical Threshold",))
    (psu,) = parse_sensors(SENSORS + "6,PSU2,Power Supply,,N/A,N/A,,,,,,,N/A\n")
    assert (psu.state, psu.unit, psu.events) == (None, None, ())


@pytest.mark.parametrize(("event", "read"), [
    ("'Presence detected' 'Power Supply Failure detected'", ("Presence detected", "Power Supply Failure detected")),
    ("'OK'", ()),
    ("Power Supply Failure detected", ("Power Supply Failure detected",)),  # an event column without quotes
    ("N/A", ()),
    ("", ()),
])
def test_a_sensors_events_are_its_quoted_words_or_the_whole_column_and_ok_is_none(event: str,
                                                                                   read: tuple[str, ...]) -> None:
    assert _events(event) == read


def test_a_value_that_is_not_a_number_is_quoted_in_bad_and_the_rest_of_the_line_is_read() -> None:
    bad: list[str] = []
    (t,) = parse_sensors(SENSORS + "1,CPU,Temperature,Nominal,nan,C,N/A,N/A,N/A,75.00,x,N/A,'OK'\n", bad)
    assert (t.reading, t.thresholds) == (None, {"Upper NC": 75.0})
    line = "\"1,CPU,Temperature,Nominal,nan,C,N/A,N/A,N/A,75.00,x,N/A,'OK'\""
    assert sorted(bad) == [f"not a number 'nan' in line: {line}", f"not a number 'x' in line: {line}"]


def test_an_error_quotes_the_header_that_lacks_columns_naming_each() -> None:
    with pytest.raises(ParseError) as caught:
        parse_sensors("ID,Name,Type,Reading,Units\n1,a,b,1,C\n")
    assert str(caught.value) == "ipmi-sensors: the header lacks State, Event: 'ID,Name,Type,Reading,Units'"


def test_a_header_no_csv_reader_can_read_is_not_freeipmis_output() -> None:
    with pytest.raises(ParseError) as caught:
        parse_sensors("ID," + "x" * 140_000 + "\n")
    assert str(caught.value).startswith("ipmi-sensors: not comma-separated output (field larger than field limit")
    assert str(caught.value).endswith(": " + repr("ID," + "x" * 197))


LONG = "1,CPU," + "y" * 300


@pytest.mark.parametrize(("text", "start"), [
    (SENSORS + LONG + ",Warm,1,C,,,,,,,'OK'\n", "unknown state 'Warm' in line: "),
    (SENSORS + LONG + ",Nominal,warm,C,,,,,,,'OK'\n", "not a number 'warm' in line: "),
    (SENSORS + LONG + ",Nominal\n", "ipmi-sensors: 4 fields where the header has 13: "),
])
def test_an_error_quotes_the_first_200_characters_of_its_line(text: str, start: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_sensors(text)
    assert str(caught.value) == start + repr(LONG[:200])


def test_commas_are_joined_back_only_into_an_event_that_is_the_last_column() -> None:
    header, rows = _csv("ID,Event\n1,a, b, c\n", ("Event",), "x")
    assert rows == [("1,a, b, c", ["1", "a, b, c"])]
    with pytest.raises(ParseError, match="4 fields where the header has 3"):
        _csv("ID,Event,Reading\n1,a, b,2\n", ("Event",), "x")
    assert _csv("\n \n", ("Event",), "x") == ([], [])


def test_a_sel_date_in_either_of_freeipmis_forms_is_utc_and_preinit_is_no_time() -> None:
    entries = parse_sel(SEL + "1,Nov-28-2026,09:12:44,PSU2,Power Supply,Critical,Assertion Event,AC lost\n"
                              "2,11/28/2026,09:12:44,PSU2,Power Supply,Nominal,Deassertion Event,AC lost\n"
                              "3,PreInit,PreInit,PSU2,Power Supply,Warning,Assertion Event,AC lost\n")
    assert [(e.id, e.time, e.asserted, e.state) for e in entries] == [
        (1, 1795857164.0, True, "Critical"), (2, 1795857164.0, False, "Nominal"), (3, None, True, "Warning")]


def test_a_sel_without_the_direction_column_is_all_assertions_and_a_bad_id_is_quoted() -> None:
    (e,) = parse_sel("ID,Date,Time,Name,Type,State,Event\n9,Nov-28-2026,09:12:44,FAN1,Fan,N/A,Lower Critical\n")
    assert (e.asserted, e.state, e.name, e.type, e.event) == (True, None, "FAN1", "Fan", "Lower Critical")
    with pytest.raises(ParseError) as caught:
        parse_sel("ID,Date,Time,Name,Type,State,Event\nx9,Nov-28-2026,09:12:44,FAN1,Fan,N/A,Lower Critical\n")
    assert str(caught.value) == ("ipmi-sel: record id 'x9' is not a number: "
                                 "'x9,Nov-28-2026,09:12:44,FAN1,Fan,N/A,Lower Critical'")


@pytest.mark.parametrize(("text", "info"), [
    ("Number of log entries : 10\nFree space remaining : 1440 bytes\n", SelInfo(10, 1440)),
    ("Number of log entries : 0\n", SelInfo(0, None)),
    ("Number of log entries:3\nFree space remaining:\n", SelInfo(3, None)),
])
def test_the_sel_info_is_its_entries_and_free_bytes(text: str, info: SelInfo) -> None:
    assert parse_sel_info(text) == info


def test_how_full_the_sel_is_counts_16_bytes_a_record_and_is_unknown_without_its_free_space() -> None:
    assert SelInfo(10, 1440).used_ratio == 160 / 1600
    assert SelInfo(0, 1600).used_ratio == 0.0
    assert SelInfo(100, 0).used_ratio == 1.0
    assert SelInfo(0, 0).used_ratio is None
    assert SelInfo(5, None).used_ratio is None


def test_a_sel_info_number_that_is_not_one_is_quoted() -> None:
    with pytest.raises(ParseError) as caught:
        parse_sel_info("Number of log entries : ten\n")
    assert str(caught.value) == "ipmi-sel --info: not a number in: 'Number of log entries : ten\\n'"
    with pytest.raises(ParseError, match="not a number"):
        parse_sel_info("Number of log entries : 1\nFree space remaining : lots bytes\n")


@pytest.mark.parametrize(("text", "watts"), [
    ("Current Power : 332 Watts\nPower Measurement : Active\n", 332.0),
    ("current power : 12.5 watt\n", 12.5),
    ("Current Power : 0 Watts\npower measurement : ACTIVE\n", 0.0),
    ("Current Power : 0 Watts\nPower Measurement : Not Available\n", None),
])
def test_dcmi_power_is_read_in_any_case_and_only_while_measured(text: str, watts: float | None) -> None:
    assert parse_dcmi_power(text) == watts


def test_a_dcmi_power_that_is_not_watts_is_quoted() -> None:
    with pytest.raises(ParseError) as caught:
        parse_dcmi_power("Current Power : 332 kW\n")
    assert str(caught.value) == "ipmi-dcmi: cannot read the power '332 kW'"


def test_a_dcmi_answer_without_its_power_line_is_quoted_to_200_characters() -> None:
    text = "Power Measurement : Active\n" + "z" * 300
    with pytest.raises(ParseError) as caught:
        parse_dcmi_power(text)
    assert str(caught.value) == "ipmi-dcmi: no 'Current Power' line in: " + repr(text[:200])
