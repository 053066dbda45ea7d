"""The sources contract, for every plug-in (the out-of-tree one included): a firing alert whose
source cannot be read (the whole collector, or one source of a plug-in that reads several) is
held, never resolved, whether that source vanished, answered 403 or timed out; it resolves once
the source is read again and the condition is gone. Each plug-in whose config lists several
sources declares them (its state's `source_label` and `unreadable_sources`), and every finding
that raises a rule names its source; a plug-in that forgets fails here, not in a home lab."""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args, get_origin

import pytest
from pydantic import BaseModel

import app.alerting.conditions as conditions
from app.alerting.conditions import BUILTIN, Conditions
from app.alerting.engine import AlertState, Rule, evaluate
from app.alerting.sources import RuleSources
from app.scheduler import CollectorStatus, Snapshot
from collectors import plugins
from collectors.plugin import CollectorPlugin
from collectors.state import State
from tests.alerting.test_findings import snapshot

PACKAGE = Path(__file__).parent / "fixtures" / "plugin-package"
NOW = time.time()
# How a source goes away, as the collectors say it: it vanished, refused us, or never answered.
FAILURES = {"vanished": "connection refused", "403": "403 Forbidden: permission check failed",
            "timeout": "timed out after 10s"}


def out_of_tree() -> Any:
    """The out-of-tree plug-in's module, under a name of its own (tests/test_plugins.py installs
    a module called rackpulse_uptime and must not find this one in sys.modules)."""
    name = "rackpulse_uptime_under_contract"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, PACKAGE / "rackpulse_uptime" / "__init__.py")
        assert spec is not None and spec.loader is not None
        module = sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules[name]


ALL: dict[str, CollectorPlugin[Any]] = {**plugins(), "uptime": out_of_tree().PLUGIN}


@pytest.fixture
def with_uptime(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Rule]]:
    """The alert engine as it is where the out-of-tree plug-in is installed."""
    monkeypatch.setattr(conditions, "plugins", lambda: ALL)
    sources = RuleSources()  # the shared rules' too
    sources["host_rebooted"] = "uptime"
    monkeypatch.setattr(conditions, "RULE_SOURCES", sources)
    yield {**BUILTIN, "host_rebooted": Rule("host_rebooted", "warning")}


def firing(rule: str, subject: str, labels: dict[str, str], severity: str = "warning") -> AlertState:
    return AlertState(rule, subject, "firing", severity, "it is broken", {"host": "demo-nas", **labels},
                      since=NOW - 600, fired_at=NOW - 600, last_notified=NOW - 600)


def no_resolved(conds: list[Any], rules: dict[str, Rule], previous: dict[tuple[str, str], AlertState]
                ) -> dict[tuple[str, str], AlertState]:
    states, events = evaluate(conds, rules, previous, NOW)
    assert [e.alert.key for e in events if e.kind in ("resolved", "unwatched")] == []
    assert all(states[k].state == "firing" for k in previous)
    return states


# -- the whole collector -----------------------------------------------------------------------

def whole(name: str, failure: str) -> CollectorStatus:
    if failure == "absent":  # its file or socket is gone: "no data", after it had read something
        return CollectorStatus(name, 60, 30, up=True, no_data=True, last_run=NOW, last_success=NOW,
                               last_data=NOW - 300, last_error="no status file")
    return CollectorStatus(name, 60, 30, up=False, last_run=NOW, last_success=NOW - 300, last_data=NOW - 300,
                           last_error=FAILURES[failure])


@pytest.mark.parametrize("failure", [*FAILURES, "absent"])
@pytest.mark.parametrize("name", sorted(n for n, p in ALL.items() if p.rules))
def test_no_firing_alert_resolves_while_its_collector_cannot_read_its_source(
        name: str, failure: str, with_uptime: dict[str, Rule]) -> None:
    snap = snapshot(**{name: whole(name, failure)})
    snap.states.pop(name, None)  # nothing read this run
    # (a rule several plug-ins share is the one named first in its subject: restic's, borg's)
    shared = RuleSources().shared
    subject = {r.name: f"{name}/subject-1" if r.name in shared else "subject-1" for r in ALL[name].rules}
    previous = {(r.name, subject[r.name]): firing(r.name, subject[r.name], {}) for r in ALL[name].rules}
    conds = Conditions().build(snap, previous=previous, now=NOW)
    no_resolved(conds, with_uptime, previous)
    why = "source absent" if failure == "absent" else "source unreachable"
    held = [c for c in conds if c.subject in subject.values()]
    assert held and all(f"(held: {why} since " in c.summary for c in held)


