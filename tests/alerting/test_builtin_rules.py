"""Every built-in alert rule fires on its condition and stays quiet on the nearest healthy
state. States start from what the real collectors produced for the healthy demo host and
change one thing; the overview tile of the same domain must agree that something is wrong."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app import views
from app.alerting.conditions import BUILTIN, Conditions
from app.config import load_config
from app.ingest.agents import Agents
from app.ingest.conditions import agent_conditions
from app.judge import Judge, Thresholds
from app.scheduler import CollectorStatus, Snapshot
from app.storage.db import make_engine, upgrade
from app.storage.models import agent
from tests.states import raw, typed

States = dict[str, Any]


HEALTHY = Path(__file__).resolve().parent.parent / "fixtures" / "demo" / "healthy-states.json"


@pytest.fixture(scope="module")
def healthy() -> Snapshot:
    """What the real collectors produced for the healthy demo host (story time 0), captured in
    tests/fixtures/demo/healthy-states.json; test_the_captured_states_are_what_the_collectors_produce
    keeps the capture honest."""
    now = time.time()
    snap = Snapshot(host="demo-nas", states=typed(json.loads(HEALTHY.read_text())))
    snap.statuses = {n: CollectorStatus(n, 60, 30, up=True, last_run=now, last_success=now) for n in snap.states}
    assert Conditions().build(snap) == []  # the starting point is healthy
    return snap


def test_the_captured_states_are_what_the_collectors_produce(tmp_path: Path) -> None:
    from tests.test_web import demo_app

    live = demo_app(tmp_path, 0).state.snapshot.states
    captured = json.loads(HEALTHY.read_text())

    def shape(v: Any) -> Any:  # keys and types, not the values that change with the clock
        if isinstance(v, dict):
            return {k: shape(x) for k, x in v.items()}
        if isinstance(v, list):
            return [shape(x) for x in v[:1]]
        return type(v).__name__ if v is not None else None

    assert shape(raw(live)) == shape(captured)


def with_states(base: Snapshot, change: Callable[[States], None], judge: Judge | None = None) -> Snapshot:
    """The host's next collection: `change` applied to a copy of the states. Successive ones
    share the host's Judge (its memory: a counter that rose within the hour)."""
    states = raw(base.states)  # as JSON, the shape an agent sends: changed, then read as the plug-ins' types
    change(states)
    return Snapshot(host=base.host, statuses=copy.deepcopy(base.statuses), states=typed(states),
                    judge=judge or Judge(base.host))


def fired(snap: Snapshot) -> set[str]:
    return {c.rule for c in Conditions().build(snap)}


def tile(snap: Snapshot, title: str) -> str:
    return next(t.level for t in views.overview(snap).tiles if t.title == title)


def member(s: States, i: int = 3) -> dict[str, Any]:
    return s["mdraid"]["arrays"][0]["members"][i]


def array(s: States) -> dict[str, Any]:
    return s["mdraid"]["arrays"][0]


def degrade(s: States) -> None:
    array(s).update(degraded=True, disks_working=11, failed=1, slot_map="UUU_UUUUUUUU")
    member(s)["state"] = "failed"


def rebuild(s: States) -> None:
    """A replacement disk is being rebuilt onto: the array is still degraded until it is done."""
    degrade(s)
    array(s).update(sync_action="recovery", sync_ratio=0.4, failed=0)
    member(s)["state"] = "spare"


def scrub(s: States) -> None:
    array(s).update(sync_action="check", sync_ratio=0.4)


def failed_member_spare_took_over(s: States) -> None:
    """A member failed and a hot spare took its place: not degraded, but the disk must go."""
    array(s)["failed"] = 1
    member(s)["state"] = "failed"


def member_is_spare(s: States) -> None:
    member(s)["state"] = "spare"


def disk(s: States, **attrs: Any) -> None:
    d = s["smart"]["disks"][2]
    d.update(attrs)


def selftest_log(s: States, newest_passed: bool, older_passed: bool) -> None:
    """The disk's self-test log, newest first: a long test that read-failed at 1,200 hours, or passed."""
    run = {"type": "long", "hours": 1200, "result": "Completed: read failure", "passed": newest_passed,
           "lba": None if newest_passed else 104870168}
    older = {"type": "short", "hours": 1100, "result": "Completed without error", "passed": older_passed}
    disk(s, selftests={"running": None, "percent_done": None, "log": [run, older], "minutes": {}})


def bay_losses(s: States, failed: int) -> None:
    """shelf 1, bay 7 held three disks this year: `failed` of the two that left failed."""
    now = time.time()
    gone = [{"bay": "shelf 1, bay 7", "serial": serial, "first_seen": now - days * 86400,
             "last_seen": now - (days - 30) * 86400, "left": now - (days - 30) * 86400,
             "how": "failed" if i < failed else "replaced", "health": "failing" if i < failed else "ok"}
            for i, (serial, days) in enumerate((("ZA0999XK", 200), ("ZA0998XK", 100)))]
    s["smart"]["bays"] = gone + [b for b in s["smart"]["bays"] if b["bay"] != "shelf 1, bay 7"]


def container(s: States, name: str, **attrs: Any) -> None:
    next(c for c in s["containers"]["containers"] if c["name"] == name).update(attrs)


def unit(s: States, name: str, **attrs: Any) -> None:
    next(u for u in s["systemd"]["units"] if u["unit"] == name).update(attrs)


def peer(s: States, **attrs: Any) -> None:
    s["frr"]["peers"][0].update(attrs)


def fs(s: States, **attrs: Any) -> None:
    s["host"]["filesystems"][0].update(attrs)  # /srv on /dev/md0


def memory(s: States, gib: float) -> None:
    s["host"]["memory"]["available"] = int(gib * (1 << 30))  # of 16 GiB


BOOSTER_DAY = {"date": "2026-01-14", "heat_heating": 40.0, "backup_heating": 8.0, "electricity_heating": 12.0,
               "outside_sum": 2.0, "outside_count": 1}


