"""What a BMC says is wrong, finding by finding, with the exact words, rule, subject and labels:
a threshold sensor past its limit ("FAN3: 0 RPM below 600"), a discrete one's events, lost PSU
redundancy, a burst of SEL entries said once with its count, a log nearly full, a BMC away (a
remote one holds its SEL findings; this host's own is a warning); and the tile's sentence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from collectors.findings import BAD, WARN, Judging
from collectors.host.ipmi.findings import (
    _phrase,
    all_clear,
    bmc_findings,
    event_words,
    findings,
    redundancy_lost,
    sensor_words,
    view,
)
from collectors.host.ipmi.state import BmcView, IpmiState, SelEvent, Sensor


def fan(reading: float | None, **change: Any) -> Sensor:
    return Sensor(**{"name": "FAN3", "type": "Fan", "state": "Critical", "reading": reading, "unit": "RPM",
                     "thresholds": {"Lower NR": 300.0, "Lower C": 600.0, "Lower NC": 800.0, "Upper C": 9000.0}, **change})


@pytest.mark.parametrize(("sensor", "words"), [
    (fan(0.0), "0 RPM below 300"),
    (fan(500.0), "500 RPM below 600"),
    (fan(600.0), "600 RPM below 600"),
    (fan(700.0), "700 RPM below 800"),
    (fan(5000.0), "5000 RPM"),
    (fan(9000.0), "9000 RPM above 9000"),
    (fan(9500.0, thresholds={"Upper NC": 9100.0, "Upper C": 9200.0, "Upper NR": 9400.0}), "9500 RPM above 9400"),
    (fan(9150.0, thresholds={"Upper NC": 9100.0, "Upper C": 9200.0, "Upper NR": None}), "9150 RPM above 9100"),
    (Sensor(name="CPU Temp", type="Temperature", reading=91.0, unit="C", thresholds={"Upper C": 90.0}), "91 °C above 90"),
    (Sensor(name="T", type="Temperature", reading=20.5, unit="F"), "20.5 °F"),
    (Sensor(name="X", type="Other", reading=3.0), "3"),
])
def test_a_threshold_sensor_is_said_with_the_limit_it_is_past(sensor: Sensor, words: str) -> None:
    assert sensor_words(sensor) == words


def test_a_discrete_sensor_says_its_events_leaving_out_the_benign_beside_a_failure() -> None:
    psu = Sensor(name="PSU2 Status", type="Power Supply",
                 events=["Presence detected", "Power Supply Failure detected", "Power Supply AC lost"])
    assert sensor_words(psu) == "power supply failure detected, power supply AC lost"
    assert sensor_words(Sensor(name="P", type="Power Supply", events=["Presence detected"])) == "presence detected"
    assert sensor_words(Sensor(name="P", type="Power Supply")) == "–"


@pytest.mark.parametrize(("event", "clause"), [("Power Supply Failure detected", "power supply failure detected"),
                                               ("Correctable ECC", "correctable ECC"), ("A B", "a b"),
                                               ("AC lost", "AC lost")])
def test_an_event_is_said_as_a_clause_keeping_acronyms(event: str, clause: str) -> None:
    assert _phrase(event) == clause


def test_psu_redundancy_is_lost_only_for_a_power_sensor_saying_so() -> None:
    assert redundancy_lost(Sensor(name="PS Redundancy", type="Power Supply", events=["Redundancy Lost"]))
    assert redundancy_lost(Sensor(name="PS", type="power unit", events=["Non-redundant:Sufficient Resources"]))
    assert not redundancy_lost(Sensor(name="PS", type="Power Supply", events=["Fully Redundant"]))
    assert not redundancy_lost(Sensor(name="Fan Redundancy", type="Fan", events=["Redundancy Lost"]))


def sel(i: int, **change: Any) -> SelEvent:
    return SelEvent(**{"id": i, "name": "DIMM A1", "type": "Memory", "state": "Warning",
                       "event": "Correctable ECC ; Event Data3 = 0Ah", **change})


def test_a_memory_event_names_its_module_and_others_are_said_as_they_are() -> None:
    assert event_words(sel(1)) == "DIMM A1: correctable ECC (memory module 10)"
    assert event_words(sel(1, type="Power Supply", name="PSU2", event="Power Supply AC lost")) == "PSU2: power supply AC lost"


def bmc(**change: Any) -> BmcView:
    return BmcView(**{"name": "r720", "remote": True, "up": True, **change})


def said(b: BmcView, state: IpmiState | None = None) -> list[tuple[str, str, str | None, str]]:
    return [(f.level, f.text, f.rule, f.subject) for f in bmc_findings(b, state or IpmiState(bmcs=[b]))]


def test_sensors_critical_warning_and_redundancy_lost_name_the_bmc_and_sensor() -> None:
    b = bmc(sensors=[fan(0.0), fan(700.0, name="FAN1", state="Warning"), fan(5000.0, name="FAN2", state="Nominal"),
                     Sensor(name="PS Redundancy", type="Power Supply", state="Critical", events=["Redundancy Lost"])])
    assert said(b) == [
        (BAD, "r720: FAN3: 0 RPM below 300", "ipmi_sensor_critical", "r720/FAN3"),
        (WARN, "r720: FAN1: 700 RPM below 800", "ipmi_sensor_warning", "r720/FAN1"),
        (BAD, "r720: PS Redundancy: redundancy lost", "ipmi_psu_redundancy_lost", "r720/PS Redundancy")]
    assert bmc_findings(b, IpmiState())[0].labels == {"bmc": "r720", "sensor": "FAN3"}


def test_this_hosts_own_bmc_is_not_named_in_its_words() -> None:
    assert said(bmc(name="local", remote=False, sensors=[fan(0.0)]))[0][1] == "FAN3: 0 RPM below 300"


def test_a_burst_of_the_same_sel_entry_is_one_finding_with_its_count_and_first_record() -> None:
    b = bmc(held=[sel(7), sel(8), sel(9), sel(10, state="Critical", name="PSU2", type="Power Supply",
                                             event="Power Supply Failure detected")])
    found = bmc_findings(b, IpmiState())
    assert [(f.level, f.text, f.rule, f.subject) for f in found] == [
        (WARN, "r720: event log: DIMM A1: correctable ECC (memory module 10), 3 times", "ipmi_sel_warning", "r720#7"),
        (BAD, "r720: event log: PSU2: power supply failure detected", "ipmi_sel_critical", "r720#10")]
    assert found[0].labels == {"bmc": "r720", "sensor": "DIMM A1"}


@pytest.mark.parametrize(("used", "full", "said_it"), [(0.89, None, False), (0.9, None, True), (0.5, 0.5, True),
                                                       (0.49, 0.5, False), (None, None, False)])
def test_a_log_nearly_full_is_said_from_its_configured_share(used: float | None, full: float | None,
                                                            said_it: bool) -> None:
    b = bmc(sel_used_ratio=used)
    state = IpmiState(bmcs=[b], sel_full_ratio=full)
    found = said(b, state)
    assert bool(found) is said_it
    if said_it:
        assert found == [(WARN, f"r720: system event log {used:.0%} full: a full log drops new events (read it, "
                                "then clear it: ipmi-sel --clear)", "ipmi_sel_full", "r720")]


def test_a_remote_bmc_away_is_unreachable_and_keeps_its_held_sel_findings() -> None:
    b = bmc(up=False, error="connection timed out", held=[sel(3)], sensors=[fan(0.0)])
    assert said(b) == [(BAD, "BMC r720 unreachable: connection timed out", "ipmi_unreachable", "r720"),
                       (WARN, "r720: event log: DIMM A1: correctable ECC (memory module 10)", "ipmi_sel_warning", "r720#3")]


def test_this_hosts_bmc_that_cannot_be_read_is_a_warning_without_a_rule() -> None:
    b = bmc(name="local", remote=False, up=False, error="no /dev/ipmi0", held=[sel(3)])
    assert said(b) == [(WARN, "this host's BMC: no /dev/ipmi0", None, "")]


def test_findings_cover_every_bmc_and_the_tile_counts_those_up_and_their_sensors() -> None:
    up = bmc(sensors=[fan(5000.0, state="Nominal"), fan(4000.0, name="FAN2", state="Nominal")])
    away = bmc(name="r630", up=False, error="x")
    state = IpmiState(bmcs=[up, away])
    assert [f.rule for f in findings(state, Judging(now=0.0))] == ["ipmi_unreachable"]
    assert all_clear(state, Judging(now=0.0)) == "1 BMC, 2 sensors nominal"
    assert all_clear(IpmiState(bmcs=[up, bmc(name="b")]), Judging(now=0.0)) == "2 BMCs, 2 sensors nominal"
    assert all_clear(IpmiState(bmcs=[away]), Judging(now=0.0)) is None


def test_the_section_lists_failing_sensors_first_and_the_log_newest_first() -> None:
    b = bmc(sensors=[fan(5000.0, name="A", state="Nominal"), fan(0.0, name="B"), fan(700.0, name="C", state="Warning"),
                     Sensor(name="empty", type="Other")],
            recent=[sel(1), sel(2, name="DIMM B1")])
    state = IpmiState(bmcs=[b])
    v = view(state, findings(state, Judging(now=0.0)))
    (one,) = v["bmcs"]  # type: ignore[misc]
    assert [s.name for s, _, _ in one["sensors"]] == ["B", "C", "A"]
    assert [words for _, words in one["recent"]] == ["DIMM B1: correctable ECC (memory module 10)",
                                                     "DIMM A1: correctable ECC (memory module 10)"]
    assert one["level"] == "failing"


def test_an_event_changes_only_in_case_its_spacing_and_hex_module_number_as_written() -> None:
    assert _phrase("Power  Supply AC lost") == "power  supply AC lost"
    assert event_words(sel(1, event="Correctable ECC ; Event Data3 = 10h")) == "DIMM A1: correctable ECC (memory module 16)"


def test_two_of_the_same_sel_entry_are_said_as_two_times() -> None:
    (f,) = bmc_findings(bmc(held=[sel(7), sel(8)]), IpmiState())
    assert f.text == "r720: event log: DIMM A1: correctable ECC (memory module 10), 2 times"


def test_every_finding_carries_the_labels_naming_its_bmc_and_sensor() -> None:
    sensors = [fan(0.0), fan(700.0, name="FAN1", state="Warning"),
               Sensor(name="PS Redundancy", type="Power Supply", state="Critical", events=["Redundancy Lost"])]
    up = bmc_findings(bmc(sensors=sensors, sel_used_ratio=0.95), IpmiState())
    assert [f.labels for f in up] == [{"bmc": "r720", "sensor": "FAN3"}, {"bmc": "r720", "sensor": "FAN1"},
                                      {"bmc": "r720", "sensor": "PS Redundancy"}, {"bmc": "r720"}]
    away = bmc_findings(bmc(up=False, error="x"), IpmiState())
    local = bmc_findings(bmc(name="local", remote=False, up=False, error="x"), IpmiState())
    assert [f.labels for f in away + local] == [{"bmc": "r720"}, {"bmc": "local"}]


def test_the_section_judges_each_bmc_and_each_sensor_by_its_own_findings_only() -> None:
    failing = bmc(sensors=[fan(0.0, name="B"), fan(700.0, name="C", state="Warning"),
                           Sensor(name="PSU", type="Power Supply", state="Nominal")])
    fine = bmc(name="r630", sensors=[fan(5000.0, name="B", state="Nominal")])
    state = IpmiState(bmcs=[failing, fine])
    first, second = view(state, findings(state, Judging(now=0.0)))["bmcs"]  # type: ignore[misc]
    assert (first["bmc"], first["level"], second["bmc"], second["level"]) == (failing, "failing", fine, "ok")
    assert [(s.name, level) for s, level, _ in first["sensors"]] == [("B", "failing"), ("C", "warning"), ("PSU", "ok")]
    assert [(s.name, level) for s, level, _ in second["sensors"]] == [("B", "ok")]


@pytest.mark.parametrize("speed", [1.0, 2.0, 4.0, 8.0])
def test_the_demos_bmc_log_news_ages_out_before_its_story_loop_restarts_at_any_speed(tmp_path: Path,
                                                                                   speed: float) -> None:
    """60 real seconds held PSU2's entry (logged at story second 200) through the whole next loop
    at --speed 4, where a loop is 60 s: "BMC event log: critical entry" at every moment."""
    from collectors.host.ipmi.demo import ECC_BURST, LOOP, PSU_DOWN, demo_section

    hold = float(demo_section(["tool"], tmp_path, 2.0, speed)["sel_hold"])  # type: ignore[arg-type]
    for logged in (PSU_DOWN[0], ECC_BURST):
        assert logged + hold * speed < LOOP  # in story seconds: gone before the loop begins again
    assert hold * speed >= 20  # and news for a while: a reader sees it
