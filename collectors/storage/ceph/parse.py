"""`ceph status -f json`, `ceph osd tree -f json` and `ceph osd metadata -f json`, from jewel
(health.overall_status, summary list) to squid (health.checks with their summaries)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from collectors import finite
from collectors.base import ParseError
from collectors.storage.common import integer, json_shape, number

HEALTH = {"HEALTH_OK": 0, "HEALTH_WARN": 1, "HEALTH_ERR": 2}


@dataclass
class HealthCheck:
    name: str  # OSD_DOWN, PG_DEGRADED ...
    severity: str  # HEALTH_WARN | HEALTH_ERR
    summary: str
    count: int | None = None
    muted: bool = False


@dataclass
class CephStatus:
    health: str  # HEALTH_OK | HEALTH_WARN | HEALTH_ERR
    checks: list[HealthCheck] = field(default_factory=list)
    fsid: str = ""
    num_osds: int | None = None
    num_up: int | None = None
    num_in: int | None = None
    pgs_by_state: dict[str, int] = field(default_factory=dict)
    num_pgs: int | None = None
    bytes_used: float | None = None
    bytes_total: float | None = None
    degraded_ratio: float | None = None
    misplaced_ratio: float | None = None
    recovering_bytes_per_sec: float | None = None
    quorum: list[str] = field(default_factory=list)


def _load(text: str, what: str) -> Any:
    try:
        return finite.loads(text)
    except ValueError as exc:
        raise ParseError(f"{what}: not JSON ({exc}): {text.strip()[:80]!r}") from None


@json_shape("ceph status")
def parse_status(text: str) -> CephStatus:
    doc = _load(text, "ceph status")
    if not isinstance(doc, dict) or not isinstance(doc.get("health"), dict):
        raise ParseError(f"ceph status: no \"health\" object: {text.strip()[:80]!r}")
    h = doc["health"]
    status = str(h.get("status") or h.get("overall_status") or doc.get("overall_status") or "")
    if status not in HEALTH:
        raise ParseError(f"ceph status: unknown health {status!r}")
    st = CephStatus(health=status, fsid=str(doc.get("fsid", "")), quorum=[str(q) for q in doc.get("quorum_names", [])])
    for name, c in (h.get("checks") or {}).items():
        if isinstance(c, dict):
            summary = c.get("summary") or {}
            st.checks.append(HealthCheck(name=str(name), severity=str(c.get("severity", "HEALTH_WARN")),
                                         summary=str(summary.get("message", name)), count=integer(summary.get("count")),
                                         muted=bool(c.get("muted"))))
    for s in h.get("summary") or doc.get("summary") or []:  # jewel and kraken
        if isinstance(s, dict) and s.get("summary"):
            st.checks.append(HealthCheck(name="", severity=str(s.get("severity", "HEALTH_WARN")),
                                         summary=str(s["summary"])))
    osdmap = doc.get("osdmap") or {}
    osdmap = osdmap.get("osdmap") or osdmap if isinstance(osdmap, dict) else {}  # nested before octopus
    st.num_osds, st.num_up, st.num_in = (integer(osdmap.get(k)) for k in ("num_osds", "num_up_osds", "num_in_osds"))
    pg = doc.get("pgmap") or {}
    for row in pg.get("pgs_by_state") or []:
        if isinstance(row, dict) and "state_name" in row:
            st.pgs_by_state[str(row["state_name"])] = integer(row.get("count")) or 0
    st.num_pgs = integer(pg.get("num_pgs"))
    st.bytes_used, st.bytes_total = number(pg.get("bytes_used")), number(pg.get("bytes_total"))
    st.degraded_ratio, st.misplaced_ratio = number(pg.get("degraded_ratio")), number(pg.get("misplaced_ratio"))
    st.recovering_bytes_per_sec = number(pg.get("recovering_bytes_per_sec"))
    return st


@dataclass
class Osd:
    id: int
    name: str  # osd.4
    host: str  # the CRUSH host bucket it sits under ("" when none)
    up: bool
    in_: bool  # reweight > 0
    exists: bool = True
    device_class: str = ""


@json_shape("ceph osd tree")
def parse_osd_tree(text: str) -> list[Osd]:
    doc = _load(text, "ceph osd tree")
    nodes = doc.get("nodes") if isinstance(doc, dict) else None
    if not isinstance(nodes, list):
        raise ParseError(f"ceph osd tree: no \"nodes\" list: {text.strip()[:80]!r}")
    host_of: dict[int, str] = {}
    for n in nodes:
        if isinstance(n, dict) and n.get("type") == "host":
            for child in n.get("children") or []:
                host_of[int(child)] = str(n.get("name", ""))
    osds = []
    for n in [*nodes, *(doc.get("stray") or [])]:
        if not isinstance(n, dict) or n.get("type") != "osd":
            continue
        oid = integer(n.get("id"))
        if oid is None:
            continue
        reweight = number(n.get("reweight"))
        osds.append(Osd(id=oid, name=str(n.get("name", f"osd.{oid}")), host=host_of.get(oid, ""),
                        up=str(n.get("status", "")).lower() == "up", in_=bool(reweight and reweight > 0),
                        exists=bool(n.get("exists", 1)), device_class=str(n.get("device_class", ""))))
    return osds


@dataclass(frozen=True)
class OsdMetadata:
    hostname: str
    devices: list[str]  # ["sdb"]
    serials: list[str]  # ["ZL2PVFA8"]
    models: list[str | None]


@json_shape("ceph osd metadata")
def parse_osd_metadata(text: str) -> dict[int, OsdMetadata]:
    """Each OSD's host, devices, serials and models, by OSD id, from `ceph osd metadata`. device_ids
    reads "sdb=ATA_ST16000NM001G-2KK103_ZL2PVFA8": vendor, model, serial (several, comma-separated);
    an NVMe one has no vendor part."""
    doc = _load(text, "ceph osd metadata")
    rows = doc if isinstance(doc, list) else [doc]
    out: dict[int, OsdMetadata] = {}
    for r in rows:
        if not isinstance(r, dict) or integer(r.get("id")) is None:
            continue
        serials: list[str] = []
        models: list[str | None] = []
        devices = [d for d in str(r.get("devices", "")).split(",") if d]
        for item in str(r.get("device_ids", "")).split(","):
            _, _, ident = item.partition("=")
            if ident:
                head, _, serial = ident.rpartition("_")
                serials.append(serial or ident)
                words = head.split("_")
                models.append(" ".join(words[1:] if len(words) > 1 else words) or None)
        out[int(r["id"])] = OsdMetadata(str(r.get("hostname", "")), devices, serials, models)
    return out