def test_the_out_of_tree_plug_ins_alert_resolves_once_its_source_is_read_and_all_is_well(
        with_uptime: dict[str, Rule]) -> None:
    UptimeState = out_of_tree().UptimeState  # noqa: N806 - the plug-in's class

    previous = {("host_rebooted", "demo-nas"): firing("host_rebooted", "demo-nas", {})}
    snap = snapshot()
    snap.states["uptime"] = UptimeState(seconds=86400.0)
    snap.statuses["uptime"] = CollectorStatus("uptime", 60, 30, up=True, last_run=NOW, last_success=NOW)
    _, events = evaluate(Conditions().build(snap, previous=previous, now=NOW), with_uptime, previous, NOW)
    assert [(e.kind, e.alert.rule) for e in events] == [("resolved", "host_rebooted")]


# -- one source of several ---------------------------------------------------------------------

@dataclass(frozen=True)
class OneOfSeveral:
    """A plug-in's state with one source whose finding fires, and the state of a run that could
    not read that source (`failure` in its words) while another source was read."""

    source: str
    rule: str
    subject: str
    bad: Callable[[], State]  # the source read, the condition there
    unread: Callable[[str], State]  # that source not read this run
    good: Callable[[], State]  # read again, and the condition gone
    first: Callable[[], State] | None = None  # a run before `bad`, for a rule judged on change (flaps)


def _restic() -> OneOfSeveral:
    from collectors.backup import BackupGroup, BackupRepoView
    from collectors.host.restic.state import ResticState

    other = BackupRepoView(name="offsite", location="sftp:b:/r", groups=[BackupGroup(host="nas", paths=["/srv"],
                                                                                    newest=NOW - 600)])

    def state(newest: float, error: str | None = None) -> ResticState:
        groups = [] if error else [BackupGroup(host="nas", paths=["/srv/photos"], newest=newest)]
        return ResticState(repos=[BackupRepoView(name="local", location="/mnt/r", groups=groups, error=error), other])

    return OneOfSeveral("local", "backup_stale", "restic/local/nas:/srv/photos", lambda: state(NOW - 3 * 86400),
                        lambda why: state(0, error=why), lambda: state(NOW - 600))


def _borg() -> OneOfSeveral:
    from collectors.backup import BackupGroup, BackupRepoView
    from collectors.host.borg.state import BorgState

    other = BackupRepoView(name="usb", location="/mnt/usb", groups=[BackupGroup(host="nas", paths=["/srv"],
                                                                               newest=NOW - 600)])

    def state(newest: float, error: str | None = None) -> BorgState:
        groups = [] if error else [BackupGroup(host="nas", paths=["/srv/documents"], newest=newest)]
        return BorgState(repos=[BackupRepoView(name="offsite", location="ssh://b/./r", groups=groups, error=error),
                                other])

    return OneOfSeveral("offsite", "backup_stale", "borg/offsite/nas:/srv/documents", lambda: state(NOW - 3 * 86400),
                        lambda why: state(0, error=why), lambda: state(NOW - 600))


def _ipmi() -> OneOfSeveral:
    from collectors.host.ipmi.state import BmcView, IpmiState, Sensor

    psu = Sensor(name="PSU2 Status", type="Power Supply", state="Critical", events=["Power Supply Failure detected"])
    fine = BmcView(name="r720", up=True, last_read=NOW, sensors=[Sensor(name="CPU Temp", type="Temperature",
                                                                        state="Nominal", reading=40.0)])
    return OneOfSeveral("switch", "ipmi_sensor_critical", "switch/PSU2 Status",
                        lambda: IpmiState(bmcs=[BmcView(name="switch", up=True, last_read=NOW - 60, sensors=[psu]), fine]),
                        lambda why: IpmiState(bmcs=[BmcView(name="switch", up=False, error=why, last_read=NOW - 60), fine]),
                        lambda: IpmiState(bmcs=[BmcView(name="switch", up=True, last_read=NOW + 60), fine]))


def _pbs() -> OneOfSeveral:
    from collectors.host.pbs.state import PbsDatastore, PbsGroup, PbsState

    def state(verified: str | None, **kw: Any) -> PbsState:
        stores = [PbsDatastore(name="store1", total_bytes=100.0, used_bytes=10.0, error=kw.pop("error", None)),
                  PbsDatastore(name="store2", total_bytes=100.0, used_bytes=10.0)]
        return PbsState(datastores=stores, groups=[PbsGroup(store="store1", type="ct", id="101",
                                                            last_backup=NOW - 3600, verified=verified)], **kw)

    def unread(why: str) -> PbsState:
        if why.startswith("403"):
            return state(None, denied=["the token t lacks Datastore.Audit on /datastore/store1, so "
                                       "/admin/datastore/store1/snapshots cannot be read: grant it"])
        return state(None, error=why)

    return OneOfSeveral("store1", "pbs_verify_failed", "store1/ct/101", lambda: state("failed"), unread,
                        lambda: state("ok"))


