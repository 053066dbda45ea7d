"""What the Ceph collector knows of the cluster, its health checks and OSDs: its state, typed."""

from __future__ import annotations

from pydantic import Field

from collectors.state import Record, State


class Check(Record):
    name: str  # OSD_DOWN, PG_DEGRADED ...
    severity: str = ""  # HEALTH_WARN | HEALTH_ERR
    summary: str = ""  # Ceph's own words
    count: int | None = None
    muted: bool = False


class Osd(Record):
    id: int | None = None
    name: str  # osd.4
    host: str = ""  # its CRUSH host
    up: bool = False
    in_: bool = Field(False, alias="in")  # reweight > 0
    exists: bool = True
    device_class: str = ""
    device: str | None = None  # the disk behind it, when it is on this host
    serial: str | None = None
    model: str | None = None
    bay: str | None = None


class Cluster(Record):
    health: str = ""  # HEALTH_OK | HEALTH_WARN | HEALTH_ERR
    fsid: str = ""
    quorum: list[str] = []
    checks: list[Check] = []
    num_osds: int | None = None
    num_up: int | None = None
    num_in: int | None = None
    pgs_by_state: dict[str, int | None] = {}
    num_pgs: int | None = None
    bytes_used: float | None = None
    bytes_total: float | None = None
    degraded_ratio: float | None = None
    misplaced_ratio: float | None = None
    recovering_bytes_per_sec: float | None = None
    osds: list[Osd] = []
    osd_tree: bool = False  # `ceph osd tree` was read (the OSDs listed are all of them)


class CephState(State):
    clusters: list[Cluster] = []
