"""What is wrong right now, from the latest snapshot: the built-in rules, and user rules
over any metric. Produces Conditions for the pure engine in app/alerting/engine.py."""

from __future__ import annotations

import operator
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from app import views
from app.alerting.engine import AlertState, Condition, Rule
from app.scheduler import Snapshot

BUILTIN: dict[str, Rule] = {r.name: r for r in (
    Rule("array_degraded", "critical", 0, 12),
    Rule("array_member_failed", "critical", 0, 12),
    Rule("disk_failing", "critical", 0, 24),
    Rule("disk_warning", "warning"),
    Rule("disk_hot", "warning", 600),
    Rule("bgp_peer_down", "critical", 60, 12),
    Rule("bgp_all_peers_down", "critical", 0, 4),
    Rule("vpn_down", "critical", 120, 12),
    Rule("vpn_tunnel_drops", "warning", 300),
    Rule("bond_slave_down", "warning", 60),
    Rule("bond_slave_flapping", "warning"),
    Rule("switch_port_flapping", "warning"),
    Rule("heatpump_fault", "critical", 0, 12),
    Rule("heatpump_unreachable", "warning", 600),
    Rule("ups_on_battery", "warning", 30),
    Rule("ups_low_battery", "critical"),
    Rule("rail_out_of_range", "critical", 30),
    Rule("fan_stalled", "critical", 30),
    Rule("collector_down", "warning", 300),
    Rule("agent_silent", "critical", 0, 12),
    Rule("agent_clock_skew", "warning", 300),
    Rule("agent_cardinality", "warning", 0, 12),
)}

OPS = {">": operator.gt, "<": operator.lt, ">=": operator.ge, "<=": operator.le, "==": operator.eq,
       "!=": operator.ne}


@dataclass(frozen=True)
class MetricRule:
    """A user rule: metric (+ label match) compared with a threshold, cleared by another."""

    rule: Rule
    metric: str
    op: str
    threshold: float
    clear_threshold: float | None = None
    labels: tuple[tuple[str, str], ...] = ()
    message: str = "{metric}{labels} is {value}"