def modem(s: States, **attrs: Any) -> None:
    s["modems"]["modems"][3].update(attrs)  # eoip4's, 3G link 4


BFD = {"key": "default/10.0.250.1", "peer": "10.0.250.1", "local": "10.0.250.2", "vrf": "default", "status": "down",
       "diagnostic": "control detection time expired", "local_discriminator": 1, "remote_discriminator": 0}


def all_peers(s: States, up: bool) -> None:
    for p in s["frr"]["peers"]:
        if not p["admin_down"]:
            p.update(up=up, state="Established" if up else "Active")


def all_but_one_peer_down(s: States) -> None:
    all_peers(s, False)
    s["frr"]["peers"][0].update(up=True, state="Established")


def probe(s: States, **attrs: Any) -> None:
    next(p for p in s["probes"]["probes"] if p["name"] == "UPS server").update(attrs)  # tcp


# Expiry stamps a whole number of days and a half from now, so the words do not flip at midnight.
SOON, LATER = int(time.time()) + int(5.5 * 86400), int(time.time()) + int(20.5 * 86400)


def ping(s: States, **attrs: Any) -> None:
    """A ping probe over a 3G link, healthy unless `attrs` say otherwise."""
    s["probes"]["probes"].append({
        "kind": "ping", "name": "3g-bond", "target": "10.0.250.1", "interface": "ppp0", "count": 20,
        "loss_warning": 0.2, "rtt_warning_ms": 300.0, "ok": True, "seconds": 1.2, "sent": 20, "received": 20,
        "loss": 0.0, "rtt_ms": {"min": 40.0, "avg": 60.0, "max": 90.0, "p95": 85.0}, "rtts_ms": [], "error": None,
        **attrs})


def iperf(s: States, ratio: float) -> None:
    s["throughput"] = {"tests": [{"name": "3g down", "server": "10.0.250.1:5201", "direction": "download",
                                  "baseline_mbps": 40.0, "low_ratio": 0.5, "ran_at": 1000.0, "next_at": 22600.0,
                                  "ok": True, "error": None, "mbps": 40.0 * ratio, "retransmits": 12, "ratio": ratio}]}


# A nightly job's last success 3 days, 2 hours and a half ago: "3 d 2 h" for half an hour either
# way, so the words hold on a loaded machine whenever the test runs.
RAN = time.time() - 3 * 86400 - 2.5 * 3600
DAY = 86400.0


def job(s: States, **attrs: Any) -> None:
    s["heartbeats"] = {"beats": [{"name": "nightly-backup", "every": DAY, "grace": 7200.0, "status": "up",
                                  "last_success": RAN + 2 * 3600, "since": RAN - DAY, "due_at": RAN + DAY + 4 * 3600,
                                  **attrs}]}


def phone(s: States, **attrs: Any) -> None:
    next(p for p in s["wireguard"]["peers"] if p["name"] == "phone").update(attrs)


def bmc(s: States, **attrs: Any) -> None:
    next(b for b in s["ipmi"]["bmcs"] if b["name"] == "r720").update(attrs)


def bmc_sensor(s: States, name: str, **attrs: Any) -> None:
    bmc_view = next(b for b in s["ipmi"]["bmcs"] if b["name"] == "r720")
    next(x for x in bmc_view["sensors"] if x["name"] == name).update(attrs)


def sel_entry(state: str, event: str) -> dict[str, Any]:
    return {"id": 9, "time": RAN, "seen": time.time(), "name": "DIMM A1", "type": "Memory", "state": state,
            "asserted": True, "event": event}


def plug(s: States, **attrs: Any) -> None:
    next(p for p in s["smartplugs"]["plugs"] if p["name"] == "rack").update(attrs)


def guest(s: States, name: str, **attrs: Any) -> None:
    next(d for d in s["libvirt"]["domains"] if d["name"] == name).update(attrs)