def _proxmox() -> OneOfSeveral:
    from collectors.host.proxmox.state import ProxmoxState, PveBackup, PveGuest

    def state(verified: str | None, unread: list[str]) -> ProxmoxState:
        backup = PveBackup(time=NOW - 3600, storage="pbs-store", verified=verified) if verified else None
        guest = PveGuest(vmid="101", name="nextcloud", type="qemu", node="pve1", status="running", backup=backup)
        return ProxmoxState(guests=[guest], unread=unread, backup_max_age=86400 * 2)

    return OneOfSeveral("backups", "pve_backup_failed", "101", lambda: state("failed", []),
                        lambda why: state(None, ["/nodes/pve1/storage/pbs-store/content"]), lambda: state("ok", []))


def _nut() -> OneOfSeveral:
    from collectors.home.nut.state import NutState, Ups

    other = Ups(name="rack", up=True, flags=["OL"], last_read=NOW)
    return OneOfSeveral("ups12v", "ups_on_battery", "ups12v",
                        lambda: NutState(ups=[Ups(name="ups12v", up=True, flags=["DISCHRG", "OB"], on_battery=True,
                                                  on_battery_seconds=600, charge=64, last_read=NOW - 60), other]),
                        lambda why: NutState(ups=[Ups(name="ups12v", up=False, error=why, last_read=NOW - 60), other]),
                        lambda: NutState(ups=[Ups(name="ups12v", up=True, flags=["OL"], last_read=NOW + 60), other]))


def _snmp() -> OneOfSeveral:
    from collectors.network.snmp.state import PortView, SnmpState, Target

    port = PortView(index=7, name="ge-0/0/7", admin_up=True, oper="up", flaps=9)
    other = Target(name="core", host="10.0.0.1", up=True, last_read=NOW)
    return OneOfSeveral("sw1", "switch_port_flapping", "sw1/ge-0/0/7",
                        lambda: SnmpState(targets=[Target(name="sw1", host="10.0.0.2", up=True, ports=[port],
                                                          last_read=NOW - 60), other]),
                        lambda why: SnmpState(targets=[Target(name="sw1", host="10.0.0.2", up=False, error=why,
                                                              last_read=NOW - 60), other]),
                        lambda: SnmpState(targets=[Target(name="sw1", host="10.0.0.2", up=True, last_read=NOW + 60,
                                                          ports=[port]), other]),
                        lambda: SnmpState(targets=[Target(name="sw1", host="10.0.0.2", up=True, last_read=NOW - 120,
                                                          ports=[port.model_copy(update={"flaps": 0})]), other]))


def _openvpn() -> OneOfSeveral:
    from collectors.network.openvpn.state import Instance, OpenvpnState

    other = Instance(name="site", up=True)
    return OneOfSeveral("office", "vpn_tunnel_drops", "office",
                        lambda: OpenvpnState(instances=[Instance(name="office", up=True, interface="tun0",
                                                                 drops_delta=40), other]),
                        lambda why: OpenvpnState(instances=[Instance(name="office", up=False, error=why), other]),
                        lambda: OpenvpnState(instances=[Instance(name="office", up=True, drops_delta=0), other]))


def _hwmon() -> OneOfSeveral:
    from collectors.home.hwmon.state import HwmonState, RailView

    other = RailView(name="5V", volts=5.02, ok=True, min=4.75, max=5.25)
    return OneOfSeveral("12V bus", "rail_out_of_range", "12V bus",
                        lambda: HwmonState(rails=[RailView(name="12V bus", volts=11.1, ok=False, min=11.5, max=14.6),
                                                  other]),
                        lambda why: HwmonState(rails=[RailView(name="12V bus", volts=None, ok=None, min=11.5, max=14.6),
                                                      other]),
                        lambda: HwmonState(rails=[RailView(name="12V bus", volts=12.8, ok=True, min=11.5, max=14.6),
                                                  other]))


