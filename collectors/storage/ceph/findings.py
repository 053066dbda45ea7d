"""What is wrong with a Ceph cluster, in Ceph's own words for each health check, and which
OSD is down with the disk and bay behind it."""

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
    first,
    items,
    level_of,
)
from collectors.storage.common import describe

RULES = (
    RuleSpec("ceph_health_err", "critical", 0, 12),
    RuleSpec("ceph_health_warn", "warning", 300, 24),
    RuleSpec("ceph_osd_down", "critical", 120, 12),
)
# Checks the per-OSD findings already say, with the bay: not raised twice.
OSD_CHECKS = ("OSD_DOWN", "OSD_HOST_DOWN")


def cluster_findings(c: dict[str, Any]) -> list[Finding]:
    out = []
    for chk in c["checks"]:
        if chk["muted"] or (c["osd_tree"] and chk["name"] in OSD_CHECKS):
            continue
        err = chk["severity"] == "HEALTH_ERR"
        name = chk["name"] or chk["summary"]
        out.append(Finding(BAD if err else WARN, f"Ceph {chk['severity']}: {chk['summary']}",
                           "ceph_health_err" if err else "ceph_health_warn", name,
                           {"check": chk["name"] or None, "severity": chk["severity"]}))
    if c["health"] != "HEALTH_OK" and not out and not any(not o["up"] for o in c["osds"]):
        out.append(Finding(WARN if c["health"] == "HEALTH_WARN" else BAD, f"Ceph {c['health']}"))
    for o in c["osds"]:
        if o["exists"] and not o["up"]:
            where = f" ({describe(o)})" if o.get("serial") or o.get("bay") else ""
            out_of = "" if o["in"] else ", out"
            out.append(Finding(BAD, f"Ceph {o['name']} down{out_of} on {o['host'] or 'host unknown'}{where}",
                               "ceph_osd_down", o["name"], {"osd": o["name"], "ceph_host": o["host"] or None,
                                                             "serial": o.get("serial"), "bay": o.get("bay")}))
    return out


def cluster_level(c: dict[str, Any]) -> str:
    return level_of(cluster_findings(c))


def findings(state: dict[str, Any], judging: Judging) -> list[Finding]:
    return [f for c in items(state, "clusters") for f in cluster_findings(c)]


def all_clear(state: dict[str, Any], judging: Judging) -> str | None:
    clusters = items(state, "clusters")
    if not clusters:
        return None
    c = clusters[0]
    clean = c["pgs_by_state"].get("active+clean", 0)
    return f"HEALTH_OK, {c['num_up']}/{c['num_osds']} OSDs up, {clean}/{c['num_pgs']} PGs clean"


def view(state: dict[str, Any]) -> dict[str, Any]:
    clusters = items(state, "clusters")
    return {"clusters": [{**c, "health_level": cluster_level(c),
                          "says": first([f.text for f in cluster_findings(c)], 5)} for c in clusters]}


TILE = Tile("Ceph", "/disks#ceph", all_clear)
CHARTS: dict[str, ChartSpec] = {"ceph_osd": (("osd",), [("Up", "rackpulse_ceph_osd_up", {"osd": 0})])}


def bay_devices(state: dict[str, Any]) -> list[dict[str, Any]]:
    """OSD disks in their bays. A down OSD is not yet a disk to pull: Ceph may bring it back."""
    return [{"bay": o.get("bay"), "serial": o.get("serial"), "model": o.get("model"), "device": o.get("device"),
             "state": f"{o['name']} {'up' if o['up'] else 'down'}", "level": OK if o["up"] else BAD, "pull": False,
             "where": f"Ceph {o['name']} on {o['host']}",
             "entity": ("ceph_osd", o["name"])}
            for c in items(state, "clusters") for o in c["osds"]]