CASES: dict[str, tuple[Callable[[States], None], Callable[[States], None], str | None]] = {
    "libvirt_domain_down": (lambda s: guest(s, "pihole", state="shut off", reason="destroyed"),
                            lambda s: guest(s, "pihole", state="running", reason="booted"), "VMs"),
    "smartplug_silent": (lambda s: plug(s, silent=True, watts=None, last_seen=time.time() - 630),
                         lambda s: plug(s, silent=False, last_seen=time.time() - 200), "Power"),
    "ipmi_sensor_critical": (lambda s: bmc_sensor(s, "FAN1", reading=0.0, state="Critical"),
                             lambda s: bmc_sensor(s, "FAN1", reading=840.0, state="Warning"), "Hardware"),
    "ipmi_sensor_warning": (lambda s: bmc_sensor(s, "Inlet Temp", reading=43.0, state="Warning"),
                            lambda s: bmc_sensor(s, "Inlet Temp", reading=41.0, state="Nominal"), "Hardware"),
    "ipmi_psu_redundancy_lost": (lambda s: bmc_sensor(s, "PS Redundancy", state="Critical", events=["Redundancy Lost"]),
                                 lambda s: bmc_sensor(s, "PS Redundancy", state="Warning",
                                                      events=["Redundancy Degraded from Fully Redundant"]), "Hardware"),
    "ipmi_sel_critical": (lambda s: bmc(s, held=[sel_entry("Critical", "Uncorrectable memory error ; Event Data3 = 02h")]),
                          lambda s: bmc(s, held=[sel_entry("Warning", "Correctable memory error ; Event Data3 = 02h")]),
                          "Hardware"),
    "ipmi_sel_warning": (lambda s: bmc(s, held=[sel_entry("Warning", "Correctable memory error ; Event Data3 = 02h")]),
                         lambda s: bmc(s, held=[]), "Hardware"),
    "ipmi_sel_full": (lambda s: bmc(s, sel_used_ratio=0.95), lambda s: bmc(s, sel_used_ratio=0.89), "Hardware"),
    "ipmi_unreachable": (lambda s: bmc(s, up=False, error="ipmi-sensors: connection timeout", sensors=[]),
                         lambda s: bmc(s, up=True), "Hardware"),
    "wireguard_handshake_stale": (lambda s: phone(s, handshake_age=310.0, stale=True),
                                  lambda s: phone(s, handshake_age=59.0, stale=False), "WireGuard"),
    "heartbeat_missed": (lambda s: job(s, status="late", last_success=RAN),
                         lambda s: job(s, status="running", last_start=RAN + DAY), "Heartbeats"),
    "heartbeat_failed": (lambda s: job(s, status="failed", last_fail=RAN + 3600, log="rsync: error 23"),
                         lambda s: job(s, status="up", last_fail=RAN, log=""), "Heartbeats"),
    "throughput_low": (lambda s: iperf(s, 0.3), lambda s: iperf(s, 0.5), "Throughput"),
    "probe_down": (lambda s: probe(s, ok=False, error="connection refused"), lambda s: probe(s, ok=True), "Probes"),
    "probe_loss": (lambda s: ping(s, received=10, loss=0.5), lambda s: ping(s, received=17, loss=0.15), "Probes"),
    "probe_latency": (lambda s: ping(s, rtt_ms={"min": 200.0, "avg": 350.0, "max": 900.0, "p95": 800.0}),
                      lambda s: ping(s, rtt_ms={"min": 200.0, "avg": 299.0, "max": 900.0, "p95": 800.0}), "Probes"),
    "tls_expiring": (lambda s: probe(s, cert_expires=SOON, cert_subject="CN=ups.lan"),
                     lambda s: probe(s, cert_expires=LATER, cert_subject="CN=ups.lan"), "Probes"),
    # rule: (make it fire, the nearest healthy state, the overview tile that must not be ok)
    "array_degraded": (degrade, scrub, "Arrays"),
    "array_rebuilding": (rebuild, scrub, "Arrays"),
    "filesystem_full": (lambda s: fs(s, used_ratio=0.93, avail=50e9, size=800e9),
                        lambda s: fs(s, used_ratio=0.89, hours_to_full=30.0), "Host"),
    "filesystem_readonly": (lambda s: fs(s, readonly=True), lambda s: fs(s, readonly=True, expect_readonly=True),
                            "Host"),
    "memory_low": (lambda s: memory(s, 1.0), lambda s: memory(s, 1.7), "Host"),
    "array_member_failed": (failed_member_spare_took_over, member_is_spare, "Arrays"),
    "disk_failing": (lambda s: disk(s, health=2, health_name="failing", reasons=["SMART overall health: FAILED"]),
                     lambda s: disk(s, health=0, reasons=[]), "Disks"),
    "disk_warning": (lambda s: disk(s, health=1, health_name="warning",
                                    reasons=["8 reallocated sectors, up from 0 (SMART 5)"]),
                     lambda s: disk(s, health=1, health_name="warning", reasons=["self-test log contains errors"]),
                     "Disks"),
    "disk_hot": (lambda s: disk(s, temperature=50.0), lambda s: disk(s, temperature=49.9), None),
    "smart_selftest_failed": (lambda s: selftest_log(s, False, True), lambda s: selftest_log(s, True, False), "Disks"),
    "bay_losing_disks": (lambda s: bay_losses(s, 2), lambda s: bay_losses(s, 1), "Disks"),
    "unit_failed": (lambda s: unit(s, "nginx.service", active="failed", sub="failed", result="signal"),
                    lambda s: unit(s, "nginx.service", active="inactive", sub="dead", result="success"), "Services"),
    "unit_restarting": (lambda s: unit(s, "nginx.service", restarts=12, restarts_10m=4),
                        lambda s: unit(s, "nginx.service", restarts=12, restarts_10m=3), "Services"),
    "timer_stale": (lambda s: unit(s, "backup-nightly.timer", stale=True, last_success=time.time() - 30 * 3600),
                    lambda s: unit(s, "backup-nightly.timer", stale=False, last_success=time.time() - 25 * 3600),
                    "Services"),
    "container_unhealthy": (lambda s: container(s, "media-sonarr-1", health="unhealthy", failing_streak=3,
                                                health_log="curl: (7) Connection refused"),
                            lambda s: container(s, "media-sonarr-1", health="starting"), "Containers"),
    "container_restarting": (lambda s: container(s, "media-jellyfin-1", restart_count=9, restarts_10m=4),
                             lambda s: container(s, "media-jellyfin-1", restart_count=9, restarts_10m=3), "Containers"),
    "container_exited": (lambda s: container(s, "media-postgres-1", state="exited", exit_code=1),
                         lambda s: container(s, "media-postgres-1", state="exited", exit_code=0), "Containers"),
    "container_oom": (lambda s: container(s, "media-postgres-1", oom_killed=True, memory_limit_bytes=512 * 2**20),
                      lambda s: container(s, "media-postgres-1", oom_killed=False), "Containers"),
    "bgp_peer_down": (lambda s: peer(s, up=False, state="Active"),
                      lambda s: peer(s, up=False, state="Idle (Admin)", admin_down=True), "BGP"),
    "bgp_all_peers_down": (lambda s: all_peers(s, False), all_but_one_peer_down, "BGP"),
    "bgp_prefixes_dropped": (lambda s: peer(s, prefixes_received=5, prefixes_peak=12),
                             lambda s: peer(s, prefixes_received=6, prefixes_peak=12), "BGP"),
    "bgp_prefix_limit_near": (lambda s: peer(s, prefix_limit=14), lambda s: peer(s, prefix_limit=15), "BGP"),
    "bfd_peer_down": (lambda s: s["frr"].update(bfd=[BFD]),
                      lambda s: s["frr"].update(bfd=[{**BFD, "status": "adm-down", "admin_down": True}]), "BGP"),
    "evpn_vtep_lost": (lambda s: s["frr"].update(evpn=[{"vni": 100, "vxlan_interface": "vni100",
                                                        "remote_vteps": ["10.0.0.2"], "lost_vteps": ["10.0.0.3"]}]),
                       lambda s: s["frr"].update(evpn=[{"vni": 100, "vxlan_interface": "vni100",
                                                        "remote_vteps": ["10.0.0.2", "10.0.0.3"]}]), "BGP"),
    "evpn_vni_down": (lambda s: s["frr"].update(evpn=[{"vni": 200, "vxlan_interface": "vni200", "up": False}]),
                      lambda s: s["frr"].update(evpn=[{"vni": 200, "vxlan_interface": "vni200", "up": True}]), "BGP"),
    "modem_unregistered": (lambda s: modem(s, registration="searching", state="searching"),
                           lambda s: modem(s, registration="roaming"), "Modems"),
    "modem_signal_poor": (lambda s: modem(s, rscp=-104.0, poor=["RSCP -104 dBm"]),
                          lambda s: modem(s, rscp=-99.0, poor=[]), "Modems"),
    "modem_gone": (lambda s: modem(s, gone=True, state="gone", number=None, quality=None),
                   lambda s: modem(s, number="9"), "Modems"),
    "vpn_down": (lambda s: s["openvpn"]["instances"][0].update(up=False, error="status file is 300 s old"),
                 lambda s: s["openvpn"]["instances"][0].update(up=True, error=None), "VPN"),
    "vpn_tunnel_drops": (lambda s: s["openvpn"]["instances"][0].update(drops_delta=5),
                         lambda s: s["openvpn"]["instances"][0].update(drops_delta=0), "VPN"),
    "bond_slave_down": (lambda s: (s["bonding"]["bonds"][0]["slaves"][3].update(up=False),
                                   s["bonding"]["bonds"][0].update(slaves_up=5)),
                        lambda s: s["bonding"]["bonds"][0]["slaves"][3].update(up=True, link_failures=9), "Bonds"),
    "heatpump_fault": (lambda s: s["heatpump"].update(fault=True, active_error=29),
                       lambda s: s["heatpump"].update(fault=False, active_error=0), "Heat pump"),
    # A mild day (mean 2 °C) on which the booster made 8 of 48 kWh; then a day as cold as -8 °C, when it may.
    "heatpump_backup_heater": (lambda s: s["heatpump"].update(days=[BOOSTER_DAY]),
                               lambda s: s["heatpump"].update(days=[{**BOOSTER_DAY, "outside_sum": -8.0}]), "Heat pump"),
    "heatpump_short_cycling": (lambda s: s["heatpump"].update(starts=[1.0, 2.0, 3.0, 4.0, 5.0]),
                               lambda s: s["heatpump"].update(starts=[1.0, 2.0, 3.0]), "Heat pump"),
    "ups_on_battery": (lambda s: s["nut"]["ups"][0].update(on_battery=True, on_battery_seconds=40, flags=["OB"],
                                                            charge=64.0),
                       lambda s: s["nut"]["ups"][0].update(on_battery=False, flags=["OL", "CHRG"]), "Power"),
    "ups_load_high": (lambda s: s["nut"]["ups"][0].update(load=83.0, runtime=420.0),
                      lambda s: s["nut"]["ups"][0].update(load=79.0, runtime=600.0), "Power"),
    "ups_low_battery": (lambda s: s["nut"]["ups"][0].update(on_battery=True, low_battery=True, charge=9.0,
                                                             runtime=95.0),
                        lambda s: s["nut"]["ups"][0].update(on_battery=False, low_battery=False, charge=9.0), "Power"),
    "rail_out_of_range": (lambda s: s["hwmon"]["rails"][0].update(volts=11.2, ok=False),
                          lambda s: s["hwmon"]["rails"][0].update(volts=11.4, ok=True), "Power"),
    "fan_stalled": (lambda s: s["hwmon"]["fans"][0].update(rpm=0.0, stalled=True, why="0 RPM, below 600"),
                    lambda s: s["hwmon"]["fans"][0].update(rpm=610.0, stalled=False, why="610 RPM"), "Power"),
}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_a_rule_fires_on_its_condition_and_the_tile_agrees(healthy: Snapshot, rule: str) -> None:
    bad, _, title = CASES[rule]
    snap = with_states(healthy, bad)
    assert rule in fired(snap)
    if title:
        assert tile(snap, title) != views.OK


