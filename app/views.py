"""Turn the snapshot into what pages show: the overview's tiles (each collector plug-in's
findings and all-clear words), the bay map, the tables, an entity's charts."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlencode

from app.scheduler import Snapshot
from collectors import plugins
from collectors.disks.mdraid.findings import array_level, pull_list
from collectors.disks.smart.findings import disks as sorted_disks
from collectors.findings import BAD, OK, RANK, UNKNOWN, WARN, Finding, Judging, first, natural, worst

__all__ = ["BAD", "OK", "RANK", "UNKNOWN", "WARN", "array_level", "pull_list", "worst"]
ICON = {OK: "✔", WARN: "▲", BAD: "✖", UNKNOWN: "?"}


def arrays(snap: Snapshot) -> list[dict[str, Any]]:
    return list(snap.states.get("mdraid", {}).get("arrays", []))


def disks(snap: Snapshot) -> list[dict[str, Any]]:
    return sorted_disks(snap.states.get("smart", {}))


def judging(snap: Snapshot, name: str, now: float | None = None) -> Judging:
    """The host's one Judging of this plug-in (its thresholds and memory), for a tile's words."""
    return snap.judge.judging(name, snap.statuses.get(name), now)


def findings(snap: Snapshot, now: float | None = None) -> dict[str, list[Finding]]:
    """Each collector's findings on this snapshot, by collector name: judged once per collection
    (app/judge.py), the same that alerts read."""
    return {name: snap.findings_of(name, now) for name in plugins() if snap.seen(name)}


def not_understood(name: str, state: dict[str, Any], host: str = "") -> str | None:
    """Why a plug-in cannot read this state (its findings, tile, section or bays fail on it), or
    None. The agent ingest asks before it stores a state an agent sent: an agent of another
    version may shape it differently, and the server then keeps the last state it understood."""
    plugin = plugins().get(name)
    if plugin is None:
        return None
    for f in plugin.judge(state, Judging(host=host)):
        if f.rule is None and f.text.startswith(f"{name}: state not understood"):
            return f.text.removeprefix(f"{name}: ")
    error = plugin.view(state).get("error")
    return str(error).removeprefix(f"{name}: ") if error else None


def tiles(snap: Snapshot, now: float | None = None) -> list[dict[str, Any]]:
    """One tile per title, in plug-in order; collectors sharing a title (Power: the UPS and the
    rails) share the tile. Shown when something is wrong or there is something to show."""
    found = findings(snap, now)
    merged: dict[str, dict[str, Any]] = {}
    for name, plugin in plugins().items():
        if plugin.tile is None or name not in found:
            continue
        clear = plugin.clear_words(snap.states.get(name) or {}, judging(snap, name, now))
        t = merged.setdefault(plugin.tile.title, {"title": plugin.tile.title, "href": plugin.tile.href,
                                                  "findings": [], "clear": []})
        t["findings"] += found[name]
        if clear is not None:
            t["clear"].append(clear)
    out = []
    for t in merged.values():
        if not t["findings"] and not t["clear"]:
            continue
        wrong = sorted(t["findings"], key=lambda f: -RANK[f.level])
        level = worst([f.level for f in wrong]) if wrong else OK
        out.append({"title": t["title"], "href": t["href"], "level": level,
                    "reason": first([f.text for f in wrong]) if wrong else ", ".join(t["clear"])})
    return out


def overview(snap: Snapshot) -> dict[str, Any]:
    now = time.time()
    tile_list = tiles(snap, now)
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
    return {"tiles": tile_list, "collectors": collectors,
            "overall": worst([t["level"] for t in tile_list] + [c["level"] for c in collectors])}


def pages() -> dict[str, str]:
    """The pages the collector plug-ins' sections make, page -> title, in plug-in order."""
    out: dict[str, str] = {}
    for p in plugins().values():
        if p.section is not None:
            out.setdefault(p.section.page, p.section.title)
    return out


def sections(snap: Snapshot, page: str) -> list[dict[str, Any]]:
    """What a page shows: each of its collectors' sections, with what the section reads."""
    return [{"name": name, "template": f"{name}/section.html", "status": snap.statuses.get(name),
             "v": p.view(snap.states.get(name) or {})}
            for name, p in plugins().items() if p.section is not None and p.section.page == page]


def bgp_peers(snap: Snapshot) -> list[dict[str, Any]]:
    return list(snap.states.get("frr", {}).get("peers", []))


def vpn_instances(snap: Snapshot) -> list[dict[str, Any]]:
    return list(snap.states.get("openvpn", {}).get("instances", []))


def bonds(snap: Snapshot) -> list[dict[str, Any]]:
    return list(snap.states.get("bonding", {}).get("bonds", []))


def switches(snap: Snapshot) -> list[dict[str, Any]]:
    return list(snap.states.get("snmp", {}).get("targets", []))


def ups_list(snap: Snapshot) -> list[dict[str, Any]]:
    return list(snap.states.get("nut", {}).get("ups", []))


