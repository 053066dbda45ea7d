"""What the kernel says of a mounted btrfs under /sys/fs/btrfs/<uuid>, readable without root:
space by type and profile, and (kernel 5.14 and later) each device's error counters."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from collectors.base import host_path, read_text
from collectors.storage.btrfs.parse import parse_error_stats
from collectors.storage.btrfs.state import Allocation

TYPES = ("data", "metadata", "system")
PROFILES = ("single", "dup", "raid0", "raid1", "raid1c3", "raid1c4", "raid10", "raid5", "raid6")


def _int(path: Path) -> int | None:
    try:
        text = read_text(path).strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def read_allocation(host_root: Path, uuid: str) -> list[Allocation]:
    """Space for data, metadata and system, per profile in use."""
    base = host_path(host_root, f"/sys/fs/btrfs/{uuid}/allocation")
    out = []
    for kind in TYPES:
        for profile in PROFILES:
            folder = base / kind / profile
            if not folder.is_dir():
                continue
            total, used = _int(folder / "total_bytes"), _int(folder / "used_bytes")
            if total is not None:
                out.append(Allocation(type=kind, profile=profile, total=total, used=used or 0))
    return out


@dataclass(frozen=True)
class DevInfo:
    """What devinfo/<devid>/ says of a device (None where the kernel does not say)."""

    errors: dict[str, int] | None
    missing: bool | None


def read_devinfo(host_root: Path, uuid: str) -> dict[int, DevInfo]:
    """Each device's error counters and whether it is missing, by devid, from devinfo/<devid>/."""
    base = host_path(host_root, f"/sys/fs/btrfs/{uuid}/devinfo")
    out: dict[int, DevInfo] = {}
    try:
        names = os.listdir(base)
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            errors: dict[str, int] | None = parse_error_stats(read_text(base / name / "error_stats"))
        except OSError:
            errors = None
        missing = _int(base / name / "missing")
        out[int(name)] = DevInfo(errors, bool(missing) if missing is not None else None)
    return out


def btrfs_mounts(host_root: Path) -> list[tuple[str, str]]:
    """(source device, mount point) of every mounted btrfs, first mount of each source only."""
    for name in ("/proc/self/mounts", "/proc/mounts"):
        try:
            text = read_text(host_path(host_root, name))
            break
        except OSError:
            continue
    else:
        return []
    seen: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[2] == "btrfs":
            # /proc/mounts escapes space, tab, newline and backslash in octal.
            mnt = parts[1].replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")
            seen.setdefault(parts[0], mnt)
    return list(seen.items())