H = {"host": "demo-nas"}
BAY3 = {**H, "array": "md0", "serial": "ZA1021DK", "bay": "shelf 1, bay 3", "device": "sdd1",
        "model": "WDC WD80EFZZ-68BTXN0"}
DISK = {**H, "serial": "ZA1000AK", "bay": "shelf 1, bay 0", "device": "sda"}
# What each alert says: its subject (one alert per thing), the summary a person reads in the
# notification, and the labels receivers route on.
SRV = {**H, "mountpoint": "/srv", "device": "/dev/md0", "fstype": "ext4"}
R720 = {**H, "bmc": "r720"}
SAYS = {
    "libvirt_domain_down": ("pihole", "VM pihole (set to autostart) is shut off: destroyed", {**H, "domain": "pihole"}),
    "smartplug_silent": ("rack", "smart plug rack: no data for 10 min", {**H, "plug": "rack"}),
    "ipmi_sensor_critical": ("r720/FAN1", "r720: FAN1: 0 RPM below 600", {**R720, "sensor": "FAN1"}),
    "ipmi_sensor_warning": ("r720/Inlet Temp", "r720: Inlet Temp: 43 °C above 42", {**R720, "sensor": "Inlet Temp"}),
    "ipmi_psu_redundancy_lost": ("r720/PS Redundancy", "r720: PS Redundancy: redundancy lost",
                                 {**R720, "sensor": "PS Redundancy"}),
    "ipmi_sel_critical": ("r720#9", "r720: event log: DIMM A1: uncorrectable memory error (memory module 2)",
                          {**R720, "sensor": "DIMM A1"}),
    "ipmi_sel_warning": ("r720#9", "r720: event log: DIMM A1: correctable memory error (memory module 2)",
                         {**R720, "sensor": "DIMM A1"}),
    "ipmi_sel_full": ("r720", "r720: system event log 95% full: a full log drops new events (read it, then clear it: "
                      "ipmi-sel --clear)", R720),
    "ipmi_unreachable": ("r720", "BMC r720 unreachable: ipmi-sensors: connection timeout", R720),
    "wireguard_handshake_stale": ("wg0/phone", "WireGuard peer phone (HIgo9xNz…) on wg0: last handshake 5 min 10 s "
                                  "ago, stale after 1 min 0 s",
                                  {**H, "interface": "wg0", "peer": "phone", "endpoint": "198.51.100.23:40112"}),
    "heartbeat_missed": ("nightly-backup", "job nightly-backup missed: last ping 3 d 2 h ago "
                         f"({time.strftime('%Y-%m-%d %H:%M', time.localtime(RAN))}); it runs every 24 h",
                         {**H, "heartbeat": "nightly-backup"}),
    "heartbeat_failed": ("nightly-backup", "job nightly-backup failed 3 d 1 h ago: rsync: error 23",
                         {**H, "heartbeat": "nightly-backup", "log": "rsync: error 23"}),
    "filesystem_full": ("/srv", "/srv 93% full (50.0 GB free of 800.0 GB)", SRV),
    "filesystem_readonly": ("/srv", "/srv is read-only (/dev/md0, ext4): a filesystem the kernel remounted after "
                            "errors, or one to list under expect_readonly", SRV),
    "memory_low": ("demo-nas", "memory low: 1.1 GB available of 17.2 GB", H),
    "array_degraded": ("md0", "md0 degraded (11/12): shelf 1, bay 3, WDC WD80EFZZ-68BTXN0 serial ZA1021DK, was sdd1", BAY3),
    "array_rebuilding": ("md0", "md0 rebuilding onto sdd1 (shelf 1, bay 3) 40.0%: degraded (11/12) until it finishes",
                         {**H, "array": "md0"}),
    "array_member_failed": ("md0:ZA1021DK", "md0: member failed: shelf 1, bay 3, WDC WD80EFZZ-68BTXN0 serial ZA1021DK, "
                            "was sdd1", BAY3),
    "bgp_all_peers_down": ("demo-nas", "all 3 BGP sessions of demo-nas are down", H),
    "bgp_peer_down": ("default/ipv4Unicast/10.0.250.1", "BGP peer 10.0.250.1 (edge-router 3G failover) IPv4 unicast down (Active), "
                      "last reset: Waiting for NHT", {**H, "peer": "10.0.250.1", "vrf": "default", "afi": "ipv4Unicast",
                                                 "peer_as": "65200"}),
    "bgp_prefixes_dropped": ("default/ipv4Unicast/10.0.250.1", "BGP peer 10.0.250.1 (edge-router 3G failover) "
                             "IPv4 unicast: accepted prefixes fell from 12 to 5 within 10 min while the session "
                             "stayed up", {**H, "peer": "10.0.250.1", "vrf": "default", "afi": "ipv4Unicast", "peer_as": "65200"}),
    "bgp_prefix_limit_near": ("default/ipv4Unicast/10.0.250.1", "BGP peer 10.0.250.1 IPv4 unicast: 12 prefixes "
                              "accepted of a maximum of 14 (86%); past it the session is torn down", {**H, "peer": "10.0.250.1", "vrf": "default", "afi": "ipv4Unicast", "peer_as": "65200"}),
    "bfd_peer_down": ("default/10.0.250.1", "BFD session to 10.0.250.1 is down (control detection time expired)",
                      {**H, "peer": "10.0.250.1", "vrf": "default"}),
    "evpn_vtep_lost": ("100", "EVPN VNI 100 lost remote VTEP 10.0.0.3 (1 left)",
                       {**H, "vni": "100", "type": "L2", "interface": "vni100"}),
    "evpn_vni_down": ("200", "EVPN VNI 200 has its VXLAN interface vni200 down",
                      {**H, "vni": "200", "type": "L2", "interface": "vni200"}),
    "modem_unregistered": ("356938035643804", "modem 3G link 4 (bond0/eoip4) is not registered on a network "
                           "(registration searching, state searching)", {**H, "modem": "3G link 4", "interface": "eoip4"}),
    "modem_signal_poor": ("356938035643804", "modem 3G link 4 (bond0/eoip4) has a poor 3G signal: RSCP -104 dBm",
                          {**H, "modem": "3G link 4", "interface": "eoip4"}),
    "modem_gone": ("356938035643804", "modem 3G link 4 (bond0/eoip4) is gone: ModemManager no longer lists it "
                   "(unplugged, or its USB port reset)", {**H, "modem": "3G link 4", "interface": "eoip4"}),
    "bond_slave_down": ("bond0/eoip4", "bond bond0: slave eoip4 down (5/6 up)", {**H, "bond": "bond0", "slave": "eoip4"}),
    "disk_failing": ("ZA1000AK", "disk failing, shelf 1, bay 0: ST8000VN004-2M2101 serial ZA1000AK: SMART overall "
                     "health: FAILED", DISK),
    "disk_hot": ("ZA1000AK", "disk hot, shelf 1, bay 0: ST8000VN004-2M2101 serial ZA1000AK: 50 °C", DISK),
    "disk_warning": ("ZA1000AK", "disk warning, shelf 1, bay 0: ST8000VN004-2M2101 serial ZA1000AK: "
                     "8 reallocated sectors, up from 0 (SMART 5)", DISK),
    "smart_selftest_failed": ("ZA1000AK", "self-test failed, shelf 1, bay 0: ST8000VN004-2M2101 serial ZA1000AK: "
                              "long test: Completed: read failure at 1,200 power-on hours, first bad block "
                              "104,870,168", DISK),
    "bay_losing_disks": ("shelf 1, bay 7", "shelf 1, bay 7 has lost 2 disks since "
                         f"{time.strftime('%B %Y', time.localtime(time.time() - 170 * 86400))} (ZA0999XK, ZA0998XK): "
                         "check its cable and backplane slot", {**H, "bay": "shelf 1, bay 7"}),
    "unit_failed": ("nginx.service", "systemd unit nginx.service failed (signal): journalctl -u nginx.service",
                    {**H, "unit": "nginx.service"}),
    "unit_restarting": ("nginx.service", "systemd unit nginx.service restarted 4 times in 10 minutes",
                        {**H, "unit": "nginx.service"}),
    "timer_stale": ("backup-nightly.timer", "timer backup-nightly.timer: backup-nightly.service last succeeded "
                    "30 h 0 min ago (stale after 26 h 0 min)",
                    {**H, "unit": "backup-nightly.timer", "service": "backup-nightly.service"}),
    "container_unhealthy": ("media-sonarr-1", "container media-sonarr-1 (media/sonarr) is unhealthy (3 checks failed "
                            "in a row): curl: (7) Connection refused",
                            {**H, "container": "media-sonarr-1", "project": "media",
                             "image": "lscr.io/linuxserver/sonarr:4.0.11"}),
    "container_restarting": ("media-jellyfin-1", "container media-jellyfin-1 (media/jellyfin) restarted 4 times in 10 "
                             "minutes (9 in all)", {**H, "container": "media-jellyfin-1", "project": "media",
                                                    "image": "jellyfin/jellyfin:10.9.11"}),
    "container_exited": ("media-postgres-1", "container media-postgres-1 (media/postgres) exited with code 1 (restart "
                         "policy unless-stopped: it should be running)",
                         {**H, "container": "media-postgres-1", "project": "media", "image": "postgres:16"}),
    "container_oom": ("media-postgres-1", "container media-postgres-1 (media/postgres) was killed for lack of memory "
                      "(OOM) at its 512 MiB limit",
                      {**H, "container": "media-postgres-1", "project": "media", "image": "postgres:16"}),
    "fan_stalled": ("HBA fan", "HBA fan stalled: 0 RPM, below 600", {**H, "fan": "HBA fan"}),
    "heatpump_backup_heater": ("2026-01-14", "heat pump booster made 17% of the heat on 2026-01-14 (8 of 48 kWh) at "
                               "a mean 2 °C outside, warmer than -5 °C: check the bivalence point and the hot-water "
                               "program", {**H, "date": "2026-01-14", "share": "0.167"}),
    "heatpump_short_cycling": ("heatpump", "heat pump short cycling: the compressor started 5 times within the last "
                               "hour (more than 3); check the flow rate, the switching hysteresis and the buffer",
                               {**H, "starts": "5"}),
    "heatpump_fault": ("heatpump", "heat pump fault: error 29, high-pressure sensor at its maximum (HD-SENSOR-MAX)",
                       {**H, "error": "29"}),
    "rail_out_of_range": ("12V battery bus", "12V battery bus at 11.20 V, outside 11.4-14.6 V",
                          {**H, "rail": "12V battery bus"}),
    "ups_low_battery": ("ups12v", "UPS ups12v battery low: 9% charge, about 1 min left", {**H, "ups": "ups12v"}),
    "ups_load_high": ("ups12v", "UPS ups12v load 83% of its capacity: on battery about 7 min left at this load",
                      {**H, "ups": "ups12v"}),
    "ups_on_battery": ("ups12v", "UPS ups12v on battery (64% charge)", {**H, "ups": "ups12v"}),
    "vpn_down": ("site-b", "VPN site-b down: status file is 300 s old", {**H, "instance": "site-b"}),
    "throughput_low": ("3g down", "throughput test 3g down (download, 10.0.250.1:5201): 12.0 Mbit/s, 30% of its 40 "
                       "Mbit/s baseline", {**H, "test": "3g down", "direction": "download"}),
    "probe_down": ("UPS server", "tcp UPS server (127.0.0.1:3493) is down: connection refused",
                   {**H, "probe": "UPS server", "kind": "tcp", "target": "127.0.0.1:3493"}),
    "probe_loss": ("3g-bond", "ping 3g-bond (10.0.250.1 via ppp0) lost 50% of 20 pings",
                   {**H, "probe": "3g-bond", "kind": "ping", "target": "10.0.250.1"}),
    "probe_latency": ("3g-bond", "ping 3g-bond (10.0.250.1) answers in 350 ms on average (p95 800 ms; warning from "
                      "300 ms)", {**H, "probe": "3g-bond", "kind": "ping", "target": "10.0.250.1"}),
    "tls_expiring": ("UPS server", f"TLS certificate of UPS server (127.0.0.1:3493) expires in 5 days "
                     f"({time.strftime('%Y-%m-%d', time.gmtime(SOON))})",
                     {**H, "probe": "UPS server", "kind": "tcp", "target": "127.0.0.1:3493", "subject": "CN=ups.lan"}),
    "vpn_tunnel_drops": ("site-b", "VPN site-b: 5 packets dropped on tun0 since the last poll",
                         {**H, "instance": "site-b", "interface": "tun0"}),
}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_an_alert_says_which_thing_what_is_wrong_and_carries_the_labels_to_route_on(healthy: Snapshot,
                                                                                   rule: str) -> None:
    bad, _, _ = CASES[rule]
    got = [(c.subject, c.summary, dict(c.labels)) for c in Conditions().build(with_states(healthy, bad))
           if c.rule == rule]
    assert got == [SAYS[rule]]


