"""Scheduled SMART self-tests: which disk starts which test now, and why another does not.

The only command rackpulse ever sends a device that is not a read (``smartctl -t short|long``),
so it is opt-in ([collectors.smart.selftest] enabled = true) and careful: tests start only
inside the window, one disk per array at a time, never while that array resyncs, rebuilds or
checks, never on a sleeping disk unless ``wake = true``, at most ``max_parallel`` at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, time
from pathlib import Path

from pydantic import Field, field_validator

from collectors.base import host_path
from collectors.config import Strict
from collectors.disks.mdraid.mdstat import parse_mdstat
from collectors.disks.smart.state import Disk
from collectors.privilege import read_only_smartctl_type

DAY = 86400.0
TYPES = ("short", "long")


class SelfTestConfig(Strict):
    """[collectors.smart.selftest]: off unless asked for."""

    enabled: bool = False
    short_every_days: float = Field(7.0, gt=0)
    long_every_days: float = Field(30.0, gt=0)
    window: str = "01:00-06:00"  # local time; a test starts only inside it (it may run past its end)
    wake: bool = False  # test a disk that sleeps (spins it up)
    max_parallel: int = Field(2, ge=1, le=64)

    @field_validator("window")
    @classmethod
    def _window(cls, v: str) -> str:
        parse_window(v)
        return v


def parse_window(text: str) -> tuple[time, time]:
    """ "01:00-06:00" -> (01:00, 06:00); "22:00-04:00" crosses midnight."""
    m = re.fullmatch(r"\s*(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})\s*", text)
    if not m or int(m[1]) > 23 or int(m[3]) > 24 or int(m[2]) > 59 or int(m[4]) > 59:
        raise ValueError(f"window must be HH:MM-HH:MM in local time, got {text!r}")
    end = time(23, 59, 59) if int(m[3]) == 24 else time(int(m[3]), int(m[4]))
    return time(int(m[1]), int(m[2])), end


def in_window(now: datetime, window: str) -> bool:
    start, end = parse_window(window)
    t = now.time()
    return start <= t < end if start <= end else t >= start or t < end


@dataclass(frozen=True, slots=True)
class Busy:
    """The groups a disk belongs to (md arrays, ZFS vdevs, RAID drive groups), and what keeps
    each from a self-test now."""

    groups: dict[str, list[str]]  # kernel disk name, or "serial:<serial>" -> its groups ("md0")
    reasons: dict[str, str]  # group -> "md0 is in resync (40 %)"

    def groups_of(self, d: Disk) -> list[str]:
        return self.groups.get(d.device, []) + (self.groups.get(f"serial:{d.serial}", []) if d.serial else [])

    def of(self, d: Disk) -> str | None:
        return next((self.reasons[g] for g in self.groups_of(d) if g in self.reasons), None)

    def merged(self, other: Busy) -> Busy:
        groups = {k: list(v) for k, v in self.groups.items()}
        for k, v in other.groups.items():
            groups.setdefault(k, []).extend(v)
        return Busy(groups, {**self.reasons, **other.reasons})


def md_busy(host_root: Path) -> Busy:
    """Which disk sits in which md array, and which arrays are syncing, from /proc/mdstat
    (absent: no md, nothing is busy)."""
    try:
        text = host_path(host_root, "/proc/mdstat").read_text()
    except OSError:
        return Busy({}, {})
    groups: dict[str, list[str]] = {}
    reasons: dict[str, str] = {}
    for arr in parse_mdstat(text).arrays:
        for m in arr.members:
            groups.setdefault(disk_of(m.device), []).append(arr.name)
        if arr.sync is not None:
            done = f" ({arr.sync.ratio * 100:.0f} %)" if arr.sync.ratio is not None else f" ({arr.sync.waiting})"
            reasons[arr.name] = f"{arr.name} is in {arr.sync.action}{done}"
    return Busy(groups, reasons)


def storage_busy(states: Mapping[str, object]) -> Busy:
    """ZFS vdevs and RAID drive groups from the other plug-ins' latest states (this host's): a
    disk's group, and a pool that scrubs or resilvers or a drive group that rebuilds is busy."""
    from collectors.storage.megaraid.state import MegaraidState
    from collectors.storage.zfs.state import ZfsState

    groups: dict[str, list[str]] = {}
    reasons: dict[str, str] = {}
    zfs = states.get("zfs")
    for pool in zfs.pools if isinstance(zfs, ZfsState) else []:
        scanning = pool.scan is not None and pool.scan.state == "scanning"
        for v in pool.vdevs:
            if v.leaf and v.serial:
                group = f"{pool.name}/{v.parent or v.name}"  # a mirror or raidz vdev, or a lone disk
                groups.setdefault(f"serial:{v.serial}", []).append(group)
                if scanning:
                    reasons[group] = f"ZFS pool {pool.name} is in {pool.scan.function}"  # type: ignore[union-attr]
    mega = states.get("megaraid")
    for c in mega.controllers if isinstance(mega, MegaraidState) else []:
        rebuilding = {pd.dg for pd in c.pds if pd.rebuild_ratio is not None or pd.state == "Rbld"}
        for pd in c.pds:
            if pd.serial and pd.dg not in ("-", ""):
                group = f"{c.name} drive group {pd.dg}"
                groups.setdefault(f"serial:{pd.serial}", []).append(group)
                if pd.dg in rebuilding:
                    reasons[group] = f"{group} is rebuilding"
    return Busy(groups, reasons)


