"""A source that goes quiet has not repaired itself: while a collector cannot read its source, the
alerts its findings raised stay firing, marked "held: source unreachable since ...", and resolve
only once the source is read again and the condition is gone. Its values leave /metrics and its
own `_up` says 0 meanwhile (they were served as if fresh)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace

import pytest

from app.alerting.conditions import BUILTIN, Conditions
from app.alerting.engine import AlertState, evaluate
from app.alerting.sources import RuleSources
from app.scheduler import CollectorStatus, Scheduler, Snapshot
from collectors import plugins
from collectors.home.heatpump.collector import HeatpumpCollector
from tests.alerting.test_findings import snapshot
from tests.peers.isg import IsgSim, wpm3_registers


def firing(rule: str, subject: str, now: float, summary: str = "it is broken") -> AlertState:
    return AlertState(rule, subject, "firing", BUILTIN[rule].severity, summary, {"host": "demo-nas"}, since=now - 600,
                      fired_at=now - 600, last_notified=now - 600)


@pytest.mark.parametrize("name", sorted(n for n, p in plugins().items() if p.rules))
def test_no_plug_ins_firing_alert_resolves_while_its_collector_cannot_read_its_source(name: str) -> None:
    now = time.time()
    down = CollectorStatus(name, 60, 30, up=False, last_run=now, last_success=now - 300, last_error="timed out")
    snap = snapshot(**{name: down})
    shared = RuleSources().shared  # a rule several plug-ins share: its subject names the plug-in first
    subject = {r.name: f"{name}/subject-1" if r.name in shared else "subject-1" for r in plugins()[name].rules}
    previous = {(r.name, subject[r.name]): firing(r.name, subject[r.name], now) for r in plugins()[name].rules}
    conds = Conditions().build(snap, previous=previous, now=now)
    states, events = evaluate(conds, BUILTIN, previous, now)
    assert [e for e in events if e.kind == "resolved"] == []
    assert all(states[k].state == "firing" for k in previous)
    held = [c for c in conds if c.subject in subject.values()]
    assert held and all("held: source unreachable since" in c.summary for c in held)


def test_once_the_source_answers_again_and_all_is_well_the_held_alert_resolves() -> None:
    now = time.time()
    previous = {("heatpump_fault", "heatpump"): firing("heatpump_fault", "heatpump", now)}
    conds = Conditions().build(snapshot(), previous=previous, now=now)  # the healthy heat pump, read
    _, events = evaluate(conds, BUILTIN, previous, now)
    assert [(e.kind, e.alert.rule) for e in events] == [("resolved", "heatpump_fault")]


def faulted_heat_pump() -> tuple[IsgSim, HeatpumpCollector, Snapshot, Scheduler]:
    """A real ISG (pymodbus) whose heat pump reports fault 29, and a scheduler over its collector."""
    sim = IsgSim(wpm3_registers())
    sim.start()
    sim.set_input(2503, [1])  # fault status
    sim.set_input(2506, [29])  # active error 29
    coll = HeatpumpCollector("127.0.0.1", sim.port, timeout=1)
    snap = Snapshot(host="nas")
    return sim, coll, snap, Scheduler({"heatpump": coll}, {"heatpump": (30.0, 5.0)}, snap)


def test_a_heat_pump_fault_stays_firing_while_the_isg_is_silent_and_its_values_leave_metrics() -> None:
    sim, coll, snap, sched = faulted_heat_pump()
    try:
        asyncio.run(sched.run_once("heatpump"))
        t0 = time.time()
        states, events = evaluate(Conditions().build(snap, now=t0), BUILTIN, {}, t0)
        assert [(e.kind, e.alert.rule) for e in events] == [("firing", "heatpump_fault")]
        assert b"rackpulse_heatpump_up{" in snap.metrics and b"rackpulse_heatpump_temperature_celsius" in snap.metrics
        sim.stop()
        asyncio.run(sched.run_once("heatpump"))
        assert snap.statuses["heatpump"].up is False
        for later in (t0 + 41, t0 + 700):  # past heatpump_unreachable's 600 s too
            states, events = evaluate(Conditions().build(snap, previous=states, now=later), BUILTIN, states, later)
            assert "resolved" not in [e.kind for e in events]
            assert states[("heatpump_fault", "heatpump")].state == "firing"
        assert "held: source unreachable" in states[("heatpump_fault", "heatpump")].summary
        text = snap.metrics.decode()
        assert 'rackpulse_heatpump_up{host="nas"} 0' in text
        assert "rackpulse_heatpump_temperature_celsius" not in text  # absent, not stale
    finally:
        sim.stop()
        coll.close()


def test_a_bmc_that_stops_answering_holds_its_alerts_while_the_other_sources_are_read() -> None:
    """IPMI, one BMC of two: the simulated BMC fired "PSU2 status: power supply failure"; it was
    stopped; 30 s later the webhook said RESOLVED. One source of a plug-in that reads several is
    held as a whole collector is."""
    from collectors.host.ipmi.state import BmcView, IpmiState, Sensor

    now = time.time()
    psu = Sensor(name="PSU2 Status", type="Power Supply", state="Critical", events=["Power Supply Failure detected"])
    fine = BmcView(name="r720", up=True, last_read=now, sensors=[Sensor(name="CPU Temp", type="Temperature",
                                                                        state="Nominal", reading=40.0)])
    snap = Snapshot(host="demo-nas")
    snap.states["ipmi"] = IpmiState(bmcs=[BmcView(name="switch", up=True, last_read=now - 30, sensors=[psu]), fine])
    conds = Conditions().build(snap, now=now - 30)
    states, _ = evaluate(conds, BUILTIN, {}, now - 30)
    fired = {k: replace(s, state="firing", fired_at=now - 30) for k, s in states.items()}
    assert ("ipmi_sensor_critical", "switch/PSU2 Status") in fired

    snap = Snapshot(host="demo-nas")  # the next run: the switch's BMC does not answer
    snap.states["ipmi"] = IpmiState(bmcs=[BmcView(name="switch", up=False, error="connection timed out",
                                                  last_read=now - 30), fine])
    conds = Conditions().build(snap, previous=fired, now=now)
    states, events = evaluate(conds, BUILTIN, fired, now)
    assert [e for e in events if e.kind == "resolved"] == []
    held = next(c for c in conds if c.subject == "switch/PSU2 Status")
    assert "(held: switch unreachable since " in held.summary
    assert states[("ipmi_sensor_critical", "switch/PSU2 Status")].state == "firing"

    snap = Snapshot(host="demo-nas")  # it answers again, the PSU replaced: now it resolves
    snap.states["ipmi"] = IpmiState(bmcs=[BmcView(name="switch", up=True, last_read=now + 30), fine])
    _, events = evaluate(Conditions().build(snap, previous=states, now=now + 30), BUILTIN, states, now + 30)
    assert ("resolved", "ipmi_sensor_critical") in [(e.kind, e.alert.rule) for e in events]


def test_a_backup_servers_datastore_whose_snapshots_answer_403_holds_its_verify_alert() -> None:
    """PBS: when only .../snapshots answered 403, pbs_verify_failed store1/ct/101 was RESOLVED, then
    fired again as a new episode once readable."""
    from collectors.host.pbs.state import PbsDatastore, PbsGroup, PbsState

    now = time.time()
    store = PbsDatastore(name="store1", total_bytes=100.0, used_bytes=10.0)
    snap = Snapshot(host="demo-nas")
    snap.states["pbs"] = PbsState(datastores=[store], groups=[PbsGroup(store="store1", type="ct", id="101",
                                                                       last_backup=now - 3600, verified="failed")])
    states, _ = evaluate(Conditions().build(snap, now=now - 60), BUILTIN, {}, now - 60)
    fired = {k: replace(s, state="firing", fired_at=now - 60) for k, s in states.items()}
    assert ("pbs_verify_failed", "store1/ct/101") in fired
    snap = Snapshot(host="demo-nas")
    denied = ("the token monitor@pbs!rackpulse lacks Datastore.Audit on /datastore/store1, so "
              "/admin/datastore/store1/snapshots cannot be read: proxmox-backup-manager acl update ...")
    snap.states["pbs"] = PbsState(datastores=[store], groups=[PbsGroup(store="store1", type="ct", id="101",
                                                                       last_backup=now - 3600)], denied=[denied])
    conds = Conditions().build(snap, previous=fired, now=now)
    _, events = evaluate(conds, BUILTIN, fired, now)
    assert [e for e in events if e.kind == "resolved"] == []
    assert "(held: store1 cannot be read now)" in next(c for c in conds if c.subject == "store1/ct/101").summary
