"""Findings are said once: the overview tile and the alert read the same words. These tests
drive the healthy demo capture into trouble and check the tile and the conditions agree, and
that what is only worth a look (a rebuild, a port that flapped long ago) stays on the tile."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from app import views
from app.alerting.conditions import BUILTIN, Conditions
from app.judge import Judge, Thresholds
from app.scheduler import CollectorStatus, Snapshot
from collectors import plugins
from collectors.disks.smart.findings import disks
from collectors.findings import BAD, OK, WARN, Finding, Judging, about, first, level_of, natural
from tests.states import one, typed

HEALTHY = Path(__file__).resolve().parent.parent / "fixtures" / "demo" / "healthy-states.json"
States = dict[str, Any]


def snapshot(change: Callable[[States], None] = lambda s: None, **statuses: CollectorStatus) -> Snapshot:
    now = time.time()
    raw = json.loads(HEALTHY.read_text())
    change(raw)  # the states as JSON (what an agent sends), changed, then read as the plug-ins' types
    snap = Snapshot(host="demo-nas", states=typed(raw))
    snap.statuses = {n: CollectorStatus(n, 60, 30, up=True, last_run=now, last_success=now) for n in snap.states}
    snap.statuses.update(statuses)
    return snap


def tiles(snap: Snapshot) -> dict[str, dict[str, Any]]:
    return {t.title: asdict(t) for t in views.tiles(snap)}


def test_every_built_in_rule_is_declared_by_exactly_one_collector_or_the_app() -> None:
    """Or by several as one: the backup plug-ins share theirs (collectors/backup.py), each alert
    naming its plug-in first in its subject (app/alerting/sources.py)."""
    from collectors.backup import RULES as BACKUP

    declared = [r.name for p in plugins().values() for r in p.rules if r not in BACKUP]
    assert len(declared) == len(set(declared))
    declared += [r.name for r in BACKUP]
    assert set(BUILTIN) == set(declared) | {"collector_down", "agent_silent", "agent_clock_skew", "agent_cardinality",
                                                   "energy_budget", "power_above_baseline", "data_unprotected",
                                                   "data_at_risk"}


def test_a_healthy_host_shows_every_tile_all_clear_in_plug_in_order() -> None:
    got = [(t.title, t.level, t.reason) for t in views.tiles(snapshot())]
    assert [t for t, _, _ in got] == ["Host", "Containers", "Services", "Hardware", "Updates", "VMs", "Backups", "Arrays", "Disks", "Ceph", "RAID controller", "ZFS", "Bonds", "BGP",
                                      "HAProxy", "Modems", "VPN", "Switch ports", "WireGuard", "Heartbeats", "Probes", "Throughput", "Heat pump", "Power"]
    assert all(level == OK for _, level, _ in got)
    reasons = dict((t, r) for t, _, r in got)
    assert reasons["Hardware"] == "2 BMCs, 18 sensors nominal"
    assert reasons["Arrays"].endswith("arrays clean") and reasons["Power"] == "rails in range, fans turning, on mains, 3 plugs drawing 439 W"
    assert reasons["Probes"] == "4 probes up; slowest ping 3G bond 116 ms"
    assert reasons["Throughput"] == "VPN site-b up 88 Mbit/s; VPN site-b down 86 Mbit/s"
    assert reasons["ZFS"] == "1 pool online" and reasons["RAID controller"] == "1 virtual drive optimal"
    assert reasons["Heartbeats"] == "2 jobs on time"
    assert reasons["Containers"] == "3 of 4 containers running, 3 healthy by their checks"
    assert reasons["Services"] == "3 watched units fine, 2 timers on time"
    assert reasons["Modems"] == "6 of 6 modems registered"
    assert reasons["HAProxy"] == "3 backends up, 4 of 4 servers up"
    assert reasons["Updates"] == "4 updates pending, 2 for security"  # within their grace: fine
    # the capture's snapshot times are in 2100 (tests/fixtures/demo/README.md): never older than max_age
    assert reasons["Backups"] == "1 restic repository, newest snapshot 0 min ago, 1 borg repository, newest snapshot 0 min ago"


def test_the_tile_and_the_alert_say_the_same_words() -> None:
    def fail(s: States) -> None:
        s["hwmon"]["fans"][0].update(rpm=0.0, stalled=True, why="0 RPM")
        s["nut"]["ups"][0].update(on_battery=True, charge=64.0)

    snap = snapshot(fail)
    power = tiles(snap)["Power"]
    said = {c.summary for c in Conditions().build(snap)}
    assert power["level"] == BAD
    assert power["reason"] == "HBA fan stalled: 0 RPM; UPS ups12v on battery (64% charge)"
    assert {"HBA fan stalled: 0 RPM", "UPS ups12v on battery (64% charge)"} <= said


def test_a_rebuild_is_shown_on_the_tile_but_raises_no_alert_of_its_own() -> None:
    def rebuild(s: States) -> None:
        s["mdraid"]["arrays"][0].update(sync_action="check", sync_ratio=0.5)
        s["mdraid"]["arrays"][-1].update(sync_action="resync", sync_ratio=0.123)

    snap = snapshot(rebuild)
    arrays = tiles(snap)["Arrays"]
    name = snap.states["mdraid"].arrays[-1].name  # type: ignore[attr-defined]
    assert (arrays["level"], arrays["reason"]) == (WARN, f"{name} resync 12.3%")
    assert Conditions().build(snap) == []
    first_array = snap.states["mdraid"].arrays[0].name  # type: ignore[attr-defined]
    assert level_of(about(views.findings(snap)["mdraid"], array=first_array)) == OK  # a check is routine


def test_a_tile_stays_one_line_when_many_things_are_wrong() -> None:
    assert first(["a", "b", "c", "d", "e"]) == "a; b; c; and 2 more"
    assert first(["a", "b"]) == "a; b"


def test_the_worst_findings_come_first_on_a_shared_tile() -> None:
    def sag(s: States) -> None:
        s["nut"]["ups"][0].update(on_battery=True, charge=80.0)
        s["hwmon"]["rails"][0].update(volts=11.0, ok=False)

    reason = tiles(snapshot(sag))["Power"]["reason"]
    assert reason.index("12V battery bus at 11.00 V") < reason.index("UPS ups12v on battery")


def test_a_collector_without_anything_to_show_has_no_tile() -> None:
    snap = snapshot(lambda s: s.update(frr={"peers": []}))
    assert "BGP" not in tiles(snap)
    del snap.states["mdraid"], snap.statuses["mdraid"]
    assert "Arrays" not in tiles(snap)


def test_an_array_collector_that_ran_and_found_none_says_so() -> None:
    snap = snapshot(lambda s: s.update(mdraid={"arrays": []}))
    assert (tiles(snap)["Arrays"]["level"], tiles(snap)["Arrays"]["reason"]) == (OK, "no arrays seen")


def test_an_unreachable_heat_pump_is_a_failing_tile_and_a_warning_alert() -> None:
    down = CollectorStatus("heatpump", 30, 10, up=False, last_error="Modbus: no answer within 3s")
    snap = snapshot(heatpump=down)
    assert tiles(snap)["Heat pump"]["reason"] == "heat pump unreachable: Modbus: no answer within 3s"
    assert [(c.rule, c.subject) for c in Conditions().build(snap) if c.rule.startswith("heatpump")] == [
        ("heatpump_unreachable", "heatpump")]
    assert BUILTIN["heatpump_unreachable"].severity == "warning"


@pytest.mark.parametrize(("down", "level"), [(1, WARN), (6, BAD)])
def test_a_bond_is_failing_only_when_every_slave_is_down(down: int, level: str) -> None:
    def drop(s: States) -> None:
        bond = s["bonding"]["bonds"][0]
        for slave in bond["slaves"][:down]:
            slave["up"] = False
        bond["slaves_up"] = len(bond["slaves"]) - down

    assert tiles(snapshot(drop))["Bonds"]["level"] == level


def test_a_port_that_bounced_within_the_hour_is_shown_one_flapping_is_alerted_and_both_age_out() -> None:
    clock = [1000.0]
    judge = Judge("nas", Thresholds(flap_count=3), clock=lambda: clock[0])  # one host: its memory is kept

    def at(t: float, flaps: int) -> Snapshot:
        clock[0] = t
        snap = snapshot(lambda s: s["snmp"]["targets"][0]["ports"][0].update(flaps=flaps))
        snap.judge = judge
        return snap

    def flapping(snap: Snapshot) -> list[str]:
        return [c.summary for c in Conditions().build(snap, now=clock[0]) if c.rule == "switch_port_flapping"]

    first = at(1000.0, 10)  # ten changes before this rackpulse saw the port: when, nobody knows
    assert tiles(first)["Switch ports"]["level"] == OK and not flapping(first)
    bounced = at(1060.0, 12)  # down and back up: worth a look, not yet an alert
    assert tiles(bounced)["Switch ports"]["level"] == WARN
    assert "changed state 2 times in the last hour" in tiles(bounced)["Switch ports"]["reason"]
    assert not flapping(bounced)
    now = at(1120.0, 13)
    (summary,) = flapping(now)
    assert "changed state 3 times in the last hour" in summary
    assert "changed state 3 times in the last hour" in tiles(now)["Switch ports"]["reason"]  # the tile agrees
    held = at(1120.0 + 3601.0, 13)  # an hour without a change: the count stays on the chart, not the tile
    assert tiles(held)["Switch ports"]["level"] == OK and not flapping(held)


def test_judging_counts_a_rise_within_the_window_only() -> None:
    j = Judging(now=0.0, flap_window=3600.0)
    assert j.rose("k", 5) == 0
    j.now = 1800.0
    assert j.rose("k", 8) == 3
    j.now = 3601.0
    assert j.rose("k", 9) == 1  # the first reading fell out of the window
    j.now = 3700.0
    assert j.rose("k", 2) == 1  # a counter reset is not a negative rise, nor hides the rise before it
    j.now = 3710.0
    assert j.rose("k", 6) == 5  # and what it counts after the reset adds up


def test_the_flap_window_is_said_in_words() -> None:
    assert [Judging(flap_window=w).window for w in (3600, 7200, 120, 600, 90)] == [
        "the last hour", "the last 2 hours", "the last 2 min", "the last 10 min", "the last 90 s"]


def test_a_finding_without_a_rule_never_becomes_a_condition() -> None:
    f = Finding(WARN, "just look")
    assert f.rule is None and f.labels == {}


def test_bays_and_devices_sort_as_a_person_counts_them() -> None:
    labels = ["shelf 1, bay 10", "shelf 1, bay 2", None, "shelf 1, bay 0", "shelf 2, bay 1", "shelf 1, bay 11"]
    assert sorted(labels, key=natural) == ["shelf 1, bay 0", "shelf 1, bay 2", "shelf 1, bay 10", "shelf 1, bay 11",
                                           "shelf 2, bay 1", None]
    state = one("smart", {"disks": [{"key": d, "bay": b, "device": d}
                                    for b, d in (("bay 10", "sdk"), (None, "sdz"), ("bay 9", "sdj"),
                                                 (None, "sdaa"), ("bay 1", "sdb"))]})
    assert [d.device for d in disks(state)] == ["sdb", "sdj", "sdk", "sdz", "sdaa"]  # type: ignore[arg-type]

