"""Two levels per threshold rule: `[alerts.rules.disk_hot] warning = 50, critical = 60`. One
episode that goes from warning to critical sends one escalation, not a new episode; back to
warning it neither resolves nor escalates again. Without two levels nothing changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.alerting.channels import Channel
from app.alerting.setup import from_config
from app.config import load_config
from app.judge import Judge, thresholds
from app.scheduler import Snapshot
from app.storage.db import make_engine, upgrade
from app.storage.models import alert_event, outbox
from collectors.disks.smart.state import Disk, SmartState
from collectors.findings import Judging
from collectors.host.basics.findings import filesystem_findings
from collectors.host.basics.state import Filesystem
from collectors.probes.checks.findings import probe_findings
from collectors.probes.checks.state import Probe

T0 = 1_790_000_000.0


def disk_at(celsius: float) -> SmartState:
    return SmartState(disks=[Disk(key="ZA1049HK", device="sdh", serial="ZA1049HK", model="WDC WD80EFZZ",
                                  bay="shelf 1, bay 7", temperature=celsius, health=0, health_name="ok")])


def told(tmp_path: Path, rules: dict[str, object], temperatures: list[float | None]) -> list[tuple[str, str]]:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    upgrade(url)
    cfg = load_config(None, {"host": "nas", "storage": {"url": url}, "alerts": {
        "group_wait": 0, "rules": rules, "channels": [{"name": "hook", "url": "http://127.0.0.1:9/x"}]}})
    a = from_config(cfg, make_engine(url))
    judge = Judge("nas", thresholds(cfg))
    for i, t in enumerate(temperatures):
        snap = Snapshot(host="nas", judge=judge)
        if t is not None:
            snap.states["smart"] = disk_at(t)
        a.tick(snap, now=T0 + 60 * i, deliver=False)
    from sqlalchemy import select
    with a.engine.connect() as c:
        return [(k, s) for k, s in c.execute(select(alert_event.c.kind, alert_event.c.severity)
                                             .join(outbox, outbox.c.event_id == alert_event.c.id)
                                             .order_by(alert_event.c.id))]


def test_a_disk_going_45_55_65_55_warns_escalates_once_and_resolves_once(tmp_path: Path) -> None:
    rules = {"disk_hot": {"warning": 50, "critical": 60, "for_seconds": 0}}
    got = told(tmp_path, rules, [45, 55, 65, 55, 66, 55, 40])
    assert got == [("firing", "warning"), ("escalated", "critical"), ("resolved", "critical")]


def test_without_two_levels_disk_hot_is_one_warning_as_before(tmp_path: Path) -> None:
    got = told(tmp_path, {"disk_hot": {"for_seconds": 0}}, [45, 55, 65, 55, 40])
    assert got == [("firing", "warning"), ("resolved", "warning")]


def test_a_severity_override_still_holds_when_no_levels_are_given(tmp_path: Path) -> None:
    got = told(tmp_path, {"disk_hot": {"for_seconds": 0, "severity": "critical"}}, [55, 40])
    assert got == [("firing", "critical"), ("resolved", "critical")]


def test_an_escalation_reads_as_now_critical_in_every_words() -> None:
    from app.alerting.apprise_channel import title
    from app.alerting.channels import human, render_group
    ev = {"id": 1, "kind": "escalated", "rule": "disk_hot", "subject": "ZA1049HK", "severity": "critical",
          "summary": "disk hot, shelf 1, bay 7: 65 °C", "labels": {"host": "nas", "bay": "shelf 1, bay 7"},
          "ts": T0, "duration": None, "since": T0 - 120}
    assert human(ev) == "NOW CRITICAL: disk hot, shelf 1, bay 7: 65 °C"  # type: ignore[arg-type]
    assert title(ev) == "[rackpulse] NOW CRITICAL Disk running hot ZA1049HK: look at shelf 1, bay 7"  # type: ignore[arg-type]
    body, _ = render_group(Channel("n", "http://x", "ntfy"), [ev])  # type: ignore[list-item]
    assert body.decode().startswith("NOW CRITICAL")


LEVELS = {"filesystem_full": (80.0, 95.0), "probe_loss": (10.0, 50.0), "probe_latency": (100.0, 500.0),
          "tls_expiring": (30.0, 7.0)}


@pytest.mark.parametrize(("ratio", "severity"), [(0.79, None), (0.80, "warning"), (0.949, "warning"),
                                                 (0.95, "critical")])
def test_filesystem_full_takes_two_levels_in_percent(ratio: float, severity: str | None) -> None:
    fs = Filesystem(mountpoint="/srv", device="/dev/md0", fstype="ext4", size=1000, avail=int(1000 * (1 - ratio)),
                    used_ratio=ratio)
    found = [f for f in filesystem_findings(fs, 0.9, Judging(levels=LEVELS)) if f.rule == "filesystem_full"]
    assert [f.severity for f in found] == ([severity] if severity else [])


@pytest.mark.parametrize(("loss", "rtt", "days", "want"), [
    (0.05, 50.0, 60.0, {}),
    (0.10, 100.0, 30.0, {"probe_loss": "warning", "probe_latency": "warning"}),  # at a limit it is reached
    (0.5, 600.0, 29.0, {"probe_loss": "critical", "probe_latency": "critical", "tls_expiring": "warning"}),
    (0.0, 10.0, 6.5, {"tls_expiring": "critical"}),
])
def test_probes_take_two_levels_for_loss_latency_and_days_left(loss: float, rtt: float, days: float,
                                                              want: dict[str, str]) -> None:
    p = Probe(name="gw", kind="ping", target="10.0.0.1", ok=True, loss=loss, loss_warning=0.2, sent=10,
              rtt_ms={"avg": rtt, "p95": rtt}, rtt_warning_ms=300.0, cert_expires=T0 + days * 86400)
    found = probe_findings(p, 14.0, T0, Judging(levels=LEVELS))
    assert {f.rule: f.severity for f in found} == want


def test_probes_without_levels_keep_their_one_threshold_and_the_rules_severity() -> None:
    p = Probe(name="gw", kind="ping", target="10.0.0.1", ok=True, loss=0.25, loss_warning=0.2, sent=10,
              rtt_ms={"avg": 200.0, "p95": 250.0}, rtt_warning_ms=300.0, cert_expires=T0 + 13.5 * 86400)
    found = probe_findings(p, 14.0, T0, Judging())
    assert {f.rule: f.severity for f in found} == {"probe_loss": None, "tls_expiring": None}


@pytest.mark.parametrize(("charge", "want"), [(None, "warning"), (90.0, "warning"), (49.0, "critical")])
def test_a_ups_on_battery_is_critical_below_its_critical_charge(charge: float | None, want: str) -> None:
    from collectors.home.nut.findings import findings
    from collectors.home.nut.state import NutState, Ups

    ups = NutState(ups=[Ups(name="ups1", up=True, flags=["OB"], on_battery=True, charge=charge)])
    (f,) = findings(ups, Judging(levels={"ups_on_battery": (None, 50.0)}))
    assert (f.rule, f.severity) == ("ups_on_battery", want)
    (plain,) = findings(ups, Judging())
    assert plain.severity is None  # without levels: the rule's own severity


@pytest.mark.parametrize(("volts", "want"), [(11.4, "warning"), (10.9, "critical"), (None, "critical")])
def test_a_rail_is_critical_once_it_is_far_enough_past_its_limit(volts: float | None, want: str) -> None:
    from collectors.home.hwmon.findings import findings
    from collectors.home.hwmon.state import HwmonState, RailView

    rails = HwmonState(rails=[RailView(name="12V bus", volts=volts, ok=False, min=11.5, max=14.6)])
    (f,) = findings(rails, Judging(levels={"rail_out_of_range": (0.0, 0.5)}))
    assert (f.rule, f.severity) == ("rail_out_of_range", want)
    assert findings(rails, Judging())[0].severity is None
