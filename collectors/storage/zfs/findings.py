"""What is wrong with ZFS pools, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from typing import Any

from collectors.findings import (
    BAD,
    OK,
    WARN,
    ChartSpec,
    Finding,
    Judging,
    RuleSpec,
    Tile,
    items,
    level_of,
)
from collectors.storage.common import describe

RULES = (
    RuleSpec("zfs_pool_degraded", "critical", 0, 12),
    RuleSpec("zfs_device_faulted", "critical", 0, 12),
    RuleSpec("zfs_errors_rising", "warning", 0, 24),
    RuleSpec("zfs_scrub_errors", "critical", 0, 24),
)
ING = {"scrub": "scrubbing", "resilver": "resilvering"}
BAD_STATES = ("FAULTED", "UNAVAIL", "REMOVED", "OFFLINE", "DEGRADED")


def device_words(v: dict[str, Any]) -> str:
    where = describe(v)
    was = f", was {v['device']}" if v.get("device") else ""
    return f"{v['name']} {v['state']} ({where}{was})"


def being_replaced(v: dict[str, Any]) -> bool:
    """A device under replacing-N has its successor resilvering beside it: already dealt with."""
    return str(v.get("parent") or "").startswith("replacing-")


def pull_list(p: dict[str, Any]) -> list[dict[str, Any]]:
    """The devices to act on: leaves that are out and not being replaced. A spare waiting (AVAIL)
    or in use is fine."""
    return [v for v in p["vdevs"] if v["leaf"] and v["state"] in BAD_STATES and not being_replaced(v)]


def _labels(pool: str, devs: list[dict[str, Any]]) -> dict[str, Any]:
    if len(devs) != 1:
        return {"pool": pool}
    v = devs[0]
    return {"pool": pool, "device": v["name"], "serial": v.get("serial"), "bay": v.get("bay"), "model": v.get("model")}


def scan_words(scan: dict[str, Any]) -> str:
    done = f" {scan['ratio'] * 100:.1f}%" if scan.get("ratio") is not None else ""
    left = scan.get("remaining_seconds")
    eta = f", {_minutes(left)} left" if left is not None else ""
    return f"{ING.get(scan['function'], scan['function'])}{done}{eta}"


def _minutes(seconds: float) -> str:
    if seconds >= 5400:
        return f"{seconds / 3600:.1f} h"
    return f"{max(seconds / 60, 1):.0f} min"


def pool_findings(p: dict[str, Any], judging: Judging | None = None) -> list[Finding]:
    name, pulls, out = p["name"], pull_list(p), []
    if p["state"] != "ONLINE":
        replaced = [v for v in p["vdevs"] if v["leaf"] and v["state"] in BAD_STATES and being_replaced(v)]
        where = "; ".join([*(device_words(v) for v in pulls),
                           *(f"{device_words(v)} being replaced" for v in replaced)])
        out.append(Finding(BAD, f"ZFS pool {name} {p['state']}" + (f": {where}" if where else ""),
                           "zfs_pool_degraded", name, _labels(name, pulls)))
    else:
        for v in pulls:
            out.append(Finding(BAD, f"ZFS pool {name}: {device_words(v)}", "zfs_device_faulted",
                               f"{name}:{v['name']}", _labels(name, [v])))
    for v in p["vdevs"]:
        total = (v["read_errors"] or 0) + (v["write_errors"] or 0) + (v["checksum_errors"] or 0)
        if not total:
            continue
        counts = f"{v['read_errors']} read, {v['write_errors']} write, {v['checksum_errors']} checksum errors"
        rose = judging.rose(f"zfs:{name}:{v['name']}", total) if judging else 0
        if rose:
            out.append(Finding(WARN, f"ZFS pool {name}: {v['name']} errors rose by {rose} ({counts}; {describe(v)})",
                               "zfs_errors_rising", f"{name}:{v['name']}", _labels(name, [v])))
        else:
            out.append(Finding(WARN, f"ZFS pool {name}: {v['name']} has {counts} (`zpool clear {name}` resets them)"))
    scan = p.get("scan")
    data_errors = p.get("data_errors")
    if data_errors is None or data_errors > 0 or (scan and scan["state"] == "finished" and (scan["errors"] or 0) > 0):
        what = (f"{data_errors} permanent data errors" if data_errors else
                "permanent data errors" if data_errors is None else f"{scan['function']} found {scan['errors']} errors"
                if scan else "errors")
        files = f" (first: {p['error_files'][0]})" if p.get("error_files") else ""
        out.append(Finding(BAD, f"ZFS pool {name}: {what}{files}", "zfs_scrub_errors", name, {"pool": name}))
    if scan and scan["state"] == "scanning" and scan["function"] == "resilver":
        out.append(Finding(WARN, f"ZFS pool {name} {scan_words(scan)}"))
    return out


def pool_level(p: dict[str, Any]) -> str:
    return level_of(pool_findings(p))


def findings(state: dict[str, Any], judging: Judging) -> list[Finding]:
    return [f for p in items(state, "pools") for f in pool_findings(p, judging)]


def all_clear(state: dict[str, Any], judging: Judging) -> str | None:
    pools = items(state, "pools")
    if pools:
        return f"{len(pools)} {'pool' if len(pools) == 1 else 'pools'} online"
    return None


def view(state: dict[str, Any]) -> dict[str, Any]:
    return {"pools": [{**p, "health": pool_level(p)} for p in items(state, "pools")]}


TILE = Tile("ZFS", "/disks#zfs", all_clear)
CHARTS: dict[str, ChartSpec] = {"zfs_pool": (("pool",), [
    ("Allocated", "rackpulse_zfs_pool_allocated_bytes", {"pool": 0}),
    ("Scrub/resilver progress", "rackpulse_zfs_scan_completed_ratio", {"pool": 0}),
])}


def bay_devices(state: dict[str, Any]) -> list[dict[str, Any]]:
    """Each pool's disks in their bays: a faulted, unavailable or removed one is to be pulled."""
    out = []
    for p in items(state, "pools"):
        for v in p["vdevs"]:
            if not v["leaf"]:
                continue
            errors = v["read_errors"] + v["write_errors"] + v["checksum_errors"]
            level = BAD if v["state"] in BAD_STATES else WARN if errors or "resilvering" in v["note"] else OK
            out.append({"bay": v.get("bay"), "serial": v.get("serial"), "model": v.get("model"),
                        "device": v.get("device") or v["name"], "state": f"ZFS {v['state']}", "level": level,
                        "pull": v["state"] in ("FAULTED", "UNAVAIL", "REMOVED") and not being_replaced(v),
                        "where": f"ZFS pool {p['name']}",
                        "entity": ("zfs_device", f"{p['name']}:{v['name']}")})
    return out