def power(snap: Snapshot) -> dict[str, Any]:
    return snap.states.get("hwmon", {}) or {"rails": [], "fans": [], "sensors": []}


def heatpump(snap: Snapshot) -> dict[str, Any] | None:
    return snap.states.get("heatpump") or None


def storage_bays(snap: Snapshot, placed: bool = True) -> list[dict[str, Any]]:
    """The disks every plug-in places in bays (SMART's, md members to pull, ZFS, btrfs, RAID
    controllers, Ceph); with `placed`, only those in a labelled bay."""
    out: list[dict[str, Any]] = []
    for name, p in plugins().items():
        # A state of another shape (an agent of another version) places nothing.
        out.extend(e for e in p.bay_list(snap.states.get(name) or {}) if e.get("bay") or not placed)
    return out


def storage_pulls(snap: Snapshot) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(what it belongs to, the device) for each device to pull, in a bay or not ("bay unknown")."""
    return [({"name": e["where"]}, e) for e in storage_bays(snap, placed=False) if e.get("pull")]


def bays_seen(snap: Snapshot) -> list[str]:
    """An agent host's bays: the labels its disks carry (its config is not here)."""
    return sorted({e["bay"] for e in storage_bays(snap)}, key=natural)


def bay_map(snap: Snapshot, labels: list[str]) -> list[dict[str, Any]]:
    """The user's shelves and bays, in the order configured, each with what is in it. A shelf is
    the part of the label before its last comma ("shelf 2, bay 7" -> "shelf 2"). A device to pull
    speaks for its bay until another disk sits there; else the worst device in the bay does."""
    in_bay: dict[str, list[dict[str, Any]]] = {}
    for e in storage_bays(snap):
        in_bay.setdefault(e["bay"], []).append(e)
    shelves: dict[str, list[dict[str, Any]]] = {}
    for label in dict.fromkeys(labels):  # two rules may name one bay (an old disk and its replacement)
        shelf, _, short = label.rpartition(",")
        here = in_bay.get(label, [])
        present = [e for e in here if not e.get("pull")]
        pull = next((e for e in here if e.get("pull")), None)
        shown = max(present, key=lambda e: RANK[e["level"]], default=None)
        if pull is not None and not any(e.get("serial") != pull.get("serial") and e.get("href") for e in present):
            level, state = BAD, f"PULL: {pull['state']}"
        elif shown is not None:
            level, state = shown["level"], shown["state"]
        else:
            level, state = UNKNOWN, "empty"
        disk = next((e for e in present if e.get("href")), None)  # the disk there now, with its own page
        shelves.setdefault(shelf.strip() or "bays", []).append({
            "label": label, "short": short.strip() or label, "pull": pull, "level": level, "state": state,
            "disk": disk, "other": shown if disk is None else None})
    return [{"name": name, "bays": bays} for name, bays in shelves.items()]


def entity_charts(kind: str, key: str, attrs: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Charts for an entity page; label values come from the key's parts or ("attr:x") its attributes."""
    spec = next((p.charts[kind] for p in plugins().values() if kind in p.charts), None)
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
            out.append({"title": title, "metric": name, "labels": labels, **chart_unit(name)})
    return out


# A metric's unit from its name (Prometheus' naming rules): what a chart's axis and legend say,
# whether SI prefixes apply (14.8 MWh, 1.2 GB), and the factor from the stored base unit.
UNITS: tuple[tuple[str, str, bool, float], ...] = (
    ("_celsius", "°C", False, 1.0), ("_volts", "V", False, 1.0), ("_amperes", "A", False, 1.0),
    ("_watts", "W", True, 1.0), ("_rpm", "RPM", False, 1.0), ("_joules_total", "Wh", True, 1 / 3600),
    ("_bytes_total", "B", True, 1.0), ("_bytes", "B", True, 1.0), ("_bytes_per_second", "bit/s", True, 8.0),
    ("_bits_per_second", "bit/s", True, 1.0),
    ("_seconds_total", "s", True, 1.0), ("_seconds", "s", True, 1.0), ("_ratio", "%", False, 100.0),
)


def chart_unit(metric: str) -> dict[str, Any]:
    """{"unit", "si", "scale"} for a chart of `metric` (no unit for counts and states)."""
    for suffix, unit, si, scale in UNITS:
        if metric.endswith(suffix):
            return {"unit": unit, "si": si, "scale": scale}
    return {"unit": "", "si": True, "scale": 1.0}


def smoke_urls(base: str, metric: str, labels: dict[str, str], range_: str) -> dict[str, str]:
    """The four series of a smokeping-like chart: `metric` with stat=min, avg, p95 and max."""
    def url(stat: str) -> str:
        pairs = [("metric", metric), *(("label", f"{k}={v}") for k, v in labels.items()), ("label", f"stat={stat}"),
                 ("range", range_)]
        return f"{base}/api/series?{urlencode(pairs)}"

    return {stat: url(stat) for stat in ("min", "avg", "p95", "max")}
