"""Turn collector state into what pages show: tiles, the failed-disk callout, tables."""

from __future__ import annotations

import time
from typing import Any

from app.scheduler import Snapshot

OK, WARN, BAD, UNKNOWN = "ok", "warning", "failing", "unknown"
RANK = {OK: 0, UNKNOWN: 1, WARN: 2, BAD: 3}
ICON = {OK: "✔", WARN: "▲", BAD: "✖", UNKNOWN: "?"}


def worst(levels: list[str]) -> str:
    return max(levels, key=lambda x: RANK[x]) if levels else UNKNOWN


def arrays(snap: Snapshot) -> list[dict[str, Any]]:
    return list(snap.states.get("mdraid", {}).get("arrays", []))


def disks(snap: Snapshot) -> list[dict[str, Any]]:
    return sorted(snap.states.get("smart", {}).get("disks", []), key=lambda d: (d.get("bay") or "~", d["device"]))


def array_level(a: dict[str, Any]) -> str:
    if not a["active"] or a["degraded"] or a["failed"] or a["array_state"] in ("inactive", "broken"):
        return BAD
    if a["sync_action"] in ("resync", "recovery", "reshape", "repair"):
        return WARN
    return OK


def array_reason(a: dict[str, Any]) -> str:
    if not a["active"]:
        return f"{a['name']} inactive"
    parts = []
    if a["degraded"]:
        parts.append(f"{a['name']} degraded ({a['disks_working']}/{a['disks_total']})")
    for m in pull_list(a):
        parts.append(f"{m['state']}: {describe_member(m)}")
    if a["sync_action"] != "idle":
        pct = f" {a['sync_ratio'] * 100:.1f}%" if a["sync_ratio"] is not None else f" {a['sync_waiting'] or ''}"
        parts.append(f"{a['sync_action']}{pct}")
    return "; ".join(parts) or f"{a['name']} {a['level']} clean"


def describe_member(m: dict[str, Any]) -> str:
    """Where a member is and what it is, in words; what is not known is said to be unknown."""
    bay = m.get("bay") or "bay unknown"
    model = m.get("model") or "model unknown"
    serial = f"serial {m['serial']}" if m.get("serial") else "serial unknown (not readable from the disk)"
    was = f", was {m['device']}" if m.get("device") else ""
    return f"{bay}, {model} {serial}{was}"


def pull_list(a: dict[str, Any]) -> list[dict[str, Any]]:
    """Members the user must act on: failed or missing ones, with their last known bay."""
    return [m for m in a["members"] if m["state"] == "failed" or (m["state"] == "missing" and m.get("device"))]


def overview(snap: Snapshot) -> dict[str, Any]:
    now = time.time()
    tiles = []
    arrs = arrays(snap)
    if arrs or "mdraid" in snap.statuses:
        levels = [array_level(a) for a in arrs]
        bad = [array_reason(a) for a in arrs if array_level(a) != OK]
        tiles.append({"title": "Arrays", "href": "/disks", "level": worst(levels) if arrs else UNKNOWN,
                      "reason": "; ".join(bad) or (f"{len(arrs)} arrays clean" if arrs else "no arrays seen")})
    dsk = disks(snap)
    if dsk or "smart" in snap.statuses:
        levels = [{0: OK, 1: WARN, 2: BAD}[d["health"]] for d in dsk]
        bad = [f"{d.get('bay') or d['device']}: {d['health_name']} ({'; '.join(d['reasons'][:2])})"
               for d in dsk if d["health"] > 0]
        tiles.append({"title": "Disks", "href": "/disks", "level": worst(levels) if dsk else UNKNOWN,
                      "reason": "; ".join(bad) or (f"{len(dsk)} disks healthy" if dsk else "no disks seen")})
    tiles += network_tiles(snap)
    tiles += power_tiles(snap)
    tiles += heatpump_tiles(snap)
    collectors: list[dict[str, Any]] = []
    for st in snap.statuses.values():
        if st.up is None:
            level, reason = UNKNOWN, "not run yet"
        elif not st.up:
            level, reason = BAD, st.last_error or "down"
        elif st.stale(now):
            level, reason = WARN, f"stale: last success {int(now - (st.last_success or now))}s ago"
        elif st.no_data:
            level, reason = OK, f"source absent: {st.last_error}"
        elif st.warnings:
            level, reason = WARN, "; ".join(st.warnings[:3])
        else:
            level, reason = OK, f"ok in {st.duration or 0:.2f}s"
        collectors.append({"name": st.name, "level": level, "reason": reason, "status": st})
    return {"tiles": tiles, "collectors": collectors,
            "overall": worst([t["level"] for t in tiles] + [c["level"] for c in collectors])}


def bgp_peers(snap: Snapshot) -> list[dict[str, Any]]:
    return list(snap.states.get("frr", {}).get("peers", []))


def vpn_instances(snap: Snapshot) -> list[dict[str, Any]]:
    return list(snap.states.get("openvpn", {}).get("instances", []))


def bonds(snap: Snapshot) -> list[dict[str, Any]]:
    return list(snap.states.get("bonding", {}).get("bonds", []))


