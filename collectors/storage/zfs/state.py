"""What the ZFS collector knows of each pool and its devices: its state, typed."""

from __future__ import annotations

from collectors.state import Record, State
from collectors.storage.zfs.snapshots import DatasetSnapshots


class VdevView(Record):
    name: str  # as zpool prints it: mirror-0, ata-WDC_WD80EFZX_R6GX1ABC, sdh, a guid
    state: str = ""  # ONLINE, DEGRADED, FAULTED, UNAVAIL, REMOVED, OFFLINE, AVAIL, INUSE
    group: str = "data"  # data | logs | cache | spares | special | dedup
    depth: int | None = 0  # 0 for a group's top-level vdevs, 1 for their children ...
    parent: str | None = None  # the enclosing vdev (mirror-0, replacing-1)
    read_errors: int | None = None
    write_errors: int | None = None
    checksum_errors: int | None = None
    note: str = ""  # "cannot open", "(resilvering)", "too many errors" ...
    path: str | None = None
    phys_path: str | None = None
    enclosure: str | None = None
    leaf: bool = True  # a disk or partition, not mirror/raidz/replacing
    device: str | None = None  # the disk behind a leaf, its identity and its bay
    serial: str | None = None
    model: str | None = None
    wwn: str | None = None
    bay: str | None = None


class ScanView(Record):
    function: str  # scrub | resilver
    state: str  # scanning | finished | canceled | paused
    ratio: float | None = None
    errors: int | None = None  # errors it could not repair
    repaired: float | None = None  # bytes
    remaining_seconds: float | None = None
    when: str | None = None
    text: str = ""


class PoolView(Record):
    name: str
    state: str = ""
    status: str = ""  # zpool's "status:" paragraph
    action: str = ""
    msgid: str = ""  # ZFS-8000-2Q
    scan: ScanView | None = None
    data_errors: int | None = 0  # permanent errors; None when there are some but how many is unknown
    error_files: list[str] = []
    size: float | None = None
    allocated: float | None = None
    free: float | None = None
    fragmentation: float | None = None  # 0..1
    capacity: float | None = None  # 0..1
    vdevs: list[VdevView] = []


class ZfsState(State):
    pools: list[PoolView] = []
    snapshots: list[DatasetSnapshots] = []  # only with snapshot_max_age set
    snapshot_error: str | None = None