@pytest.mark.parametrize("rule", sorted(CASES))
def test_a_rule_stays_quiet_on_the_nearest_healthy_state(healthy: Snapshot, rule: str) -> None:
    _, near, _ = CASES[rule]
    assert rule not in fired(with_states(healthy, near))


def test_a_rebuilding_array_is_a_warning_that_resolves_when_the_rebuild_finishes(healthy: Snapshot) -> None:
    snap = with_states(healthy, rebuild)
    # the disk was replaced: the critical "degraded" gives way to "rebuilding", which the tile says too
    assert "array_rebuilding" in fired(snap) and "array_degraded" not in fired(snap)
    assert tile(snap, "Arrays") == views.WARN


def status(name: str, **kw: Any) -> CollectorStatus:
    return CollectorStatus(name, 30, 10, **kw)


def test_collector_down_fires_for_a_failed_or_stale_collector_and_not_for_an_absent_source() -> None:
    now = time.time()
    snap = Snapshot(host="nas")
    snap.statuses = {"frr": status("frr", up=False, last_error="vtysh timed out", last_success=now - 40),
                     "nut": status("nut", up=True, last_success=now - 200),  # 3 intervals missed: stale
                     "smart": status("smart", up=True, no_data=True, last_success=now - 5, last_error="no disks"),
                     "bonding": status("bonding", up=True, last_success=now - 89)}
    got = {c.subject for c in Conditions().build(snap, now=now) if c.rule == "collector_down"}
    assert got == {"frr", "nut"}


