"""Where a data set lives: the mount under its path, the array or pool under that mount, and how
many more disks that array can lose now. Pure functions over the storage plug-ins' typed states
(the host's filesystems, md, ZFS, btrfs), so a fixture state is enough to test them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from collectors.disks.mdraid.state import Array, MdraidState
from collectors.host.basics.state import Filesystem, HostState
from collectors.storage.btrfs.state import BtrfsState, FsView
from collectors.storage.zfs.state import PoolView, ZfsState

# How many disks each md level survives losing (raid10's near-2 layout: at least one).
MD_TOLERANCE = {"raid1": None, "raid4": 1, "raid5": 1, "raid6": 2, "raid10": 1, "raid0": 0, "linear": 0}
# btrfs: what each allocation profile survives; a filesystem is as strong as its weakest.
BTRFS_TOLERANCE = {"single": 0, "dup": 0, "raid0": 0, "raid1": 1, "raid10": 1, "raid5": 1, "raid1c3": 2,
                   "raid6": 2, "raid1c4": 3}
# A ZFS child that no longer carries its share of the vdev.
ZFS_GONE = {"FAULTED", "UNAVAIL", "REMOVED", "OFFLINE"}
_RAIDZ = re.compile(r"^raidz(\d)?-\d+$")


@dataclass(frozen=True)
class Home:
    """Where a path lives. `left`: the disks its array can still lose (0: none; None: not known,
    a device rackpulse does not see beneath, or its plug-in has not read it)."""

    path: str
    mountpoint: str | None = None
    device: str = ""
    kind: str = "unknown"  # md, zfs, btrfs, disk, unknown
    array: str = ""  # md0, the pool, the btrfs filesystem's label: what the array's alerts name
    left: int | None = None
    tolerance: int | None = None
    words: str = ""  # "RAID6 on md0, 1 of 2 parity disks left while md0 rebuilds (43 %)"

    @property
    def reduced(self) -> bool:
        return self.left is not None and self.tolerance is not None and self.left < self.tolerance


def mount_of(path: str, filesystems: Sequence[Filesystem]) -> Filesystem | None:
    """The filesystem whose mount point is the longest prefix of `path`."""
    best = None
    for fs in filesystems:
        m = fs.mountpoint.rstrip("/") or "/"
        if (path == m or m == "/" or path.startswith(m + "/")) and (best is None or len(m) > len(best.mountpoint)):
            best = fs
    return best


def home_of(path: str, host: HostState | None, md: MdraidState | None, zfs: ZfsState | None,
            btrfs: BtrfsState | None, behind_controller: bool = False) -> Home:
    """`behind_controller`: a MegaRAID controller is here, so a plain /dev/sdX may be one of its
    virtual drives, whose redundancy this cannot tell."""
    fs = mount_of(path, host.filesystems) if host is not None else None
    if fs is None:
        return Home(path, words="its mount is not known yet (the host collector reads the filesystems)")
    at = Home(path, fs.mountpoint, fs.device)
    dev = fs.device
    if fs.fstype == "zfs":
        pool = next((p for p in (zfs.pools if zfs else []) if p.name == dev.split("/")[0]), None)
        return _zfs_home(at, dev, pool)
    if fs.fstype == "btrfs":
        fsv = next((f for f in (btrfs.filesystems if btrfs else [])
                    if f.mount == fs.mountpoint or any(d.path == dev for d in f.devices)), None)
        return _btrfs_home(at, fsv)
    name = dev.removeprefix("/dev/")
    if re.fullmatch(r"md\d+|md/.+", name):
        array = next((a for a in (md.arrays if md else []) if a.name in (name, name.removeprefix("md/"))), None)
        return _md_home(at, name, array)
    if re.fullmatch(r"(sd[a-z]+|nvme\d+n\d+|vd[a-z]+|xvd[a-z]+|hd[a-z]+)(p?\d+)?", name) and not behind_controller:
        return replace(at, kind="disk", left=0, tolerance=0,
                    words=f"a single disk ({dev}): no redundancy, it is the only copy on this host")
    return replace(at, words=f"{dev} ({fs.fstype or 'unknown type'}): rackpulse does not see the disks beneath it")


def _md_home(at: Home, name: str, a: Array | None) -> Home:
    if a is None:
        return replace(at, kind="md", array=name, words=f"md array {name}, not read yet (the mdraid collector)")
    level = (a.level or "").lower()
    tol = max((a.disks_total or 1) - 1, 0) if level == "raid1" else MD_TOLERANCE.get(level) or 0
    missing = a.missing or 0
    what = ("mirror disk" if level == "raid1" else "parity disk") + ("s" if tol != 1 else "")
    words = f"{level.upper() or 'md'} on {a.name}"
    if not a.active or a.array_state in ("inactive", "broken"):
        return replace(at, kind="md", array=a.name, left=0, tolerance=tol,
                       words=f"{words}, not running ({a.array_state if a.active else 'inactive'}): "
                             "its data cannot be read")
    left = max(tol - missing, 0)
    if tol == 0:
        words += ": no redundancy (a disk lost is the array lost)"
    else:
        words += f", {left} of {tol} {what} left"
        verb = {"recovery": "rebuilds", "resync": "resyncs", "reshape": "reshapes"}.get(a.sync_action)
        if verb and missing:
            words += f" while {a.name} {verb}" + (f" ({a.sync_ratio:.0%})" if a.sync_ratio is not None else "")
        elif missing:
            words += f", {missing} disk{'s' if missing != 1 else ''} missing"
    return replace(at, kind="md", array=a.name, left=left, tolerance=tol, words=words)


def _zfs_home(at: Home, dataset: str, pool: PoolView | None) -> Home:
    name = dataset.split("/")[0]
    if pool is None:
        return replace(at, kind="zfs", array=name, words=f"ZFS pool {name}, not read yet (the zfs collector)")
    tops = [v for v in pool.vdevs if v.group == "data" and v.depth == 0]
    lefts, tols, kinds = [], [], set()
    for top in tops:
        children = [v for v in pool.vdevs if v.parent == top.name and v.depth == 1]
        if top.name.startswith("mirror"):
            tol, kind = len(children) - 1, "mirror"
        elif m := _RAIDZ.match(top.name):
            tol, kind = int(m.group(1) or 1), f"RAIDZ{m.group(1) or 1}"
        else:
            tol, kind = 0, "single disk"
        # a replacement still resilvering (replacing-1 DEGRADED) does not hold its copy yet
        gone = (sum(1 for c in children if c.state in ZFS_GONE
                    or (c.name.startswith(("replacing", "spare")) and c.state != "ONLINE"))
                if children else int(top.state in ZFS_GONE))
        lefts.append(max(tol - gone, 0))
        tols.append(tol)
        kinds.add(kind)
    if pool.state in ("FAULTED", "UNAVAIL") or not tops:
        return replace(at, kind="zfs", array=name, left=0 if tops else None, tolerance=min(tols, default=None),
                    words=f"ZFS pool {name} is {pool.state or 'not understood'}")
    left, tol = min(lefts), min(tols)
    words = f"ZFS {', '.join(sorted(kinds))} pool {name}"
    what = "mirror disk" if kinds == {"mirror"} else "parity disk" if all(k.startswith("RAIDZ") for k in kinds) \
        else "redundant disk"
    words += (f", {left} of {tol} {what}{'s' if tol != 1 else ''} left" if tol
              else ": no redundancy (a disk lost is the pool lost)")
    if pool.scan is not None and pool.scan.function == "resilver" and pool.scan.state == "scanning":
        words += " while it resilvers" + (f" ({pool.scan.ratio:.0%})" if pool.scan.ratio is not None else "")
    return replace(at, kind="zfs", array=name, left=left, tolerance=tol, words=words)


def _btrfs_home(at: Home, fs: FsView | None) -> Home:
    if fs is None:
        return replace(at, kind="btrfs", words="btrfs, not read yet (the btrfs collector)")
    profiles = {a.profile.lower() for a in fs.allocation if a.type in ("data", "metadata")}
    if not profiles:
        return replace(at, kind="btrfs", array=fs.name, words=f"btrfs {fs.name}, its profiles not read")
    tol = min(BTRFS_TOLERANCE.get(p, 0) for p in profiles)
    missing = fs.missing or 0
    left = max(tol - missing, 0)
    words = f"btrfs {'/'.join(sorted(profiles))} on {fs.name}"
    words += (f", {left} of {tol} redundant disk{'s' if tol != 1 else ''} left" if tol
              else ": no redundancy (a disk lost is data lost)")
    if missing:
        words += f", {missing} device{'s' if missing != 1 else ''} missing"
    return replace(at, kind="btrfs", array=fs.name, left=left, tolerance=tol, words=words)