def _smartplugs() -> OneOfSeveral:
    from collectors.home.smartplugs.state import PlugView, SmartplugsState

    # Its one rule is the silence itself; the hold keeps what else fired of a plug while the broker is away.
    return OneOfSeveral("rack", "smartplug_silent", "rack",
                        lambda: SmartplugsState(plugs=[PlugView(name="rack", silent=True, last_seen=NOW - 3600)]),
                        lambda why: SmartplugsState(plugs=[PlugView(name="rack", watts=None, last_seen=NOW - 3600)],
                                                    broker_error=why),
                        lambda: SmartplugsState(plugs=[PlugView(name="rack", watts=40.0, last_seen=NOW + 60)]))


def _haproxy() -> OneOfSeveral:
    from collectors.network.haproxy.state import HaproxyInstanceView, HaproxyServerView, HaproxyState

    other = HaproxyInstanceView(name="lan", where="/run/haproxy/lan.sock")

    def state(status: str, error: str | None = None) -> HaproxyState:
        servers = [] if error else [HaproxyServerView(backend="app", name="s1", status=status,
                                                      check="Layer4 connection problem: Connection refused")]
        return HaproxyState(instances=[HaproxyInstanceView(name="edge", where="/run/haproxy/admin.sock", error=error,
                                                           servers=servers), other])

    return OneOfSeveral("edge", "haproxy_server_down", "edge/app/s1", lambda: state("DOWN"),
                        lambda why: state("", error=why), lambda: state("UP"))


SEVERAL = {"haproxy": _haproxy, "ipmi": _ipmi, "pbs": _pbs, "restic": _restic, "borg": _borg, "proxmox": _proxmox, "nut": _nut, "snmp": _snmp, "openvpn": _openvpn,
           "hwmon": _hwmon, "smartplugs": _smartplugs}
# Plug-ins whose config lists things that are not sources of their findings, and why.
NOT_SOURCES = {
    "probes": "each target is the subject of its own probe: a target that does not answer is the finding",
    "heartbeats": "checks ping rackpulse; a check that goes quiet is heartbeat_missed itself",
    "throughput": "each test's server not answering is that test's own finding",
    "wireguard": "peers are read from one `wg show`; a quiet peer is wireguard_handshake_stale itself",
    "modems": "links are read from one ModemManager; a modem that goes away is modem_gone itself",
}


def lists_of_models(plugin: CollectorPlugin[Any]) -> list[str]:
    out = []
    for field, info in plugin.config.model_fields.items():
        args = get_args(info.annotation)
        if get_origin(info.annotation) in (list, tuple) and args and isinstance(args[0], type) \
                and issubclass(args[0], BaseModel):
            out.append(field)
    return out


def test_every_plug_in_whose_config_lists_several_sources_declares_them() -> None:
    listing = {n for n, p in ALL.items() if lists_of_models(p)}
    declared = {n for n, p in ALL.items() if p.state.source_label}
    assert listing - declared - set(NOT_SOURCES) == set(), "declare source_label and unreadable_sources"
    assert declared == set(SEVERAL), "every plug-in that declares sources is held to them here"


@pytest.mark.parametrize("failure", FAILURES)
@pytest.mark.parametrize("name", sorted(SEVERAL))
def test_one_source_that_cannot_be_read_holds_its_alert_while_the_others_are_read(name: str, failure: str) -> None:
    case = SEVERAL[name]()
    label = ALL[name].state.source_label
    snap = Snapshot(host="demo-nas")
    if case.first is not None:
        snap.states[name] = case.first()
        Conditions().build(snap, now=NOW - 120)
        snap.version += 1  # the next run: judged again
    snap.states[name] = case.bad()
    conds = Conditions().build(snap, now=NOW - 60)
    fired = [c for c in conds if (c.rule, c.subject) == (case.rule, case.subject)]
    assert fired and fired[0].labels.get(label) == case.source  # the finding names its source
    previous = {(c.rule, c.subject): firing(c.rule, c.subject, dict(c.labels), c.severity or "warning")
                for c in conds if c.rule == case.rule}

    snap = Snapshot(host="demo-nas")
    snap.states[name] = case.unread(FAILURES[failure])
    assert case.source in snap.states[name].unreadable_sources()
    conds = Conditions().build(snap, previous=previous, now=NOW)
    states = no_resolved(conds, BUILTIN, previous)
    assert f"(held: {case.source} " in states[(case.rule, case.subject)].summary

    snap = Snapshot(host="demo-nas")  # read again, and fine: now it resolves
    snap.states[name] = case.good()
    _, events = evaluate(Conditions().build(snap, previous=states, now=NOW + 60), BUILTIN, states, NOW + 60)
    assert (("resolved", case.rule)) in [(e.kind, e.alert.rule) for e in events]
