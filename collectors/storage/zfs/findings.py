"""What is wrong with ZFS pools, in the words the tile, the alert and the webhook share."""

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
    about,
    level_of,
)
from collectors.plugin import View
from collectors.storage.common import describe
from collectors.storage.zfs.snapshots import snapshot_findings
from collectors.storage.zfs.state import PoolView, ScanView, VdevView, ZfsState

RULES = (
    RuleSpec("zfs_pool_degraded", "critical", 0, 12, urgency=SOON_DATA, title="ZFS pool degraded"),
    RuleSpec("zfs_device_faulted", "critical", 0, 12, urgency=SOON_HARDWARE, title="ZFS device faulted"),
    RuleSpec("zfs_errors_rising", "warning", 0, 24, title="ZFS device errors rising"),
    RuleSpec("zfs_scrub_errors", "critical", 0, 24, title="ZFS scrub found errors"),
    RuleSpec("zfs_snapshot_stale", "warning", title="ZFS snapshot overdue"),
)
# zpool's states (zpoolconcepts(7)), as words.
STATE_WORDS = {"ONLINE": "online", "DEGRADED": "degraded", "FAULTED": "faulted", "OFFLINE": "offline",
               "UNAVAIL": "unavailable", "REMOVED": "removed", "SUSPENDED": "suspended", "AVAIL": "spare, available",
               "INUSE": "spare, in use"}
ING = {"scrub": "scrubbing", "resilver": "resilvering"}
BAD_STATES = ("FAULTED", "UNAVAIL", "REMOVED", "OFFLINE", "DEGRADED")


def device_words(v: VdevView) -> str:
    """The device by where it sits and what it is, its state in words, and zpool's name for it
    last (a guid once the disk is gone): "shelf 2, bay 1, WDC WD40EFRX serial WD-X unavailable
    (zpool: 11805468287435197437, was ata-WDC_...)"."""
    state = STATE_WORDS.get(v.state, v.state.lower())
    before = v.device or v.path  # the disk it was, or at least the path zpool last opened
    was = f"was {before}" if before and before != v.name else ""
    if not (v.bay or v.serial or v.model):  # nothing known beyond zpool's own name for it
        return f"{v.name} {state}" + (f" ({was})" if was else "")
    # The disk is named by bay, model and serial: zpool's own name for it is enough for experts.
    return f"{describe(v)} {state} (zpool: {v.name})"


def where(v: VdevView) -> str:
    """A device in a line about its errors: its bay when known, else zpool's name."""
    return v.bay or v.name


def being_replaced(v: VdevView) -> bool:
    """A device under replacing-N has its successor resilvering beside it: already dealt with."""
    return (v.parent or "").startswith("replacing-")


def pull_list(p: PoolView) -> list[VdevView]:
    """The devices to act on: leaves that are out and not being replaced. A spare waiting (AVAIL)
    or in use is fine."""
    return [v for v in p.vdevs if v.leaf and v.state in BAD_STATES and not being_replaced(v)]


def _labels(pool: str, devs: list[VdevView]) -> dict[str, str | None]:
    if len(devs) != 1:
        return {"pool": pool}
    v = devs[0]
    return {"pool": pool, "device": v.name, "serial": v.serial, "bay": v.bay, "model": v.model}


def scan_words(scan: ScanView) -> str:
    done = f" {scan.ratio * 100:.1f}%" if scan.ratio is not None else ""
    eta = f", {_minutes(scan.remaining_seconds)} left" if scan.remaining_seconds is not None else ""
    return f"{ING.get(scan.function, scan.function)}{done}{eta}"


def _minutes(seconds: float) -> str:
    if seconds >= 5400:
        return f"{seconds / 3600:.1f} h"
    return f"{max(seconds / 60, 1):.0f} min"


def _errors(v: VdevView) -> int:
    return (v.read_errors or 0) + (v.write_errors or 0) + (v.checksum_errors or 0)