def test_heatpump_unreachable_fires_when_its_collector_is_down_and_not_when_up(healthy: Snapshot) -> None:
    down = with_states(healthy, lambda s: None)
    down.statuses["heatpump"] = status("heatpump", up=False, last_error="Modbus: no answer within 3s")
    # one level: the tile says warning, as the alert does (it said failing under a warning alert)
    assert "heatpump_unreachable" in fired(down) and tile(down, "Heat pump") == views.WARN
    up = with_states(healthy, lambda s: None)
    up.statuses["heatpump"] = status("heatpump", up=True, last_success=time.time())
    assert "heatpump_unreachable" not in fired(up)


@pytest.mark.parametrize("kind, title", [("bond_slave_flapping", "bonding"), ("switch_port_flapping", "snmp")])
def test_flapping_fires_on_the_third_failure_within_an_hour_and_not_the_second(healthy: Snapshot, kind: str,
                                                                              title: str) -> None:
    def count(s: States, n: int) -> None:
        if title == "bonding":
            s["bonding"]["bonds"][0]["slaves"][3]["link_failures"] = n
        else:
            s["snmp"]["targets"][0]["ports"][6]["flaps"] = n

    for rises, fires in ((2, False), (3, True)):
        judge = Judge(healthy.host, Thresholds(flap_count=3))
        t0 = 1_790_000_000.0
        Conditions().build(with_states(healthy, lambda s: count(s, 10), judge), now=t0)
        snap = with_states(healthy, lambda s, r=rises: count(s, 10 + r), judge)
        later = Conditions().build(snap, now=t0 + 1800)
        assert (kind in {c.rule for c in later}) is fires
        # The tile reads the same findings: the words that fire are the words on the tile.
        said = [c.summary for c in later if c.rule == kind]
        on_tile = [f.text for f in views.findings(snap)[title]]
        assert all(words in on_tile for words in said) and bool(said) is fires, (said, on_tile)
        if fires:
            shown = {"bonding": "Bonds", "snmp": "Switch ports"}[title]
            assert tile(snap, shown) == views.WARN or tile(snap, shown) == views.BAD
    # Three failures spread over more than an hour are not flapping.
    judge = Judge(healthy.host, Thresholds(flap_count=3))
    Conditions().build(with_states(healthy, lambda s: count(s, 10), judge), now=t0)
    late = Conditions().build(with_states(healthy, lambda s: count(s, 13), judge), now=t0 + 3700)
    assert kind not in {c.rule for c in late}


