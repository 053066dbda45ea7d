"""What is wrong with btrfs filesystems: missing devices, error counters that rise, a scrub
that found what it could not fix."""

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
    RuleSpec("btrfs_device_missing", "critical", 0, 12),
    RuleSpec("btrfs_errors_rising", "warning", 0, 24),
    RuleSpec("btrfs_scrub_errors", "critical", 0, 24),
)


def _labels(fs: str, d: dict[str, Any] | None = None) -> dict[str, Any]:
    if d is None:
        return {"fs": fs}
    return {"fs": fs, "device": d.get("path"), "serial": d.get("serial"), "bay": d.get("bay"), "model": d.get("model")}


def fs_findings(fs: dict[str, Any], judging: Judging | None = None) -> list[Finding]:
    name, out = fs["name"], []
    gone = [d for d in fs["devices"] if d["missing"]]
    if gone or fs["unlisted_missing"]:
        where = "; ".join(f"devid {d['devid']} ({describe(d)}{', was ' + d['path'] if d.get('path') else ''})"
                          for d in gone)
        more = f"{fs['unlisted_missing']} device(s) not listed" if fs["unlisted_missing"] else ""
        text = f"btrfs {name} on {fs['mount']}: {fs['missing']} device(s) missing: " + "; ".join(
            x for x in (where, more) if x)
        out.append(Finding(BAD, text, "btrfs_device_missing", name, _labels(name, gone[0] if len(gone) == 1 else None)))
    for d in fs["devices"]:
        total = sum(n or 0 for n in d["errors"].values())
        if not total:
            continue
        counts = ", ".join(f"{n} {k}" for k, n in d["errors"].items() if n)
        device = d.get("path") or f"devid {d['devid']}"
        rose = judging.rose(f"btrfs:{name}:{d['devid']}", total) if judging else 0
        if rose:
            out.append(Finding(WARN, f"btrfs {name}: {device} errors rose by {rose} ({counts}; {describe(d)})",
                               "btrfs_errors_rising", f"{name}:{d['devid']}", _labels(name, d)))
        else:
            out.append(Finding(WARN, f"btrfs {name}: {device} has {counts} errors "
                                     f"(`btrfs device stats -z` resets them)"))
    scrub = fs.get("scrub")
    if scrub and scrub["uncorrectable"]:
        out.append(Finding(BAD, f"btrfs {name}: scrub found {scrub['uncorrectable']} uncorrectable errors",
                           "btrfs_scrub_errors", name, _labels(name)))
    elif scrub and scrub["corrected"]:
        out.append(Finding(WARN, f"btrfs {name}: scrub corrected {scrub['corrected']} errors"))
    return out


def fs_level(fs: dict[str, Any]) -> str:
    return level_of(fs_findings(fs))


def findings(state: dict[str, Any], judging: Judging) -> list[Finding]:
    return [f for fs in items(state, "filesystems") for f in fs_findings(fs, judging)]


def all_clear(state: dict[str, Any], judging: Judging) -> str | None:
    n = len(items(state, "filesystems"))
    return f"{n} {'filesystem' if n == 1 else 'filesystems'} complete" if n else None


def view(state: dict[str, Any]) -> dict[str, Any]:
    return {"filesystems": [{**fs, "health": fs_level(fs)} for fs in items(state, "filesystems")]}


TILE = Tile("btrfs", "/disks#btrfs", all_clear)
CHARTS: dict[str, ChartSpec] = {"btrfs_fs": (("fs",), [
    ("Missing devices", "rackpulse_btrfs_devices_missing", {"fs": 0}),
])}


def bay_devices(state: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for fs in items(state, "filesystems"):
        for d in fs["devices"]:
            errors = sum(n or 0 for n in d["errors"].values())
            out.append({"bay": d.get("bay"), "serial": d.get("serial"), "model": d.get("model"),
                        "device": d.get("path"), "state": "btrfs missing" if d["missing"] else "btrfs",
                        "level": BAD if d["missing"] else WARN if errors else OK, "pull": d["missing"],
                        "where": f"btrfs {fs['name']}",
                        "entity": ("btrfs_device", f"{fs['name']}:{d['devid']}")})
    return out