def pool_findings(p: PoolView, judging: Judging) -> list[Finding]:
    name, pulls, out = p.name, pull_list(p), []
    if p.state != "ONLINE":
        replaced = [v for v in p.vdevs if v.leaf and v.state in BAD_STATES and being_replaced(v)]
        where_ = "; ".join([*(device_words(v) for v in pulls),
                           *(f"{device_words(v)} being replaced" for v in replaced)])
        said = STATE_WORDS.get(p.state, p.state.lower())
        out.append(Finding(BAD, f"ZFS pool {name} {said}" + (f": {where_}" if where_ else ""),
                           "zfs_pool_degraded", name, _labels(name, pulls)))
    else:
        for v in pulls:
            out.append(Finding(BAD, f"ZFS pool {name}: {device_words(v)}", "zfs_device_faulted",
                               f"{name}:{v.name}", _labels(name, [v])))
    for v in p.vdevs:
        total = _errors(v)
        if not total:
            continue
        counts = (f"{v.read_errors or 0} read, {v.write_errors or 0} write, {v.checksum_errors or 0} checksum "
                  "errors")
        rose = judging.rose(f"zfs:{name}:{v.name}", total)
        if rose:
            out.append(Finding(WARN, f"ZFS pool {name}: {where(v)} errors rose by {rose} ({counts}; {describe(v)}; "
                                     f"zpool: {v.name})",
                               "zfs_errors_rising", f"{name}:{v.name}", _labels(name, [v])))
        else:
            out.append(Finding(WARN, f"ZFS pool {name}: {where(v)} has {counts} (`zpool clear {name}` resets them)",
                               labels={"pool": name}))
    scan = p.scan
    data_errors = p.data_errors
    if data_errors is None or data_errors > 0 or (scan and scan.state == "finished" and (scan.errors or 0) > 0):
        what = (f"{data_errors} permanent data errors" if data_errors else
                "permanent data errors" if data_errors is None else f"{scan.function} found {scan.errors} errors"
                if scan else "errors")
        files = f" (first: {p.error_files[0]})" if p.error_files else ""
        out.append(Finding(BAD, f"ZFS pool {name}: {what}{files}", "zfs_scrub_errors", name, {"pool": name}))
    if scan and scan.state == "scanning" and scan.function == "resilver":
        out.append(Finding(WARN, f"ZFS pool {name} {scan_words(scan)}", labels={"pool": name}))
    return out


def findings(state: ZfsState, judging: Judging) -> list[Finding]:
    return [f for p in state.pools for f in pool_findings(p, judging)] + snapshot_findings(state.snapshots, judging)


def all_clear(state: ZfsState, judging: Judging) -> str | None:
    pools = state.pools
    if pools:
        return f"{len(pools)} {'pool' if len(pools) == 1 else 'pools'} online"
    return None


def view(state: ZfsState, found: Sequence[Finding]) -> View:
    """Each pool with how it stands: the level of the findings about it."""
    return {"pools": [(p, level_of(about(found, pool=p.name))) for p in state.pools],
            "snapshots": state.snapshots, "snapshot_error": state.snapshot_error,
            "stale": {f.subject for f in found if f.rule == "zfs_snapshot_stale"}}


TILE = Tile("ZFS", "/disks#zfs", all_clear)
CHARTS: dict[str, ChartSpec] = {"zfs_pool": (("pool",), [
    ("Allocated", "rackpulse_zfs_pool_allocated_bytes", {"pool": 0}),
    ("Scrub/resilver progress", "rackpulse_zfs_scan_completed_ratio", {"pool": 0}),
])}


def bay_devices(state: ZfsState) -> list[BayDevice]:
    """Each pool's disks in their bays: a faulted, unavailable or removed one is to be pulled."""
    out = []
    for p in state.pools:
        for v in p.vdevs:
            if not v.leaf:
                continue
            level = BAD if v.state in BAD_STATES else WARN if _errors(v) or "resilvering" in v.note else OK
            out.append(BayDevice(v.bay, v.serial, v.model, v.device or v.name, f"ZFS {STATE_WORDS.get(v.state, v.state.lower())}", level,
                                 f"ZFS pool {p.name}",
                                 pull=v.state in ("FAULTED", "UNAVAIL", "REMOVED") and not being_replaced(v),
                                 entity=("zfs_device", f"{p.name}:{v.name}")))
    return out
