"""A collector a reload removes has not repaired anything: its firing alerts end "no longer
watched (removed from the config)", never RESOLVED with the held summary they last had (a reload
that removed the heat pump said "RESOLVED ... (held: source unreachable since 20:05)")."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from app.alerting.channels import Channel, human
from app.alerting.service import Alerting
from app.scheduler import Scheduler, Snapshot
from app.storage.db import make_engine, upgrade
from tests.alerting.sink import Sink
from tests.alerting.test_delivery import wait_for
from tests.alerting.test_held_while_unreachable import faulted_heat_pump


def test_a_collector_removed_by_a_reload_ends_its_alerts_as_no_longer_watched_not_resolved(tmp_path: Path) -> None:
    sink = Sink()
    sim, coll, snap, sched = faulted_heat_pump()
    url = f"sqlite:///{tmp_path / 'a.db'}"
    upgrade(url)
    alerting = Alerting(make_engine(url), "nas", channels=[Channel("hook", sink.url + "/hook", timeout=2)])
    try:
        asyncio.run(sched.run_once("heatpump"))
        t0 = time.time()
        kinds = [r["kind"] for r in alerting.tick(snap, now=t0) if r["rule"] == "heatpump_fault"]
        assert kinds == ["firing"]
        sim.stop()
        asyncio.run(sched.run_once("heatpump"))  # the ISG away: held, as before
        alerting.tick(snap, now=t0 + 40)
        assert "held: source unreachable" in alerting.states[("heatpump_fault", "heatpump")].summary

        sched.reconfigure({}, {}, set())  # the reload: [collectors.heatpump] is gone from the file
        told = alerting.tick(snap, now=t0 + 80)
        ended = [r for r in told if r["rule"] == "heatpump_fault"]
        assert [r["kind"] for r in ended] == ["unwatched"]
        assert "no longer watched: removed from the config" in ended[0]["summary"]
        assert "held:" not in ended[0]["summary"]
        assert "resolved" not in [r["kind"] for r in told]
        bodies = wait_for(lambda: [json.loads(b) for _, _, b in sink.received if b"unwatched" in b])
        assert bodies[0]["state"] == "resolved"  # a receiver closes what it opened ...
        assert bodies[0]["text"].startswith("NO LONGER WATCHED: ")  # ... in words that do not say "fixed"
        assert "RESOLVED" not in bodies[0]["text"]
        # Ended once: the next evaluations tell nothing more of it.
        assert [r for r in alerting.tick(snap, now=t0 + 120) if r["rule"] == "heatpump_fault"] == []
    finally:
        sim.stop()
        sink.close()
        coll.close()


def test_a_no_longer_watched_notice_reads_as_such_on_a_phone() -> None:
    ev = {"id": 1, "kind": "unwatched", "rule": "heatpump_fault", "subject": "heatpump", "severity": "critical",
          "summary": "heat pump fault 29 (no longer watched: removed from the config)", "labels": {"host": "nas"},
          "ts": 0.0, "duration": 60.0, "since": None}
    assert human(ev).startswith("NO LONGER WATCHED: heat pump fault 29")  # type: ignore[arg-type]


class Bmcs:
    """An IPMI collector's stand-in: the BMCs of its section, the switch's PSU failing."""

    name = "ipmi"

    def __init__(self, *bmcs: str) -> None:
        from collectors.host.ipmi.collector import IpmiCollector

        self.bmcs, self.metrics = bmcs, IpmiCollector.metrics

    def collect(self):  # type: ignore[no-untyped-def]
        from collectors.base import CollectResult
        from collectors.host.ipmi.state import BmcView, IpmiState, Sensor

        psu = Sensor(name="PSU2 Status", type="Power Supply", state="Critical", events=["Power Supply Failure detected"])
        return CollectResult(state=IpmiState(bmcs=[BmcView(name=b, up=True, last_read=time.time(),
                                                            sensors=[psu] if b == "switch" else [])
                                                    for b in self.bmcs]))

    def restore(self, state) -> None:  # type: ignore[no-untyped-def]
        pass

    def counter_limits(self):  # type: ignore[no-untyped-def]
        return {}

    def counter_now(self) -> float:
        return time.time()


def test_a_bmc_a_reload_takes_out_of_the_section_ends_its_alerts_as_no_longer_watched(tmp_path: Path) -> None:
    snap = Snapshot(host="nas")
    sched = Scheduler({"ipmi": Bmcs("switch", "r720")}, {"ipmi": (30.0, 5.0)}, snap)  # type: ignore[dict-item]
    url = f"sqlite:///{tmp_path / 'a.db'}"
    upgrade(url)
    alerting = Alerting(make_engine(url), "nas")
    asyncio.run(sched.run_once("ipmi"))
    t0 = time.time()
    assert [r["kind"] for r in alerting.tick(snap, now=t0) if r["rule"] == "ipmi_sensor_critical"] == ["firing"]
    sched.reconfigure({"ipmi": Bmcs("r720")}, {"ipmi": (30.0, 5.0)}, {"ipmi"})  # type: ignore[dict-item]
    asyncio.run(sched.run_once("ipmi"))
    told = [r for r in alerting.tick(snap, now=t0 + 30) if r["rule"] == "ipmi_sensor_critical"]
    assert [r["kind"] for r in told] == ["unwatched"]
    assert "no longer watched: removed from the config" in told[0]["summary"]
