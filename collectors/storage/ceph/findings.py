"""What is wrong with a Ceph cluster, in Ceph's own words for each health check, and which
OSD is down with the disk and bay behind it."""

from __future__ import annotations

from collections.abc import Sequence

from collectors.findings import (
    BAD,
    OK,
    SOON_DATA,
    SOON_HARDWARE,
    WARN,
    BayDevice,
    ChartSpec,
    Finding,
    Judging,
    RuleSpec,
    Tile,
    level_of,
)
from collectors.plugin import View
from collectors.storage.ceph.state import CephState, Cluster
from collectors.storage.common import describe

RULES = (
    RuleSpec("ceph_health_err", "critical", 0, 12, urgency=SOON_DATA, title="Ceph health error"),
    RuleSpec("ceph_health_warn", "warning", 300, 24, title="Ceph health warning"),
    RuleSpec("ceph_osd_down", "critical", 120, 12, urgency=SOON_HARDWARE, title="Ceph OSD down"),
)
# Ceph's health states as a person says them (the raw value stays beside them on the page).
HEALTH_WORDS = {"HEALTH_OK": "healthy", "HEALTH_WARN": "health warning", "HEALTH_ERR": "health error"}


def health_words(health: str | None) -> str:
    return HEALTH_WORDS.get(health or "", health or "health unknown")


# Checks the per-OSD findings already say, with the bay: not raised twice.
OSD_CHECKS = ("OSD_DOWN", "OSD_HOST_DOWN")


def cluster_findings(c: Cluster) -> list[Finding]:
    out = []
    for chk in c.checks:
        if chk.muted or (c.osd_tree and chk.name in OSD_CHECKS):
            continue
        err = chk.severity == "HEALTH_ERR"
        name = chk.name or chk.summary
        out.append(Finding(BAD if err else WARN, f"Ceph {health_words(chk.severity)}: {chk.summary}",
                           "ceph_health_err" if err else "ceph_health_warn", name,
                           {"check": chk.name or None, "severity": chk.severity}))
    if c.health != "HEALTH_OK" and not out and not any(not o.up for o in c.osds):
        out.append(Finding(WARN if c.health == "HEALTH_WARN" else BAD, f"Ceph {health_words(c.health)}"))
    for o in c.osds:
        if o.exists and not o.up:
            where = f" ({describe(o)})" if o.serial or o.bay else ""
            out_of = "" if o.in_ else ", out"
            out.append(Finding(BAD, f"Ceph {o.name} down{out_of} on {o.host or 'host unknown'}{where}",
                               "ceph_osd_down", o.name, {"osd": o.name, "ceph_host": o.host or None,
                                                          "serial": o.serial, "bay": o.bay}))
    return out


def findings(state: CephState, judging: Judging) -> list[Finding]:
    return [f for c in state.clusters for f in cluster_findings(c)]


def all_clear(state: CephState, judging: Judging) -> str | None:
    if not state.clusters:
        return None
    c = state.clusters[0]
    clean = c.pgs_by_state.get("active+clean") or 0

    def n(v: int | None) -> str:
        return "?" if v is None else str(v)

    return f"healthy, {n(c.num_up)}/{n(c.num_osds)} OSDs up, {clean}/{n(c.num_pgs)} PGs clean"


def view(state: CephState, found: Sequence[Finding]) -> View:
    """The cluster with how it stands: the level of the findings judged on it (a host sees one cluster)."""
    return {"clusters": [(c, level_of(found)) for c in state.clusters]}


TILE = Tile("Ceph", "/disks#ceph", all_clear)
CHARTS: dict[str, ChartSpec] = {"ceph_osd": (("osd",), [("OSD", "rackpulse_ceph_osd_up", {"osd": 0})])}


def bay_devices(state: CephState) -> list[BayDevice]:
    """OSD disks in their bays. A down OSD is not yet a disk to pull: Ceph may bring it back."""
    return [BayDevice(o.bay, o.serial, o.model, o.device, f"{o.name} {'up' if o.up else 'down'}",
                      OK if o.up else BAD, f"Ceph {o.name} on {o.host}", entity=("ceph_osd", o.name))
            for c in state.clusters for o in c.osds]