@pytest.fixture
def agents_db(tmp_path: Path):  # type: ignore[no-untyped-def]
    url = f"sqlite:///{tmp_path / 'a.db'}"
    upgrade(url)
    engine = make_engine(url)
    from app.ingest import agents as agents_mod

    agents_mod.issue(engine, "ceph1")
    cfg = load_config(None, {"host": "server", "storage": {"url": url},
                             "agents": {"silent_after": 120, "clock_skew_warning": 30}})
    yield engine, Agents(engine, "server"), cfg
    engine.dispose()


def set_agent(engine, **values: Any) -> None:  # type: ignore[no-untyped-def]
    with engine.begin() as c:
        c.execute(agent.update().where(agent.c.host == "ceph1").values(**values))


def test_agent_silent_fires_past_silent_after_and_not_before(agents_db) -> None:  # type: ignore[no-untyped-def]
    engine, agents, cfg = agents_db
    now = time.time()
    set_agent(engine, last_contact=now - 121, clock_skew=0.0)
    assert [c.rule for c in agent_conditions(agents, cfg, now)] == ["agent_silent"]
    set_agent(engine, last_contact=now - 119)
    assert agent_conditions(agents, cfg, now) == []


def test_agent_clock_skew_fires_past_the_warning_and_not_at_it(agents_db) -> None:  # type: ignore[no-untyped-def]
    engine, agents, cfg = agents_db
    now = time.time()
    set_agent(engine, last_contact=now - 5, clock_skew=-31.0)
    conds = agent_conditions(agents, cfg, now)
    assert [c.rule for c in conds] == ["agent_clock_skew"] and "31s ahead of the server's" in conds[0].summary
    set_agent(engine, clock_skew=30.0)
    assert agent_conditions(agents, cfg, now) == []


def test_agent_cardinality_fires_while_batches_are_refused_and_clears_after_one_is_taken(agents_db) -> None:  # type: ignore[no-untyped-def]
    engine, agents, cfg = agents_db
    now = time.time()
    set_agent(engine, last_contact=now - 5, clock_skew=0.0)
    agents.over_limit["ceph1"] = (now, "host 'ceph1' has 20000 series and this would add 12")
    assert [c.rule for c in agent_conditions(agents, cfg, now)] == ["agent_cardinality"]
    agents.over_limit.pop("ceph1")
    assert agent_conditions(agents, cfg, now) == []