def disk_of(partition: str) -> str:
    """ "sdb1" -> "sdb", "nvme0n1p2" -> "nvme0n1", "sdc" -> "sdc"."""
    if m := re.fullmatch(r"((?:nvme|mmcblk)\d+(?:n\d+)?)p\d+", partition):
        return m[1]
    return re.sub(r"(?<=[a-z])\d+$", "", partition)


def last_run(d: Disk, kind: str, now: float) -> float | None:
    """When this disk last ran a test of this kind: what rackpulse started, or the drive's own
    log (its power-on hours then, against its hours now)."""
    started = d.selftest_started.get(kind)
    logged = None
    hours = d.power_on_hours
    for r in d.selftests.log:
        if r.type == kind and r.hours is not None and hours is not None and 0 <= hours - r.hours < 24 * 3650:
            logged = now - (hours - r.hours) * 3600.0
            break
    return max((t for t in (started, logged) if t is not None), default=None)


def due(d: Disk, cfg: SelfTestConfig, now: float) -> str | None:
    """ "long", "short" or None: a long test covers a short one."""
    last_long = last_run(d, "long", now)
    if last_long is None or now - last_long >= cfg.long_every_days * DAY:
        return "long"
    last_short = max(t for t in (last_run(d, "short", now), last_long) if t is not None)
    return "short" if now - last_short >= cfg.short_every_days * DAY else None


def refusal(d: Disk, busy: Busy, running: Iterable[Disk], wake: bool) -> str | None:
    """Why this disk must not start a test now, in words; None when it may."""
    if d.selftests.running:
        return f"{d.device} is already running a {d.selftests.running} test"
    if d.standby and not wake:
        return f"{d.device} is asleep (set wake = true to test sleeping disks)"
    if d.dev_type and d.dev_type not in ("auto", "scsi") and not read_only_smartctl_type(d.dev_type):
        return f"{d.device}'s device type {d.dev_type!r} is not one smartctl only reads through (smartctl(8))"
    if reason := busy.of(d):
        return reason
    mine = set(busy.groups_of(d))
    other = next((o for o in running if o.key != d.key and mine & set(busy.groups_of(o))), None)
    if other is not None:
        shared = sorted(mine & set(busy.groups_of(other)))[0]
        return f"{other.device} in {shared} is already testing (one disk per array at a time)"
    return None


def plan(disks: Sequence[Disk], cfg: SelfTestConfig, now: float, local: datetime, busy: Busy) -> list[tuple[Disk, str]]:
    """The tests to start now: the most overdue disks first, within the limits."""
    if not cfg.enabled or not in_window(local, cfg.window):
        return []
    testing = [d for d in disks if d.selftests.running]
    out: list[tuple[Disk, str]] = []
    wanted = [(d, kind) for d in disks if (kind := due(d, cfg, now))]
    # Longest since a test of its kind first, so a big shelf is worked through evenly.
    wanted.sort(key=lambda dk: last_run(dk[0], dk[1], now) or 0.0)
    for d, kind in wanted:
        if len(testing) >= cfg.max_parallel:
            break
        if refusal(d, busy, testing, cfg.wake) is None:
            out.append((d, kind))
            testing.append(d)
    return out


def test_argv(smartctl: Sequence[str], d: Disk, kind: str, wake: bool) -> list[str]:
    """``smartctl -t short|long``: never waking a sleeping disk unless asked."""
    argv = [*smartctl, "-t", kind]
    if not wake:
        argv.append("--nocheck=standby")
    if d.dev_type and d.dev_type not in ("auto", "scsi"):
        argv += ["-d", d.dev_type]
    return [*argv, "/dev/" + d.device]