class Conditions:
    """Builds the conditions; keeps a little memory for 'flapping' (rises within an hour)."""

    def __init__(self, flap_count: int = 3, flap_window: float = 3600.0, disk_hot_celsius: float = 50.0) -> None:
        self.flap_count, self.flap_window, self.disk_hot = flap_count, flap_window, disk_hot_celsius
        self._flaps: dict[str, deque[tuple[float, float]]] = {}

    def _flapping(self, key: str, counter: float, now: float) -> int:
        """How much `counter` rose within the window."""
        q = self._flaps.setdefault(key, deque())
        q.append((now, counter))
        while q and now - q[0][0] > self.flap_window:
            q.popleft()
        return int(max(0.0, counter - q[0][1]))

    def build(self, snap: Snapshot, user_rules: Iterable[MetricRule] = (),
              previous: dict[tuple[str, str], AlertState] | None = None, now: float | None = None) -> list[Condition]:
        now = now or time.time()
        host = snap.host
        out: list[Condition] = []

        def add(rule: str, subject: str, summary: str, **labels: Any) -> None:
            out.append(Condition(rule, subject, summary, {"host": host, **{k: str(v) for k, v in labels.items()
                                                                           if v is not None}}))

        for a in views.arrays(snap):
            pulls = views.pull_list(a)
            where = "; ".join(views.describe_member(m) for m in pulls)
            if a["degraded"] or not a["active"]:
                add("array_degraded", a["name"], f"{a['name']} degraded: {where}" if where else
                    f"{a['name']} {'inactive' if not a['active'] else 'degraded'} ({a['disks_working']}/"
                    f"{a['disks_total']})", array=a["name"], **_member_labels(pulls))
            elif pulls:
                for m in pulls:
                    add("array_member_failed", f"{a['name']}:{m.get('serial') or m['device']}",
                        f"{a['name']}: member {m['state']}: {views.describe_member(m)}", array=a["name"],
                        **_member_labels([m]))
        for d in views.disks(snap):
            serial = f"serial {d['serial']}" if d.get("serial") else f"serial unknown ({d['key']})"
            where = f"{d.get('bay') or d['device']}: {d.get('model') or 'model unknown'} {serial}"
            lab = {"serial": d.get("serial") or d["key"], "bay": d.get("bay"), "device": d["device"]}
            if d["health"] == 2:
                add("disk_failing", d["key"], f"disk failing, {where}: {'; '.join(d['reasons'][:3])}", **lab)
            elif d["health"] == 1 and any("rose" in r or " = " in r for r in d["reasons"]):
                add("disk_warning", d["key"], f"disk warning, {where}: {'; '.join(d['reasons'][:3])}", **lab)
            if d.get("temperature") is not None and d["temperature"] >= self.disk_hot:
                add("disk_hot", d["key"], f"disk hot, {where}: {d['temperature']:g} °C", **lab)
        peers = views.bgp_peers(snap)
        live = [p for p in peers if not p["admin_down"]]
        for p in live:
            if not p["up"]:
                add("bgp_peer_down", f"{p['vrf']}/{p['afi']}/{p['peer']}",
                    f"BGP peer {p['peer']} ({p.get('description') or p['remote_as']}) {p['state']}"
                    + (f", last reset: {p['last_reset']}" if p.get("last_reset") else ""),
                    peer=p["peer"], vrf=p["vrf"], afi=p["afi"], peer_as=p["remote_as"])
        if live and not any(p["up"] for p in live):
            add("bgp_all_peers_down", host, f"all {len(live)} BGP sessions of {host} are down")
        for v in views.vpn_instances(snap):
            if not v["up"]:
                add("vpn_down", v["name"], f"VPN {v['name']} down: {v.get('error')}", instance=v["name"])
            elif v.get("drops_delta"):
                add("vpn_tunnel_drops", v["name"], f"VPN {v['name']}: {v['drops_delta']} packets dropped on "
                    f"{v.get('interface')} since the last poll", instance=v["name"], interface=v.get("interface"))
        for b in views.bonds(snap):
            for s in b["slaves"]:
                if not s["up"]:
                    add("bond_slave_down", f"{b['name']}/{s['name']}", f"bond {b['name']}: slave {s['name']} down "
                        f"({b['slaves_up']}/{len(b['slaves'])} up)", bond=b["name"], slave=s["name"])
                rose = self._flapping(f"bond:{b['name']}/{s['name']}", s["link_failures"], now)
                if rose >= self.flap_count:
                    add("bond_slave_flapping", f"{b['name']}/{s['name']}", f"bond {b['name']}: slave {s['name']} "
                        f"failed {rose} times in the last hour", bond=b["name"], slave=s["name"])
        for t in views.switches(snap):
            for p in t["ports"]:
                rose = self._flapping(f"port:{t['name']}/{p['name']}", p["flaps"], now)
                if rose >= self.flap_count:
                    add("switch_port_flapping", f"{t['name']}/{p['name']}", f"{t['name']} port {p['name']} "
                        f"{('(' + p['alias'] + ') ') if p.get('alias') else ''}changed state {rose} times in the last "
                        "hour", target=t["name"], interface=p["name"])
        hp = views.heatpump(snap)
        hp_status = snap.statuses.get("heatpump")
        if hp_status is not None and hp_status.up is False:
            add("heatpump_unreachable", "heatpump", f"heat pump unreachable: {hp_status.last_error}")
        elif hp and hp["fault"]:
            add("heatpump_fault", "heatpump", f"heat pump fault: active error {hp['active_error']}",
                error=hp["active_error"])
        for u in views.ups_list(snap):
            if u.get("up") and u["low_battery"]:
                add("ups_low_battery", u["name"], f"UPS {u['name']} LOW BATTERY: {_charge(u)}, "
                    f"{_runtime(u)}", ups=u["name"])
            if u.get("up") and u["on_battery"]:
                add("ups_on_battery", u["name"], f"UPS {u['name']} on battery ({_charge(u)})", ups=u["name"])
        power = views.power(snap)
        for r in power["rails"]:
            if r["ok"] is False:
                add("rail_out_of_range", r["name"], f"{r['name']} at {r['volts']:.2f} V, outside "
                    f"{r['min']}-{r['max']} V", rail=r["name"])
        for f in power["fans"]:
            if f["stalled"]:
                add("fan_stalled", f["name"], f"{f['name']} stalled: {f['why']}", fan=f["name"])
        for st in snap.statuses.values():
            if st.up is False or st.stale(now):
                add("collector_down", st.name, f"collector {st.name} "
                    f"{'down: ' + (st.last_error or '') if st.up is False else 'stale'}", collector=st.name)
        out += self._user(snap, user_rules, previous or {})
        return out

    def _user(self, snap: Snapshot, rules: Iterable[MetricRule], previous: dict[tuple[str, str], AlertState]
              ) -> list[Condition]:
        out: list[Condition] = []
        rules = list(rules)
        if not rules:
            return out
        wanted = {mr.metric for mr in rules}
        by_metric: dict[str, list[Any]] = {}
        for samples in snap.samples.values():
            for smp in samples:
                if smp.metric in wanted:
                    by_metric.setdefault(smp.metric, []).append(smp)
        for mr in rules:
            for smp in by_metric.get(mr.metric, ()):
                labels = dict(smp.labels)
                if any(labels.get(k) != v for k, v in mr.labels):
                    continue
                # Cheap test first; the subject and the message only for samples that matter.
                hot = OPS[mr.op](smp.value, mr.threshold)
                cold_side = mr.clear_threshold is not None and OPS[mr.op](smp.value, mr.clear_threshold)
                if not hot and not cold_side:
                    continue
                subject = ",".join(f"{k}={v}" for k, v in smp.labels) or mr.metric
                firing = previous.get((mr.rule.name, subject))
                # Hysteresis: once firing, it clears only past the clear threshold.
                held = firing is not None and firing.state == "firing" and mr.clear_threshold is not None
                if hot or (held and cold_side):
                    shown = "{" + ", ".join(f"{k}={v}" for k, v in smp.labels) + "}" if labels else ""
                    text = mr.message.format(metric=mr.metric, value=f"{smp.value:g}", labels=shown,
                                             **{f"label_{k}": v for k, v in labels.items()})
                    out.append(Condition(mr.rule.name, subject, text, {"host": snap.host, **labels}))
        return out


def _charge(u: dict[str, Any]) -> str:
    return f"{u['charge']:.0f}% charge" if u.get("charge") is not None else "charge unknown"


def _runtime(u: dict[str, Any]) -> str:
    s = u.get("runtime")
    if s is None:
        return "runtime unknown"
    return f"about {int(s) // 60} min left" if s >= 60 else f"about {int(s)} s left"


def _member_labels(members: list[dict[str, Any]]) -> dict[str, Any]:
    if len(members) != 1:
        return {}
    m = members[0]
    return {"serial": m.get("serial"), "bay": m.get("bay"), "device": m.get("device"), "model": m.get("model")}
