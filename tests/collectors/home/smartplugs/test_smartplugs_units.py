"""A smart plug's payloads and its meter, message by message, with no broker: Shelly's and Tasmota's
documented payloads read as watts and joules (errors quote the payload), the meter books a
counter's steps and a reboot's new count, never more than the plug can pass, integrates watts by
the trapezoid only between readings close together, and the words of its findings are exact."""

from __future__ import annotations

import pytest

from collectors.base import ParseError
from collectors.findings import WARN, Judging
from collectors.home.smartplugs.findings import all_clear, findings, plug_findings
from collectors.home.smartplugs.meter import SETTLE, SLACK_J, Meter
from collectors.home.smartplugs.payloads import JOULES, Reading, dig, parse_paths, parse_shelly, parse_tasmota
from collectors.home.smartplugs.state import PlugView, SmartplugsState

SHELLY = (b'{"id":0,"source":"timer","output":true,"apower":8.9,"voltage":237.5,"current":0.068,'
          b'"aenergy":{"total":6.532,"by_minute":[45.947,47.576,49.013],"minute_ts":1654511972}}')
TASMOTA = (b'{"Time":"2026-11-28T10:00:00","ENERGY":{"TotalStartTime":"2026-01-02T10:11:12",'
           b'"Total":12.345,"Yesterday":0.512,"Today":0.231,"Power":45,"Voltage":231,"Current":0.301}}')


def test_shellys_switch_status_is_watts_and_its_watt_hours_in_joules() -> None:
    assert parse_shelly(SHELLY) == Reading(8.9, 6.532 * 3600)


def test_tasmotas_sensor_is_watts_and_its_kilowatt_hours_in_joules() -> None:
    assert parse_tasmota(TASMOTA) == Reading(45.0, 12.345 * 3.6e6)


def test_a_multi_channel_tasmota_sums_its_channels() -> None:
    r = parse_tasmota(b'{"ENERGY":{"Total":1,"Power":[12,30,null]}}')
    assert r.watts == 42.0
    assert parse_tasmota(b'{"ENERGY":{"Total":1,"Power":[]}}').watts is None


@pytest.mark.parametrize(("path", "value"), [("a.b", 1), ("a.c.1", "y"), ("a.c.5", None), ("a.c.x", None),
                                             ("a.b.c", None), ("z", None)])
def test_a_dotted_path_reaches_into_objects_and_lists(path: str, value: object) -> None:
    assert dig({"a": {"b": 1, "c": ["x", "y"]}}, path) == value


@pytest.mark.parametrize(("payload", "words"), [
    (b"not json", "not JSON: b'not json'"),
    (b"[1, 2]", "not a JSON object: b'[1, 2]'"),
    (b'{"apower": "lots"}', "power 'lots' is not a finite number in: "),
    (b'{"apower": true}', "power is not a number in: "),
    (b'{"apower": {"x": 1}}', "power is not a number in: "),
    (b'{"apower": 5, "aenergy": {"total": -1}}', "energy -1 is negative in: "),
    (b'{"voltage": 230}', "neither 'apower' nor 'aenergy.total' in: "),
])
def test_a_payload_that_cannot_be_read_is_a_parse_error_quoting_it(payload: bytes, words: str) -> None:
    with pytest.raises(ParseError) as err:
        parse_shelly(payload)
    assert str(err.value).startswith(words)


def test_negative_watts_are_read_and_left_to_the_meter_to_refuse() -> None:
    assert parse_shelly(b'{"apower": -5}') == Reading(-5.0, None)


def test_a_custom_plug_reads_its_own_paths_and_unit() -> None:
    assert parse_paths(b'{"p": 3, "e": 2}', "p", "e", "J") == Reading(3.0, 2.0)
    assert parse_paths(b'{"e": 2}', None, "e", "kWh") == Reading(None, 2 * 3.6e6)
    assert parse_paths(b'{"p": "4.5"}', "p", None, "Wh") == Reading(4.5, None)
    assert JOULES == {"Wh": 3600.0, "kWh": 3.6e6, "J": 1.0}


def counting() -> Meter:
    return Meter("rack", "shelly", quiet=60.0, integrated=False, max_watts=100.0)


