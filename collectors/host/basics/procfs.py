"""Pure parsers for the host's /proc files (formats from proc(5) and the kernel's
Documentation/admin-guide/iostats.rst and accounting/psi.rst). Errors quote the line."""

from __future__ import annotations

import re
from dataclasses import dataclass

from collectors.base import ParseError
from collectors.finite import parse_float

# /proc/stat's cpu line, in order; guest time is already counted in user and nice.
CPU_MODES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice")
SECTOR = 512  # /proc/diskstats counts 512-byte sectors whatever the device's own size


def parse_stat_cpu(text: str) -> dict[str, int]:
    """The aggregate `cpu` line of /proc/stat: ticks per mode (older kernels have fewer columns)."""
    for line in text.splitlines():
        if line.startswith("cpu "):
            fields = line.split()[1:]
            try:
                return {mode: int(v) for mode, v in zip(CPU_MODES, fields, strict=False)}
            except ValueError:
                raise ParseError(f"/proc/stat: not a number in {line!r}") from None
    raise ParseError("/proc/stat: no 'cpu' line")


def busy_ratio(before: dict[str, int], after: dict[str, int]) -> float | None:
    """Share of CPU time not idle between two readings; None when no time passed."""
    def total(t: dict[str, int]) -> int:
        return sum(v for k, v in t.items() if k not in ("guest", "guest_nice"))

    elapsed = total(after) - total(before)
    if elapsed <= 0 or any(after.get(k, 0) < v for k, v in before.items()):
        return None  # no time passed, or the counters started again (a reboot, a restored snapshot)
    idle = (after.get("idle", 0) + after.get("iowait", 0)) - (before.get("idle", 0) + before.get("iowait", 0))
    return min(1.0, max(0.0, 1 - idle / elapsed))


def parse_loadavg(text: str) -> tuple[float, float, float]:
    parts = text.split()
    try:
        return parse_float(parts[0]), parse_float(parts[1]), parse_float(parts[2])
    except (IndexError, ValueError):
        raise ParseError(f"/proc/loadavg: expected three numbers, got {text.strip()!r}") from None


def parse_meminfo(text: str) -> dict[str, int]:
    """Key -> bytes ("kB" values scaled; HugePages_* counts kept as they are)."""
    out = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        key, sep, rest = line.partition(":")
        parts = rest.split()
        if not sep or not parts:
            raise ParseError(f"/proc/meminfo: cannot read {line!r}")
        try:
            value = int(parts[0])
        except ValueError:
            raise ParseError(f"/proc/meminfo: not a number in {line!r}") from None
        out[key.strip()] = value * 1024 if parts[1:2] == ["kB"] else value
    return out


def memory_available(mem: dict[str, int]) -> int | None:
    """MemAvailable (Linux >= 3.14), else the old estimate free + buffers + page cache."""
    if "MemAvailable" in mem:
        return mem["MemAvailable"]
    if "MemFree" in mem:
        return mem["MemFree"] + mem.get("Buffers", 0) + mem.get("Cached", 0)
    return None


@dataclass(frozen=True)
class Mount:
    device: str
    mountpoint: str
    fstype: str
    options: tuple[str, ...]

    @property
    def readonly(self) -> bool:
        return "ro" in self.options


_OCTAL = re.compile(r"\\([0-7]{3})")


def _unescape(field: str) -> str:
    """Mount fields escape space, tab, newline and backslash as octal (\\040 ...)."""
    return _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), field)


def parse_mounts(text: str) -> list[Mount]:
    """/proc/mounts (fstab format: device mountpoint fstype options dump pass); the last mount
    of a mountpoint wins, as it is the one a path resolves to."""
    by_point: dict[str, Mount] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        f = line.split()
        if len(f) < 4:
            raise ParseError(f"/proc/mounts: expected at least 4 fields in {line!r}")
        m = Mount(_unescape(f[0]), _unescape(f[1]), f[2], tuple(f[3].split(",")))
        by_point.pop(m.mountpoint, None)
        by_point[m.mountpoint] = m
    return list(by_point.values())


NETDEV_FIELDS = ("rx_bytes", "rx_packets", "rx_errs", "rx_drop", "rx_fifo", "rx_frame", "rx_compressed",
                 "rx_multicast", "tx_bytes", "tx_packets", "tx_errs", "tx_drop", "tx_fifo", "tx_colls",
                 "tx_carrier", "tx_compressed")


def parse_net_dev(text: str) -> dict[str, dict[str, int]]:
    """/proc/net/dev: interface -> its 16 counters (two header lines first)."""
    out = {}
    for line in text.splitlines()[2:]:
        if not line.strip():
            continue
        name, sep, rest = line.partition(":")
        values = rest.split()
        if not sep or len(values) != len(NETDEV_FIELDS):
            raise ParseError(f"/proc/net/dev: expected 'name: {len(NETDEV_FIELDS)} counters' in {line!r}")
        try:
            out[name.strip()] = {k: int(v) for k, v in zip(NETDEV_FIELDS, values, strict=True)}
        except ValueError:
            raise ParseError(f"/proc/net/dev: not a number in {line!r}") from None
    return out


@dataclass(frozen=True)
class DiskStats:
    read_bytes: int
    written_bytes: int
    io_ms: int  # time spent doing I/O: busy time


def parse_diskstats(text: str) -> dict[str, DiskStats]:
    """/proc/diskstats: 14 fields, 18 since Linux 4.18 (discards), 20 since 5.5 (flushes)."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if not f:
            continue
        if len(f) < 14:
            raise ParseError(f"/proc/diskstats: expected at least 14 fields in {line!r}")
        try:
            out[f[2]] = DiskStats(int(f[5]) * SECTOR, int(f[9]) * SECTOR, int(f[12]))
        except ValueError:
            raise ParseError(f"/proc/diskstats: not a number in {line!r}") from None
    return out


def parse_pressure(text: str) -> dict[str, dict[str, float]]:
    """/proc/pressure/<resource>: "some"/"full" -> avg10, avg60, avg300 (percent) and total (µs)."""
    out = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        kind, *pairs = line.split()
        try:
            out[kind] = {k: parse_float(v) for k, v in (p.split("=", 1) for p in pairs)}
        except ValueError:
            raise ParseError(f"pressure: cannot read {line!r}") from None
        if kind not in ("some", "full") or "total" not in out[kind]:
            raise ParseError(f"pressure: cannot read {line!r}")
    return out