def switches(snap: Snapshot) -> list[dict[str, Any]]:
    return list(snap.states.get("snmp", {}).get("targets", []))


def peer_level(p: dict[str, Any]) -> str:
    if p["admin_down"]:
        return OK  # shut down on purpose: shown, not alarming
    return OK if p["up"] else BAD


def network_tiles(snap: Snapshot) -> list[dict[str, Any]]:
    """Overview tiles for the network domain, one per kind that has something to show."""
    tiles = []
    peers = bgp_peers(snap)
    if peers:
        down = [p for p in peers if peer_level(p) == BAD]
        flapping = [p for p in peers if p["up"] and (p.get("uptime_seconds") or 1e9) < 600 and (p.get("flaps") or 0)]
        level = BAD if down and len(down) == len([p for p in peers if not p["admin_down"]]) else (
            WARN if down or flapping else OK)
        reason = "; ".join([f"{p['peer']} ({p['vrf']}) {p['state']}" for p in down][:3]
                           + [f"{p['peer']} flapped {p['flaps']}x" for p in flapping][:2])
        tiles.append({"title": "BGP", "href": "/network#bgp", "level": level,
                      "reason": reason or f"{len(peers)} sessions Established"})
    vpns = vpn_instances(snap)
    if vpns:
        bad = [v for v in vpns if not v["up"]]
        drops = [v for v in vpns if v.get("drops_delta")]
        level = BAD if bad else (WARN if drops else OK)
        reason = "; ".join([f"{v['name']} down" for v in bad]
                           + [f"{v['name']}: {v['drops_delta']} tun drops" for v in drops])
        tiles.append({"title": "VPN", "href": "/network#vpn", "level": level,
                      "reason": reason or f"{sum(len(v['clients']) for v in vpns)} clients connected"})
    bs = bonds(snap)
    if bs:
        parts, level = [], OK
        for b in bs:
            down = [s for s in b["slaves"] if not s["up"]]
            if down:
                level = BAD if len(down) == len(b["slaves"]) else (WARN if level == OK else level)
                parts.append(f"{b['name']}: {len(down)}/{len(b['slaves'])} slaves down")
        tiles.append({"title": "Bonds", "href": "/network#bonds", "level": level,
                      "reason": "; ".join(parts) or f"{len(bs)} bonds, all slaves up"})
    sw = switches(snap)
    if sw:
        bad = [t for t in sw if not t["up"]]
        flappy = [(t, p) for t in sw for p in t["ports"] if p["flaps"] >= 4]
        level = BAD if bad else (WARN if flappy else OK)
        reason = "; ".join([f"{t['name']} unreachable" for t in bad]
                           + [f"{t['name']} {p['name']} flapped {p['flaps']}x" for t, p in flappy][:3])
        tiles.append({"title": "Switch ports", "href": "/network#switches", "level": level,
                      "reason": reason or f"{sum(len(t['ports']) for t in sw)} ports"})
    return tiles


def ups_list(snap: Snapshot) -> list[dict[str, Any]]:
    return list(snap.states.get("nut", {}).get("ups", []))


def power(snap: Snapshot) -> dict[str, Any]:
    return snap.states.get("hwmon", {}) or {"rails": [], "fans": [], "sensors": []}


def power_tiles(snap: Snapshot) -> list[dict[str, Any]]:
    ups = ups_list(snap)
    hw = power(snap)
    if not ups and not hw["rails"] and not hw["fans"]:
        return []
    parts, level = [], OK
    for u in ups:
        if not u["up"]:
            level = BAD
            parts.append(f"{u['name']}: {u['error']}")
        elif u["low_battery"]:
            level = BAD
            parts.append(f"{u['name']} on battery, LOW ({u['charge']:.0f}%)")
        elif u["on_battery"]:
            level = WARN if level == OK else level
            parts.append(f"{u['name']} on battery for {int(u['on_battery_seconds'])}s ({u['charge']:.0f}%)")
    for r in hw["rails"]:
        if r["ok"] is False:
            level = BAD
            parts.append(f"{r['name']} at {r['volts']:.2f} V, outside {r['min']}-{r['max']} V")
    for f in hw["fans"]:
        if f["stalled"]:
            level = BAD
            parts.append(f"{f['name']} stalled: {f['why']}")
    return [{"title": "Power", "href": "/power", "level": level,
             "reason": "; ".join(parts) or "on mains, rails in range, fans turning"}]


def heatpump(snap: Snapshot) -> dict[str, Any] | None:
    return snap.states.get("heatpump") or None


def heatpump_tiles(snap: Snapshot) -> list[dict[str, Any]]:
    hp = heatpump(snap)
    st = snap.statuses.get("heatpump")
    if hp is None and (st is None or st.no_data or st.up is None):
        return []
    if st is not None and st.up is False:
        return [{"title": "Heat pump", "href": "/heatpump", "level": BAD, "reason": f"unreachable: {st.last_error}"}]
    assert hp is not None
    if hp["fault"]:
        return [{"title": "Heat pump", "href": "/heatpump", "level": BAD,
                 "reason": f"fault, active error {hp['active_error']}"}]
    t = hp["temperatures"]
    running = [f for f in ("heating", "hot_water", "defrost") if hp["flags"].get(f)]
    reason = (f"outside {t.get('outside', '?')} °C, flow {t.get('flow', '?')} °C, hot water "
              f"{t.get('hot_water_actual', '?')} °C; " + (", ".join(running) or "idle"))
    return [{"title": "Heat pump", "href": "/heatpump", "level": OK, "reason": reason}]