def test_the_first_message_is_where_the_counter_stands_and_no_energy_yet() -> None:
    m = counting()
    m.update(Reading(10.0, 5000.0), 0.0)
    assert (m.energy, m.counter, m.watts, m.heard, m.error) == (0.0, 5000.0, 10.0, 0.0, None)


def test_a_counters_steps_are_booked_and_a_reboot_counts_from_zero() -> None:
    m = counting()
    for at, c in ((0.0, 5000.0), (10.0, 5600.0), (20.0, 300.0), (30.0, 900.0)):
        m.update(Reading(50.0, c), at)
    assert m.energy == 600.0 + 300.0 + 600.0
    assert m.error is None


def test_a_step_of_exactly_what_the_plug_can_pass_is_booked_and_more_is_a_bad_read() -> None:
    m = counting()
    m.update(Reading(None, 0.0), 0.0)
    m.update(Reading(None, 100.0 * 10 + SLACK_J), 10.0)
    assert m.energy == 1000.0 + SLACK_J and m.error is None
    m.update(Reading(None, m.counter + 100.0 * 10 + SLACK_J + 1), 20.0)
    assert m.energy == 1000.0 + SLACK_J
    assert m.error == "counter 1.27778 Wh -> 2.55583 Wh: more than 100 W could pass since the last reading, a bad read, skipped"


def test_a_counter_that_stays_at_a_new_value_settle_times_is_its_new_base_booked_nowhere() -> None:
    m = counting()
    m.update(Reading(None, 0.0), 0.0)
    for i in range(SETTLE):
        m.update(Reading(None, 3.6e9 + i), 1.0 + i)
    assert m.energy == 0.0 and m.counter == 3.6e9 + SETTLE - 1
    assert m.error == "counter moved to 1e+06 Wh and stayed: taken as its new base, the jump not booked"
    m.update(Reading(None, 3.6e9 + SETTLE - 1 + 50), 10.0)
    assert m.energy == 50.0 and m.error is None


def test_a_flapping_counter_never_settles_and_books_nothing() -> None:
    m = counting()
    m.update(Reading(None, 0.0), 0.0)
    for i in range(10):
        m.update(Reading(None, 3.6e9 if i % 2 else 0.0), 1.0 + i)
    assert m.energy == 0.0


@pytest.mark.parametrize("watts", [-1.0, 100.5])
def test_watts_outside_what_the_plug_passes_are_a_bad_read(watts: float) -> None:
    m = counting()
    m.update(Reading(20.0, None), 0.0)
    m.update(Reading(watts, None), 1.0)
    assert m.watts == 20.0
    assert m.error == f"{watts:g} W is a bad read (a plug passes 0 to 100 W): skipped"


def integrating() -> Meter:
    return Meter("lamp", "tasmota", quiet=60.0, integrated=True, max_watts=100.0)


def test_watts_are_integrated_by_the_trapezoid_between_close_readings_only() -> None:
    m = integrating()
    m.update(Reading(10.0, None), 0.0)
    assert m.energy == 0.0
    m.update(Reading(30.0, None), 10.0)
    assert m.energy == 200.0
    m.update(Reading(30.0, None), 100.0)  # 90 s of silence, more than quiet: nothing guessed
    assert m.energy == 200.0
    m.update(Reading(50.0, None), 160.0)  # exactly quiet: counted
    assert m.energy == 200.0 + 40.0 * 60
    m.update(Reading(None, None), 170.0)
    assert m.energy == 2600.0


def test_a_plug_is_silent_once_quiet_has_passed_since_it_was_heard_or_since_the_start() -> None:
    m = integrating()
    m.started = 0.0
    assert m.view(60.0).silent is False
    assert m.view(60.5).silent is True and m.view(60.5).watts is None
    m.update(Reading(12.0, None), 100.0)
    v = m.view(110.0)
    assert (v.silent, v.watts, v.method, v.last_seen) == (False, 12.0, "integrated", 100.0)
    assert Meter("x", "shelly", 60.0, False).view(0.0).silent is True  # never started, never heard


def test_a_restored_meter_goes_on_from_its_stored_view() -> None:
    m = counting()
    m.restore(PlugView(name="rack", energy_joules=7200.0, counter_joules=100.0, last_seen=50.0, watts=5.0))
    assert (m.energy, m.counter, m.heard, m.counted, m.watts) == (7200.0, 100.0, 50.0, 50.0, 5.0)
    m.update(Reading(None, 200.0), 60.0)
    assert m.energy == 7300.0


