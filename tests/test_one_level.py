"""One level per subject: a finding that raises a rule is shown at the level its alert has. A
rule's severity (its own, the one configured under [alerts.rules.<rule>], or the finding's two-level
severity) decides the tile, the section and the alert together: never a critical alert under a
tile that says warning (bgp_peer_down was critical in /alerts while the BGP tile said warning)."""

from __future__ import annotations

from app import views
from app.alerting.conditions import Conditions
from app.judge import Judge, Thresholds, one_level, rule_severities
from app.scheduler import Snapshot
from collectors.findings import BAD, WARN, Finding
from collectors.network.openvpn.state import Instance, OpenvpnState


def test_a_finding_milder_than_its_rule_is_shown_at_the_rules_level() -> None:
    f = Finding(WARN, "VPN office down: no status", "vpn_down", "office")  # vpn_down is critical
    [shown] = one_level([f], rule_severities())
    assert (shown.level, shown.severity) == (BAD, "critical")


def test_a_finding_without_a_rule_keeps_its_level() -> None:
    f = Finding(WARN, "switch sw1 port 7 changed state 2 times in the last hour")
    assert one_level([f], rule_severities()) == [f]


def test_a_two_level_findings_own_severity_wins_over_the_rules() -> None:
    f = Finding(BAD, "storage local is 91% full", "pve_storage_full", "local", severity="warning")
    [shown] = one_level([f], rule_severities())
    assert (shown.level, shown.severity) == (WARN, "warning")


def test_a_configured_severity_moves_the_tile_and_the_alert_together() -> None:
    snap = Snapshot(host="nas", judge=Judge("nas", Thresholds(severities=(("vpn_tunnel_drops", "critical"),))))
    snap.states["openvpn"] = OpenvpnState(instances=[Instance(name="office", up=True, interface="tun0",
                                                             drops_delta=40)])
    [tile] = [t for t in views.tiles(snap) if t.title == "VPN"]
    [cond] = [c for c in Conditions().build(snap) if c.rule == "vpn_tunnel_drops"]
    assert (tile.level, cond.severity) == ("failing", "critical")
    assert tile.subjects == ("openvpn:office",)


def test_a_fresh_host_without_systemd_is_not_told_its_services_are_fine() -> None:
    """A fresh host's overview said "Services OK" while /collectors said systemd is not running."""
    from app.scheduler import CollectorStatus

    snap = Snapshot(host="nas")
    snap.statuses["systemd"] = CollectorStatus("systemd", 60, 30, up=True, no_data=True, last_run=1.0,
                                               last_success=1.0, last_error="systemd is not running here")
    assert [t for t in views.tiles(snap) if t.title == "Services"] == []


def test_a_backup_groups_row_is_marked_as_its_finding_says() -> None:
    """The PBS row for vm/107 was not marked while the Backups tile warned about it."""
    from collectors import plugins
    from collectors.findings import Judging
    from collectors.host.pbs.state import PbsDatastore, PbsGroup, PbsState

    state = PbsState(datastores=[PbsDatastore(name="store1", total_bytes=100.0, used_bytes=10.0)],
                     groups=[PbsGroup(store="store1", type="vm", id="107", last_backup=1.0),
                             PbsGroup(store="store1", type="vm", id="101", last_backup=1_790_000_000.0)])
    p = plugins()["pbs"]
    found = p.judge(state, Judging(host="nas", now=1_790_000_100.0))
    v = p.view(state, found)
    assert v["group_level"] == {"store1/vm/107": "warning", "store1/vm/101": "ok"}
    assert v["store_level"] == {"store1": "ok"}
