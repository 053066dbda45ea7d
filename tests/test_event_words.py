"""Inventory changes read as sentences, start-up bursts read as one line, and the filters hold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.events import change_words, collapse, describe, href_of, level_of, select_lines
from collectors import plugins
from tests.test_web import demo_app, fetch


def ev(kind: str, key: str, field: str, old: str | None, new: str | None, ts: float = 1000.0,
       collector: str | None = None) -> dict[str, Any]:
    return {"kind": kind, "key": key, "field": field, "old": old, "new": new, "ts": ts, "collector": collector}


@pytest.mark.parametrize(("field", "old", "new", "words"), [
    ("present", None, "appeared", "appeared"),
    ("present", "present", "gone", "is gone"),
    ("present", "gone", "back", "is back"),
    ("speed_mbps", "21", None, "speed: 21 Mbit/s → unknown"),
    ("up", "true", "false", "link: up → down"),
    ("degraded", "false", "true", "degraded: no → yes"),
    ("health", "ok", "failing", "health: ok → failing"),
    ("last_reset", "Waiting for NHT", "Peer closed the session", "last reset: Waiting for NHT → Peer closed the session"),
    ("temperature_celsius", "41", "48", "temperature: 41 °C → 48 °C"),
    ("model", None, "WD80", "model: none → WD80"),
    ("members", '["sdg1", "sdh1"]', '["sdg1", "sdm1"]', "members: sdh1 left; sdm1 joined"),
    ("ok", "true", None, "ok: yes → none"),
])
def test_a_change_reads_as_words_with_units_and_no_internal_names(field: str, old: str | None, new: str | None,
                                                                  words: str) -> None:
    assert change_words(field, old, new) == words


@pytest.mark.parametrize(("kind", "field", "old", "new", "level"), [
    ("disk", "present", None, "appeared", "info"),
    ("disk", "present", "present", "gone", "warning"),
    ("disk", "present", "gone", "back", "ok"),
    ("disk", "health", "ok", "failing", "failing"),
    ("disk", "health", "failing", "warning", "warning"),
    ("disk", "health", "warning", "ok", "ok"),
    ("md_member", "state", "active", "failed", "failing"),
    ("md_member", "state", "spare", "rebuilding", "warning"),
    ("md_array", "state", "clean", "clean, degraded", "failing"),
    ("md_array", "degraded", "false", "true", "failing"),
    ("md_array", "degraded", "true", "false", "ok"),
    ("bond_slave", "up", "true", "false", "failing"),
    ("bond_slave", "up", "false", "true", "ok"),
    ("bgp_peer", "state", "Established", "Active", "failing"),
    ("bgp_peer", "state", "Connect", "Established", "ok"),
    ("switch_port", "oper", "up", "down", "failing"),
    ("switch_port", "oper", "down", "lowerLayerDown", "failing"),
    ("bgp_peer", "last_reset", "a", "b", "info"),
    ("bond_slave", "speed_mbps", "21", None, "info"),
])
def test_each_change_has_the_level_a_person_would_give_it(kind: str, field: str, old: str | None, new: str | None,
                                                          level: str) -> None:
    assert level_of(kind, field, old, new) == level


def test_a_line_names_the_thing_in_words_and_links_to_its_page() -> None:
    line = describe(ev("md_member", "md0:ZA1049HK", "state", "active", "failed", collector="mdraid"), plugins(), "/h/nas")
    assert (line.what, line.change, line.domain, line.href) == (
        "Array member md0:ZA1049HK", "state: active → failed", "disks", "/h/nas/entity/md_member/md0%3AZA1049HK")
    assert href_of("disk", "ZA/1 #2") == "/disks/ZA%2F1%20%232"
    assert href_of("bay", "shelf 1, bay 7") == "/disks"
    unknown = describe(ev("gizmo_part", "g1", "present", None, "appeared"), plugins())
    assert (unknown.what, unknown.domain) == ("Gizmo part g1", "other")


def test_a_start_up_burst_becomes_one_line_per_kind_and_a_later_one_its_own() -> None:
    newest_first = [
        ev("disk", "ZA1", "health", "ok", "failing", ts=5000),
        ev("disk", "NEW1", "present", None, "appeared", ts=4000),  # one disk added later: a line of its own
        *[ev("disk", f"S{i}", "present", None, "appeared", ts=1000 + i) for i in (10, 9, 2, 1)],
        *[ev("bay", f"bay {i}", "present", None, "appeared", ts=1000 + i) for i in (3, 2, 1)],
        ev("ups", "ups", "present", None, "appeared", ts=1000),
    ]
    lines = collapse(newest_first, plugins())
    assert [(ln.what, ln.change) for ln in lines] == [
        ("Disk ZA1", "health: ok → failing"), ("Disk NEW1", "appeared"), ("4 disks", "appeared"),
        ("3 bays", "appeared"), ("UPS ups", "appeared")]
    assert lines[2].members == ["S1", "S2", "S9", "S10"] and lines[2].href is None
    assert [ln.what for ln in collapse(newest_first[2:4], plugins())] == ["Disk S10", "Disk S9"]  # two is not a burst


def test_bursts_further_apart_than_the_window_stay_apart() -> None:
    events = [ev("disk", f"A{i}", "present", None, "appeared", ts=9000 - i) for i in range(3)]
    events += [ev("disk", f"B{i}", "present", None, "appeared", ts=1000 - i) for i in range(3)]
    assert [ln.what for ln in collapse(events, plugins())] == ["3 disks", "3 disks"]


def test_filters_keep_only_the_domain_and_level_asked_for() -> None:
    lines = collapse([ev("disk", "ZA1", "health", "ok", "failing", collector="smart"),
                      ev("switch_port", "sw/1", "oper", "down", "up", collector="snmp"),
                      ev("disk", "ZA2", "health", "failing", "ok", collector="smart")], plugins())
    assert [ln.what for ln in select_lines(lines, domain="disks")] == ["Disk ZA1", "Disk ZA2"]
    assert [ln.what for ln in select_lines(lines, level="ok")] == ["Switch port sw/1", "Disk ZA2"]
    assert [ln.what for ln in select_lines(lines, domain="network", level="failing")] == []


def test_the_events_page_filters_by_domain_and_severity(tmp_path: Path) -> None:
    app = demo_app(tmp_path, 80, runs=2)
    disks = fetch(app, "/events", params={"domain": "disks"}).text
    assert "Disk ZA1049HK" in disks and "Switch port" not in disks and '<option value="disks" selected>' in disks
    failing = fetch(app, "/events", params={"level": "failing"}).text
    assert "health: ok → failing" in failing and "appeared" not in failing
    assert "Nothing matches these filters." in fetch(app, "/events", params={"domain": "home", "level": "failing"}).text


@pytest.mark.parametrize(("plugin", "field", "old", "new", "words"), [
    ("megaraid", "state", "Onln", "UBad", "state: online → unconfigured bad (Onln → UBad)"),
    ("megaraid", "state", "Optl", "Dgrd", "state: optimal → degraded (Optl → Dgrd)"),
    ("zfs", "state", "ONLINE", "FAULTED", "state: online → faulted"),  # the same words, in lower case
    ("frr", "state", "Established", "Active", "session: up → down (Established → Active)"),
    ("nut", "status", "OL", "OB DISCHRG LB", "status: on mains → on battery, low battery, discharging "
                                             "(OL → OB DISCHRG LB)"),
    ("mdraid", "sync_action", "idle", "recover", "sync: idle → rebuilding (idle → recover)"),
])
def test_a_tools_raw_states_read_as_words_with_the_raw_ones_beside(plugin: str, field: str, old: str, new: str,
                                                                   words: str) -> None:
    assert change_words(field, old, new, plugins()[plugin]) == words


@pytest.mark.parametrize(("kind", "field", "old", "new", "level"), [
    ("zfs_device", "state", "ONLINE", "FAULTED", "failing"),
    ("zfs_device", "state", "ONLINE", "UNAVAIL", "failing"),
    ("megaraid_pd", "state", "Onln", "UBad", "failing"),
    ("megaraid_pd", "state", "UBad", "Rbld", "warning"),
    ("megaraid_vd", "state", "Dgrd", "Optl", "ok"),
    ("ups", "status", "OL", "OB DISCHRG", "warning"),
    ("ups", "status", "OB", "OB DISCHRG LB", "failing"),
    ("ups", "status", "OB", "OL CHRG", "ok"),
    ("bgp_peer", "state", "Established", "Idle (Admin)", "warning"),
])
def test_a_tools_state_has_the_level_its_words_say(kind: str, field: str, old: str, new: str, level: str) -> None:
    from app.words import owner

    assert level_of(kind, field, old, new, owner(kind, plugins())) == level


def test_a_field_that_keeps_toggling_reads_as_one_line_saying_how_often() -> None:
    compressor = [ev("heatpump", "isg", "compressor", "true" if i % 2 else "false", "false" if i % 2 else "true",
                     ts=2000.0 - 15 * i) for i in range(14)]  # every 15 s, newest first, now on
    other = ev("disk", "ZA1", "health", "ok", "failing", ts=1990.0)
    lines = collapse([compressor[0], other, *compressor[1:]], plugins())
    assert [ln.change for ln in lines] == ["compressor: changed 14 times in 3 min, now running",
                                           "health: ok → failing"]
    # two changes a minute apart, or changes of different fields, stay lines of their own
    apart = [ev("heatpump", "isg", "compressor", "false", "true", ts=2000.0),
             ev("heatpump", "isg", "compressor", "true", "false", ts=1900.0),
             ev("heatpump", "isg", "compressor", "false", "true", ts=1800.0)]
    assert len(collapse(apart, plugins())) == 3


@pytest.mark.parametrize(("seconds", "words"), [
    (2, "just now"), (42, "42 s ago"), (978, "16 min ago"), (3 * 3600 + 300, "3 h 5 min ago"), (7200, "2 h ago"),
    (9 * 3600, "9 h ago"), (86400 + 5, "1 day ago"), (5 * 86400, "5 days ago"),
])
def test_how_long_ago_reads_as_a_person_says_it_never_in_bare_seconds(seconds: int, words: str) -> None:
    from app.web.templating import ago

    assert ago(1_000_000.0, now=1_000_000.0 + seconds) == words
    assert ago(None) == "never"


@pytest.mark.parametrize(("seconds", "words"), [
    (42, "42 s"), (292, "4 min 52 s"), (1200, "20 min"), (3 * 3600 + 300, "3 h 5 min"), (2 * 86400 + 4 * 3600, "2 d 4 h"),
])
def test_a_duration_reads_in_units_with_the_small_one_only_where_it_says_something(seconds: int, words: str) -> None:
    from app.web.templating import human_duration

    assert human_duration(seconds) == words


def test_the_events_page_reads_one_page_of_events_and_goes_back_with_older(tmp_path: Path) -> None:
    from app.storage.models import entity_event

    app = demo_app(tmp_path, 80)
    store = app.state.store
    with store.engine.begin() as c:  # a year of a flapping port: far more than one page
        c.execute(entity_event.insert(), [{"host": store.host, "kind": "snmp_port", "key": f"rack-sw:ge-{i % 7}",
                                           "ts": 1_700_000_000 + i * 3600, "field": "oper", "old": "up",
                                           "new": "down"} for i in range(450)])
    first = fetch(app, "/events").text
    assert "Older" in first and "Newer" not in first
    last = fetch(app, "/events?page=2").text
    assert "Newer" in last and "page=3" not in last  # the third page holds the rest, and says it is the end
    assert fetch(app, "/events?page=99").status_code == 200