def test_the_findings_of_a_silent_plug_say_for_how_long_and_a_bad_message_says_why() -> None:
    silent = PlugView(name="rack", silent=True, last_seen=1000.0)
    assert [f.text for f in plug_findings(silent, 1000.0 + 3 * 3600 + 5 * 60)] == ["smart plug rack: no data for 3 h 5 min"]
    assert [f.text for f in plug_findings(silent, 1000.0 + 59 * 60)] == ["smart plug rack: no data for 59 min"]
    never = PlugView(name="tv", silent=True)
    (f,) = plug_findings(never, 0.0)
    assert (f.text, f.rule, f.subject, f.labels) == ("smart plug tv: no data yet", "smartplug_silent", "tv", {"plug": "tv"})
    odd = PlugView(name="tv", error="boom")
    assert [(f.text, f.rule) for f in plug_findings(odd, 0.0)] == [("smart plug tv: its last message could not be read: boom",
                                                                    None)]


def test_the_broker_away_is_said_once_only_when_every_plug_is_silent() -> None:
    plugs = [PlugView(name="a", silent=True), PlugView(name="b", silent=True)]
    said = [f.text for f in findings(SmartplugsState(plugs=plugs, broker_error="broker down"), Judging(now=0.0))]
    assert said[-1] == "smart plugs: broker down" and len(said) == 3
    plugs[1] = PlugView(name="b", watts=4.0)
    said = [f.text for f in findings(SmartplugsState(plugs=plugs, broker_error="broker down"), Judging(now=0.0))]
    assert "smart plugs: broker down" not in said
    assert findings(SmartplugsState(broker_error="broker down"), Judging(now=0.0)) == []


def test_the_tiles_sentence_counts_the_plugs_drawing_and_their_watts() -> None:
    j = Judging(now=0.0)
    assert all_clear(SmartplugsState(plugs=[PlugView(name="a", watts=10.4), PlugView(name="b", watts=20.3),
                                            PlugView(name="c")]), j) == "2 plugs drawing 31 W"
    assert all_clear(SmartplugsState(plugs=[PlugView(name="a", watts=5.0)]), j) == "1 plug drawing 5 W"
    assert all_clear(SmartplugsState(plugs=[PlugView(name="a")]), j) is None


# -- the edges make mutation found unpinned ------------------------------------------------------------


@pytest.mark.parametrize(("seconds", "words"), [(59 * 60 + 59, "59 min"), (60 * 60, "1 h 0 min"),
                                                (61 * 60 + 30, "1 h 1 min"), (125 * 60, "2 h 5 min"), (89.9, "1 min")])
def test_a_silence_is_said_in_whole_minutes_and_hours(seconds: float, words: str) -> None:
    (f,) = plug_findings(PlugView(name="p", silent=True, last_seen=1000.0), 1000.0 + seconds)
    assert f.text == f"smart plug p: no data for {words}"


def test_every_finding_is_a_warning_and_a_bad_message_is_about_its_plug() -> None:
    found = plug_findings(PlugView(name="p", silent=True, error="boom"), 0.0)
    assert [f.level for f in found] == [WARN, WARN]
    assert found[1].labels == {"plug": "p"}
    (broker,) = [f for f in findings(SmartplugsState(plugs=[PlugView(name="p", silent=True)], broker_error="down"),
                                     Judging(now=0.0)) if f.text.startswith("smart plugs:")]
    assert broker.level == WARN


def test_a_plug_drawing_nothing_counts_as_zero_watts_in_the_tile() -> None:
    plugs = [PlugView(name="a", watts=0.0), PlugView(name="b", watts=0.0)]
    assert all_clear(SmartplugsState(plugs=plugs), Judging(now=0.0)) == "2 plugs drawing 0 W"


def test_the_section_marks_each_plug_by_its_own_findings() -> None:
    from collectors.home.smartplugs.findings import view

    state = SmartplugsState(plugs=[PlugView(name="a", silent=True), PlugView(name="b", watts=3.0)], broker_error="x")
    v = view(state, findings(state, Judging(now=0.0)))
    assert [(p.name, level) for p, level in v["plugs"]] == [("a", "warning"), ("b", "ok")]  # type: ignore[attr-defined]
    assert v["broker_error"] == "x" and isinstance(v["now"], float)