def bays_seen(snap: Snapshot) -> list[str]:
    """An agent host's bays: the labels its disks and array members carry (its config is not here)."""
    seen = {d["bay"] for d in disks(snap) if d.get("bay")}
    seen |= {m["bay"] for a in arrays(snap) for m in a["members"] if m.get("bay")}
    return sorted(seen)


def bay_map(snap: Snapshot, labels: list[str]) -> list[dict[str, Any]]:
    """The user's shelves and bays, in the order configured, each with its disk and state.
    A shelf is the part of the label before its last comma ("shelf 2, bay 7" -> "shelf 2")."""
    by_bay = {d["bay"]: d for d in disks(snap) if d.get("bay")}
    pulls = {m["bay"]: m for a in arrays(snap) for m in pull_list(a) if m.get("bay")}
    shelves: dict[str, list[dict[str, Any]]] = {}
    for label in labels:
        shelf, _, short = label.rpartition(",")
        d = by_bay.get(label)
        pull = pulls.get(label)
        if pull is not None and (d is None or d.get("serial") == pull.get("serial")):
            level, state = BAD, f"PULL: {pull['state']}"
        elif d is None:
            level, state = UNKNOWN, "empty"
        else:
            level = {0: OK, 1: WARN, 2: BAD}[d["health"]]
            state = d["health_name"]
        shelves.setdefault(shelf.strip() or "bays", []).append({
            "label": label, "short": short.strip() or label, "disk": d, "pull": pull, "level": level, "state": state})
    return [{"name": name, "bays": bays} for name, bays in shelves.items()]


# Which stored series make each entity's charts: (title, metric, {label: part of the key}).
ENTITY_CHARTS: dict[str, tuple[tuple[str, ...], list[tuple[str, str, dict[str, int | str]]]]] = {
    "md_array": (("array",), [("Degraded (1 = yes)", "rackpulse_md_array_degraded", {"array": 0}),
                              ("Sync progress", "rackpulse_md_array_sync_completed_ratio", {"array": 0})]),
    "bgp_peer": (("vrf", "afi", "peer"), [("Established (1 = up)", "rackpulse_bgp_peer_up",
                                           {"vrf": 0, "afi": 1, "peer": 2}),
                                          ("Prefixes received", "rackpulse_bgp_peer_prefixes_received",
                                           {"vrf": 0, "afi": 1, "peer": 2})]),
    "vpn_instance": (("instance",), [("Clients", "rackpulse_openvpn_clients", {"instance": 0}),
                                     ("Tun packets dropped on transmit", "rackpulse_interface_transmit_dropped_total",
                                      {"interface": "attr:interface"})]),
    "sensor": (("chip", "sensor"), [("Reading", "attr:metric", {"chip": 0, "sensor": 1})]),
    "bond_slave": (("bond", "slave"), [("Link up (1 = up)", "rackpulse_bond_slave_up", {"bond": 0, "slave": 1}),
                                       ("Link failures", "rackpulse_bond_slave_link_failures_total",
                                        {"bond": 0, "slave": 1})]),
    "switch_port": (("target", "interface"), [("Oper up (1 = up)", "rackpulse_snmp_interface_oper_up",
                                               {"target": 0, "interface": 1}),
                                              ("Flaps", "rackpulse_snmp_interface_flaps_total",
                                               {"target": 0, "interface": 1})]),
    "ups": (("ups",), [("Battery charge", "rackpulse_ups_battery_charge_ratio", {"ups": 0}),
                       ("Battery voltage", "rackpulse_ups_battery_voltage_volts", {"ups": 0})]),
    "rail": (("rail",), [("Voltage", "rackpulse_rail_voltage_volts", {"rail": 0})]),
    "fan": (("fan",), [("Speed (RPM)", "rackpulse_fan_speed_rpm", {"fan": 0})]),
}


def entity_charts(kind: str, key: str, attrs: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Charts for an entity page; label values come from the key's parts or ("attr:x") its attributes."""
    spec = ENTITY_CHARTS.get(kind)
    if spec is None:
        return []
    attrs = attrs or {}
    names, charts = spec
    parts = key.split("/", len(names) - 1) if len(names) > 1 else [key]
    if len(parts) != len(names):
        return []

    def value(ref: int | str) -> str | None:
        if isinstance(ref, int):
            return parts[ref]
        v = attrs.get(ref.removeprefix("attr:"))
        return str(v) if v is not None else None

    out = []
    for title, metric, pick in charts:
        labels = {label: value(ref) for label, ref in pick.items()}
        name = value(metric) if metric.startswith("attr:") else metric
        if name and all(v is not None for v in labels.values()):
            out.append({"title": title, "metric": name, "labels": labels})
    return out