def test_an_unknown_serial_and_a_missing_runtime_are_said_in_words(healthy: Snapshot) -> None:
    def unknown(s: States) -> None:
        degrade(s)
        member(s).update(serial=None, model=None, bay=None)
        s["nut"]["ups"][0].update(on_battery=True, low_battery=True, charge=None, runtime=None)

    by_rule = {c.rule: c.summary for c in Conditions().build(with_states(healthy, unknown))}
    assert by_rule["array_degraded"] == "md0 degraded (11/12): bay unknown, model unknown serial unknown (not readable from " \
                                        "the disk), was sdd1"
    assert by_rule["ups_low_battery"] == "UPS ups12v battery low: charge unknown, runtime unknown"
    assert by_rule["ups_on_battery"] == "UPS ups12v on battery (charge unknown)"


def test_a_rebuilding_array_with_two_members_out_names_neither_alone(healthy: Snapshot) -> None:
    def two(s: States) -> None:
        degrade(s)
        member(s, 5)["state"] = "failed"

    (c,) = [c for c in Conditions().build(with_states(healthy, two)) if c.rule == "array_degraded"]
    assert "shelf 1, bay 3" in c.summary and "shelf 1, bay 5" in c.summary
    assert set(c.labels) == {"host", "array"}  # bay and serial labels only when one member is out


def test_every_built_in_rule_is_tested_here_or_with_the_storage_rules() -> None:
    from collectors.host.pbs.findings import RULES as PBS_RULES
    from collectors.host.proxmox.findings import RULES as PROXMOX_RULES
    from collectors.host.restic.findings import RULES as RESTIC_RULES
    from tests.alerting.test_storage_rules import RULES as STORAGE

    here = set(CASES) | STORAGE | {"collector_down", "heatpump_unreachable", "bond_slave_flapping", "switch_port_flapping",
                         "agent_silent", "agent_clock_skew", "agent_cardinality", "interface_errors",
                         "energy_budget", "power_above_baseline",  # tests/energy/test_energy_watch.py
                         "data_unprotected", "data_at_risk",  # tests/data/test_data_verdict.py
                         # tests/collectors/network/haproxy: a real haproxy, its servers stopped mid-test
                         "haproxy_backend_down", "haproxy_server_down", "haproxy_sessions_near_limit",
                         # tests/collectors/host/updates: a real apt with the test's own repositories
                         "updates_security_pending", "reboot_required", "package_lists_stale",
                         # tests/collectors/host/proxmox and pbs: through the API stand-in, fired and cleared
                         *(r.name for r in PROXMOX_RULES), *(r.name for r in PBS_RULES),
                         "zfs_snapshot_stale",  # tests/collectors/storage/zfs/test_zfs_snapshots.py
                         # tests/collectors/host/restic and borg: with real restic and borg repositories
                         *(r.name for r in RESTIC_RULES)}
    assert here == set(BUILTIN)


def user_snapshot(*samples: Any) -> Snapshot:
    from collectors.base import Sample

    snap = Snapshot(host="nas")
    snap.samples["hwmon"] = [Sample.of("rackpulse_hwmon_temperature_celsius", v, chip="k10temp", sensor=s)
                             for s, v in samples]
    snap.samples["other"] = [Sample.of("rackpulse_other", 99.0)]
    return snap


@pytest.mark.parametrize("op, threshold, fires_at, quiet_at", [
    (">", 80, 80.5, 80), (">=", 80, 80, 79.9), ("<", 10, 9.9, 10), ("<=", 10, 10, 10.1), ("==", 1, 1, 0),
    ("!=", 0, 1, 0)])
def test_a_user_rule_compares_with_its_operator_exactly_at_the_edge(op: str, threshold: float, fires_at: float,
                                                                     quiet_at: float) -> None:
    from app.alerting.conditions import MetricRule
    from app.alerting.engine import Rule

    mr = MetricRule(Rule("cpu", "warning"), "rackpulse_hwmon_temperature_celsius", op, threshold)
    assert [c.rule for c in Conditions().build(user_snapshot(("Tctl", fires_at)), [mr])] == ["cpu"]
    assert Conditions().build(user_snapshot(("Tctl", quiet_at)), [mr]) == []


def test_a_user_rule_matches_its_labels_names_its_subject_and_fills_its_message() -> None:
    from app.alerting.conditions import MetricRule
    from app.alerting.engine import Rule

    mr = MetricRule(Rule("cpu", "warning"), "rackpulse_hwmon_temperature_celsius", ">", 80, None,
                    (("chip", "k10temp"),), "{metric}{labels} = {value} on {label_sensor}")
    (c,) = Conditions().build(user_snapshot(("Tctl", 85.5), ("Tccd1", 70)), [mr])
    assert c.subject == "chip=k10temp,sensor=Tctl"
    assert c.summary == "rackpulse_hwmon_temperature_celsius{chip=k10temp, sensor=Tctl} = 85.5 on Tctl"
    assert dict(c.labels) == {"host": "nas", "chip": "k10temp", "sensor": "Tctl"}
    other = MetricRule(Rule("x", "warning"), "rackpulse_hwmon_temperature_celsius", ">", 80, None, (("chip", "nct"),))
    assert Conditions().build(user_snapshot(("Tctl", 85.5)), [other]) == []


def test_a_firing_user_rule_clears_only_past_its_clear_threshold() -> None:
    from app.alerting.conditions import MetricRule
    from app.alerting.engine import AlertState, Rule

    mr = MetricRule(Rule("cpu", "warning"), "rackpulse_hwmon_temperature_celsius", ">", 80, 70)
    firing = {("cpu", "chip=k10temp,sensor=Tctl"): AlertState("cpu", "chip=k10temp,sensor=Tctl", "firing", "warning",
                                                               "", {}, 0.0)}
    pending = {k: AlertState(k[0], k[1], "pending", "warning", "", {}, 0.0) for k in firing}
    assert len(Conditions().build(user_snapshot(("Tctl", 75)), [mr], firing)) == 1  # held
    assert Conditions().build(user_snapshot(("Tctl", 75)), [mr], pending) == []  # not firing yet: no hold
    assert Conditions().build(user_snapshot(("Tctl", 70)), [mr], firing) == []  # cleared at the threshold
    assert Conditions().build(user_snapshot(("Tctl", 75)), [mr]) == []
