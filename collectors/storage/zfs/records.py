"""A ZFS pool as `zpool status` and `zpool list` describe it, whether read from text or JSON."""

from __future__ import annotations

from dataclasses import dataclass, field

POOL_STATES = ("ONLINE", "DEGRADED", "FAULTED", "OFFLINE", "UNAVAIL", "REMOVED", "SUSPENDED")
VDEV_STATES = ("ONLINE", "DEGRADED", "FAULTED", "OFFLINE", "UNAVAIL", "REMOVED", "AVAIL", "INUSE")


@dataclass
class Vdev:
    name: str  # as printed: "mirror-0", "ata-WDC_WD80EFZX_R6GX1ABC", "sdh", a guid
    state: str
    group: str = "data"  # data | logs | cache | spares | special | dedup
    depth: int = 0  # 0 for a group's top-level vdevs, 1 for their children ...
    parent: str | None = None  # the enclosing vdev's name (mirror-0), None at the top
    read_errors: int = 0
    write_errors: int = 0
    checksum_errors: int = 0
    note: str = ""  # "cannot open", "(resilvering)", "too many errors" ...
    path: str | None = None  # the device path ZFS opened (JSON), or "was /dev/..." of a vanished one
    phys_path: str | None = None  # by-path name (JSON)
    enclosure: str | None = None  # the enclosure slot's sysfs path (JSON)
    leaf: bool = True  # a disk or partition, not mirror/raidz/replacing


@dataclass
class Scan:
    function: str  # scrub | resilver
    state: str  # scanning | finished | canceled | paused
    ratio: float | None = None  # 0..1 while scanning, 1 when finished
    errors: int | None = None  # errors the scan could not repair
    repaired: float | None = None  # bytes repaired (resilvered, for a resilver)
    remaining_seconds: float | None = None
    when: str | None = None  # the start (scanning) or end (finished) time as printed
    text: str = ""  # the scan line as zpool printed it, for the page


@dataclass
class Pool:
    name: str
    state: str
    status: str = ""  # the "status:" paragraph, joined
    action: str = ""
    msgid: str = ""  # ZFS-8000-2Q: the "see:" link's id
    scan: Scan | None = None
    vdevs: list[Vdev] = field(default_factory=list)
    data_errors: int | None = 0  # permanent errors; None when zpool said there are some but not how many
    error_files: list[str] = field(default_factory=list)


@dataclass
class PoolUsage:
    name: str
    health: str | None
    size: float | None
    allocated: float | None
    free: float | None
    fragmentation: float | None  # 0..1
    capacity: float | None  # 0..1
    dedup: float | None