def test_a_counter_standing_still_books_nothing_and_is_not_a_reboot() -> None:
    m = counting()
    m.update(Reading(None, 1e9), 0.0)
    m.update(Reading(None, 1e9), 1.0)
    assert m.energy == 0.0 and m.error is None


def test_a_step_within_the_slack_at_the_same_instant_is_booked_and_one_past_it_is_not() -> None:
    m = counting()
    m.update(Reading(None, 0.0), 5.0)
    m.update(Reading(None, SLACK_J), 5.0)
    assert m.energy == SLACK_J
    m.update(Reading(None, 2 * SLACK_J + 50.0), 5.5)  # half a second: at most 50 J and the slack
    assert m.energy == 2 * SLACK_J + 50.0 and m.error is None
    m.update(Reading(None, 3 * SLACK_J + 101.0), 6.0)
    assert m.energy == 2 * SLACK_J + 50.0 and m.error is not None


def test_readings_that_agree_within_exactly_the_slack_settle_as_a_new_base() -> None:
    m = counting()
    m.update(Reading(None, 0.0), 0.0)
    for i, c in enumerate((1e9, 1e9 + SLACK_J, 1e9)):
        m.update(Reading(None, c), 1.0 + i)
    assert m.counter == 1e9 and m.error is not None and "new base" in m.error


@pytest.mark.parametrize(("watts", "bad"), [(0.0, False), (0.5, False), (100.0, False), (100.01, True)])
def test_watts_from_zero_to_exactly_max_watts_are_good(watts: float, bad: bool) -> None:
    m = counting()
    m.update(Reading(watts, None), 0.0)
    assert (m.error is not None) is bad and (m.watts is None) is bad


def test_readings_close_together_are_integrated_and_two_at_the_same_instant_add_nothing() -> None:
    m = integrating()
    m.update(Reading(10.0, None), 0.0)
    m.update(Reading(10.0, None), 0.5)
    assert m.energy == 5.0
    m.update(Reading(30.0, None), 0.5)
    assert m.energy == 5.0


def test_a_meters_view_says_its_kind_and_how_it_counts() -> None:
    v = counting().view(0.0)
    assert (v.kind, v.method) == ("shelly", "counter")
    assert Meter("x", "tasmota", 60.0, True).view(0.0).kind == "tasmota"


def test_payload_errors_quote_200_bytes_of_it() -> None:
    long = b"x" * 300
    with pytest.raises(ParseError) as err:
        parse_shelly(long)
    assert str(err.value) == f"not JSON: {long[:200]!r}"
    payload = b'{"apower": "lots", "pad": "' + b"y" * 300 + b'"}'
    with pytest.raises(ParseError) as err:
        parse_shelly(payload)
    assert str(err.value) == f"power 'lots' is not a finite number in: {payload[:200]!r}"
    payload = b'{"apower": [1, {"a": 2}], "pad": "' + b"y" * 300 + b'"}'
    with pytest.raises(ParseError) as err:
        parse_shelly(payload)
    assert str(err.value) == f"power is not a number in: {payload[:200]!r}"
    payload = b'{"apower": 1, "aenergy": {"total": -2}, "pad": "' + b"y" * 300 + b'"}'
    with pytest.raises(ParseError) as err:
        parse_shelly(payload)
    assert str(err.value) == f"energy -2 is negative in: {payload[:200]!r}"


def test_a_counter_of_zero_or_a_fraction_is_a_reading() -> None:
    assert parse_shelly(b'{"aenergy": {"total": 0}}') == Reading(None, 0.0)
    assert parse_shelly(b'{"aenergy": {"total": 0.5}}') == Reading(None, 1800.0)


def test_a_list_index_past_its_end_is_nothing() -> None:
    assert dig({"a": [1, 2]}, "a.2") is None


def test_a_meter_restored_without_a_time_goes_on_from_its_next_message() -> None:
    m = counting()
    m.restore(PlugView(name="rack", energy_joules=10.0, counter_joules=100.0, last_seen=None))
    m.update(Reading(None, 150.0), 5.0)
    assert m.energy == 60.0 and m.error is None
