"""The demo host's /proc: a quiet NAS whose disks get busy while md0 rebuilds (story time
115-200 s) and whose memory and load rise with it; the files in the kernel's own formats."""

from __future__ import annotations

import math
import os
from pathlib import Path

from collectors.base import host_path
from collectors.scenes import atomic_write as _atomic

REBUILD = (115.0, 200.0)
DISKS = [f"sd{chr(ord('a') + i)}" for i in range(12)] + ["sdm", "nvme0n1", "nvme1n1"]
GIB = 1 << 30


def _quiet(t: float) -> float:
    """Busy core-seconds of the quiet host from 0 to t: 2 cores at 8 % +/- 3 %."""
    return 2 * (0.08 * t + 0.6 * (1 - math.cos(t / 20)))


def busy_seconds(t: float) -> float:
    """Busy core-seconds from the loop's start to t: quiet, 55 % of both cores while md0 rebuilds."""
    a, b = REBUILD
    if t <= a:
        return _quiet(t)
    during = 2 * 0.55 * (min(t, b) - a)
    return _quiet(a) + during + (_quiet(t) - _quiet(b) if t > b else 0.0)


def write_scene(root: Path, t: float) -> None:
    rebuilding = REBUILD[0] <= t < REBUILD[1]
    # Counters must only grow within a loop: CPU time is the integral of how busy the host was,
    # so the busy share between two polls is the story's (8 % quiet, 55 % while md0 rebuilds).
    ticks = int(t * 100) + 1_000_000  # per core, at USER_HZ 100
    spent = int(100 * busy_seconds(t)) + 80_000  # both cores' busy ticks
    user, system = spent * 6 // 10, spent - spent * 6 // 10
    idle = ticks * 2 - user - system  # two cores
    _atomic(host_path(root, "/proc/stat"), f"cpu  {user} 0 {system} {idle} 0 0 0 0 0 0\n"
            f"cpu0 {user // 2} 0 {system // 2} {idle // 2} 0 0 0 0 0 0\n"
            f"cpu1 {user - user // 2} 0 {system - system // 2} {idle - idle // 2} 0 0 0 0 0 0\n")
    load = 1.6 if rebuilding else 0.2  # the run queue of two cores at 55 % (and md's I/O wait), or at 8 %
    _atomic(host_path(root, "/proc/loadavg"), f"{load:.2f} {load * 0.8:.2f} {load * 0.6:.2f} 2/311 4242\n")
    avail = (9 if rebuilding else 12) * GIB
    _atomic(host_path(root, "/proc/meminfo"), f"MemTotal:       {16 * GIB // 1024} kB\nMemFree:        "
            f"{avail // 2048} kB\nMemAvailable:   {avail // 1024} kB\nSwapTotal:      {4 * GIB // 1024} kB\n"
            f"SwapFree:       {4 * GIB // 1024} kB\n")
    for mount in ("srv", "boot"):
        (root / mount).mkdir(exist_ok=True)
    _atomic(host_path(root, "/proc/mounts"), "/dev/md0 /srv ext4 rw,relatime 0 0\n"
            "/dev/md1 /boot ext4 rw,relatime 0 0\nproc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n")
    rx = int(t * 1.2e6) + 10**9
    _atomic(host_path(root, "/proc/net/dev"),
            "Inter-|   Receive                                                |  Transmit\n"
            " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo "
            "colls carrier compressed\n"
            f"    lo: 5000 50 0 0 0 0 0 0 5000 50 0 0 0 0 0 0\n"
            f"  eth0: {rx} {rx // 1400} 0 0 0 0 0 0 {rx // 3} {rx // 4200} 0 0 0 0 0 0\n")
    _atomic(host_path(root, "/sys/class/net/eth0/operstate"), "up\n")
    _atomic(host_path(root, "/sys/class/net/eth0/speed"), "1000\n")
    lines = []
    for i, dev in enumerate(DISKS):
        share = (0.9 if rebuilding and dev.startswith("sd") else 0.02)
        io_ms = int(t * 1000 * share) + 1000 * i
        sectors = int(t * (150e6 if rebuilding else 2e6) / 512) + 4096 * i
        lines.append(f"   8 {16 * i:7d} {dev} {sectors // 8} 0 {sectors} {io_ms} {sectors // 16} 0 {sectors // 2} "
                     f"{io_ms} 0 {io_ms} {io_ms} 0 0 0 0")
    _atomic(host_path(root, "/proc/diskstats"), "\n".join(lines) + "\n")


# The demo's filesystems, sized by the story (a 12-disk RAID6 of 8 TB disks, 58 % full; a 1 GiB
# /boot), not by the disk of the machine the demo runs on: that one filling up made the demo fire
# filesystem_full.
FILESYSTEMS = {"srv": (80 * 10**12, 0.58), "boot": (GIB, 0.31)}


def demo_statvfs(path: Path, timeout: float) -> os.statvfs_result:
    """The host collector's statvfs for the demo tree: each mount its story size, whatever the host has."""
    size, used = FILESYSTEMS.get(path.name, (GIB, 0.5))
    block = 4096
    blocks, free = size // block, int(size * (1 - used)) // block
    return os.statvfs_result((block, block, blocks, free, free, 10**7, 6 * 10**6, 6 * 10**6, 0, 255))
