"""The host's basics from /proc and /sys under host_root: what node_exporter's cpu, loadavg,
meminfo, pressure, filesystem, netdev and diskstats collectors show, in one cheap pass."""

from __future__ import annotations

import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from collectors.base import (
    Collector,
    CollectorError,
    CollectResult,
    MetricSpec,
    NoData,
    Runner,
    Sample,
    host_path,
    read_text,
)
from collectors.context import HostContext
from collectors.host.basics.config import HostConfig
from collectors.host.basics.procfs import (
    CPU_MODES,
    Mount,
    busy_ratio,
    memory_available,
    parse_diskstats,
    parse_loadavg,
    parse_meminfo,
    parse_mounts,
    parse_net_dev,
    parse_pressure,
    parse_stat_cpu,
)
from collectors.host.basics.state import (
    BlockDev,
    Cpu,
    Filesystem,
    HostState,
    Limits,
    Memory,
    NetInterface,
    Temperature,
)
from collectors.hwmon_sysfs import Sensor, read_hwmon

T = TypeVar("T")
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
FILL_WINDOW = 6 * 3600.0  # the fill rate is judged over up to this much of the past
FILL_MIN_SPAN = 600.0  # and not before ten minutes of it


class StatvfsTimeout(CollectorError):
    pass


def statvfs_within(path: Path, timeout: float,
                   stat: Callable[[Path], os.statvfs_result] = os.statvfs) -> os.statvfs_result:
    """statvfs in a daemon thread: a hung network mount costs `timeout`, not the collector."""
    box: list[Any] = []
    t = threading.Thread(target=lambda: box.append(_try_statvfs(path, stat)), daemon=True, name=f"statvfs {path}")
    t.start()
    t.join(timeout)
    if not box:
        raise StatvfsTimeout(f"{path}: statvfs did not answer within {timeout:g}s")
    if isinstance(box[0], OSError):
        raise CollectorError(f"{path}: {box[0].strerror or box[0]}")
    return box[0]


def _try_statvfs(path: Path, stat: Callable[[Path], os.statvfs_result]) -> os.statvfs_result | OSError:
    try:
        return stat(path)
    except OSError as exc:
        return exc


class HostCollector(Collector):
    name: ClassVar[str] = "host"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_cpu_busy_ratio": MetricSpec("Share of CPU time not idle since the last poll, 0..1."),
        "rackpulse_cpu_seconds_total": MetricSpec("CPU time by mode, all cores.", "counter"),
        "rackpulse_load": MetricSpec("Load average over 1, 5 and 15 minutes.", fraction=True),
        "rackpulse_memory_total_bytes": MetricSpec("Memory the kernel manages."),
        "rackpulse_memory_available_bytes": MetricSpec("Memory available for new work without swapping."),
        "rackpulse_swap_used_bytes": MetricSpec("Swap in use."),
        "rackpulse_pressure_ratio": MetricSpec("Share of time tasks stalled on a resource (PSI), by window."),
        "rackpulse_pressure_stalled_seconds_total": MetricSpec("Time tasks stalled on a resource (PSI).", "counter"),
        "rackpulse_filesystem_size_bytes": MetricSpec("Filesystem size."),
        "rackpulse_filesystem_avail_bytes": MetricSpec("Space available to unprivileged users."),
        "rackpulse_filesystem_files_free": MetricSpec("Free inodes available to unprivileged users."),
        "rackpulse_filesystem_readonly": MetricSpec("1 if mounted read-only.", states=("read-write", "read-only")),
        "rackpulse_network_receive_bytes_total": MetricSpec("Bytes received.", "counter"),
        "rackpulse_network_transmit_bytes_total": MetricSpec("Bytes sent.", "counter"),
        "rackpulse_network_receive_errors_total": MetricSpec("Receive errors.", "counter"),
        "rackpulse_network_transmit_errors_total": MetricSpec("Transmit errors.", "counter"),
        "rackpulse_network_receive_drops_total": MetricSpec("Packets dropped on receive.", "counter"),
        "rackpulse_network_transmit_drops_total": MetricSpec("Packets dropped on transmit.", "counter"),
        "rackpulse_network_up": MetricSpec("1 if the interface's operational state is up.", states=("down", "up")),
        "rackpulse_network_speed_bytes": MetricSpec("Link speed in bytes per second, where the driver says."),
        "rackpulse_blockdev_read_bytes_total": MetricSpec("Bytes read.", "counter"),
        "rackpulse_blockdev_written_bytes_total": MetricSpec("Bytes written.", "counter"),
        "rackpulse_blockdev_busy_ratio": MetricSpec("Share of time the device was busy since the last poll."),
    }

    def __init__(self, host_root: Path, cfg: HostConfig | None = None,
                 statvfs: Callable[[Path, float], os.statvfs_result] = statvfs_within,
                 clock: Callable[[], float] = time.time) -> None:
        self.root = host_root
        self.cfg = cfg or HostConfig()
        self.statvfs = statvfs  # the I/O seam: tests give a fixture tree its own sizes
        self.clock = clock
        self._cpu: dict[str, int] | None = None
        self._disks: dict[str, tuple[float, int]] = {}
        self._avail: dict[str, deque[tuple[float, int]]] = {}
        self._skip_fs = re.compile(self.cfg.exclude_mountpoints)
        self._skip_dev = re.compile(self.cfg.exclude_blockdevs)
        self._skip_if = re.compile(self.cfg.exclude_interfaces)

    def _read(self, path: str) -> str:
        return read_text(host_path(self.root, path))

    def collect(self) -> CollectResult:
        try:
            stat = self._read("/proc/stat")
        except FileNotFoundError:
            raise NoData(f"{host_path(self.root, '/proc/stat')} absent") from None
        now = self.clock()
        result = CollectResult()
        def part(name: str, read: Callable[[CollectResult, float], T]) -> T | None:
            # One part that cannot be read (a hung mount, no /proc/net/dev) costs that part only.
            try:
                return read(result, now)
            except (OSError, CollectorError) as exc:
                result.warnings.append(f"{name}: {exc}")
                return None

        result.state = HostState(
            cpu=self._cpu_part(stat, result),
            limits=Limits(filesystem_full_ratio=self.cfg.filesystem_full_ratio,
                          memory_low_ratio=self.cfg.memory_low_ratio),
            load=part("load", self._load) or {}, memory=part("memory", self._memory) or Memory(),
            pressure=part("pressure", self._pressure) or {}, filesystems=part("filesystems", self._filesystems) or [],
            interfaces=part("interfaces", self._interfaces) or [], blockdevs=part("blockdevs", self._blockdevs) or [],
            temperatures=part("temperatures", self._temperatures) or [])
        return result

    def _cpu_part(self, stat: str, result: CollectResult) -> Cpu:
        cpu = parse_stat_cpu(stat)
        ratio = busy_ratio(self._cpu, cpu) if self._cpu is not None else None
        self._cpu = cpu
        for mode in CPU_MODES[:8]:  # guest time is inside user and nice already
            if mode in cpu:
                result.samples.append(Sample.of("rackpulse_cpu_seconds_total", cpu[mode] / TICKS, mode=mode))
        if ratio is not None:
            result.samples.append(Sample.of("rackpulse_cpu_busy_ratio", round(ratio, 4)))
        cores = sum(1 for line in stat.splitlines() if re.match(r"cpu\d+ ", line))
        return Cpu(busy_ratio=ratio, cores=cores)

    def _load(self, result: CollectResult, now: float) -> dict[str, float | None]:
        loads = parse_loadavg(self._read("/proc/loadavg"))
        for period, v in zip(("1m", "5m", "15m"), loads, strict=True):
            result.samples.append(Sample.of("rackpulse_load", v, period=period))
        return {"1m": loads[0], "5m": loads[1], "15m": loads[2]}

    def _memory(self, result: CollectResult, now: float) -> Memory:
        mem = parse_meminfo(self._read("/proc/meminfo"))
        total, avail = mem.get("MemTotal"), memory_available(mem)
        swap_used = mem["SwapTotal"] - mem["SwapFree"] if "SwapTotal" in mem and "SwapFree" in mem else None
        for metric, v in (("rackpulse_memory_total_bytes", total), ("rackpulse_memory_available_bytes", avail),
                          ("rackpulse_swap_used_bytes", swap_used)):
            if v is not None:
                result.samples.append(Sample.of(metric, v))
        return Memory(total=total, available=avail, swap_total=mem.get("SwapTotal"), swap_used=swap_used)

    def _pressure(self, result: CollectResult, now: float) -> dict[str, dict[str, dict[str, float | None]]]:
        out: dict[str, dict[str, dict[str, float | None]]] = {}
        for resource in ("cpu", "memory", "io"):
            try:
                psi = parse_pressure(self._read(f"/proc/pressure/{resource}"))
            except (FileNotFoundError, OSError):
                continue  # a kernel without PSI (or with psi=0): not a failure
            out[resource] = {kind: dict(v) for kind, v in psi.items()}
            for kind, v in psi.items():
                lab = {"resource": resource, "kind": kind}
                result.samples.append(Sample.of("rackpulse_pressure_stalled_seconds_total", v["total"] / 1e6, **lab))
                for window in ("avg10", "avg60", "avg300"):
                    if window in v:
                        result.samples.append(Sample.of("rackpulse_pressure_ratio", v[window] / 100, window=window,
                                                        **lab))
        return out

    def _wanted(self, m: Mount) -> bool:
        return m.fstype not in self.cfg.exclude_fstypes and not self._skip_fs.match(m.mountpoint)

    def _filesystems(self, result: CollectResult, now: float) -> list[Filesystem]:
        try:
            text = self._read("/proc/1/mounts")
        except OSError:
            text = self._read("/proc/mounts")
        out = []
        for m in parse_mounts(text):
            if not self._wanted(m):
                continue
            try:
                st = self.statvfs(host_path(self.root, m.mountpoint), self.cfg.command_timeout)
            except CollectorError as exc:
                result.warnings.append(str(exc))
                out.append(Filesystem(mountpoint=m.mountpoint, device=m.device, fstype=m.fstype, error=str(exc)))
                continue
            out.append(self._filesystem(m, st, result, now))
        return out

    def _filesystem(self, m: Mount, st: os.statvfs_result, result: CollectResult, now: float) -> Filesystem:
        size, avail = st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize
        used = size - st.f_bfree * st.f_frsize
        lab = {"mountpoint": m.mountpoint, "device": m.device, "fstype": m.fstype}
        readonly = m.readonly or bool(st.f_flag & os.ST_RDONLY)
        s = result.samples
        s.append(Sample.of("rackpulse_filesystem_size_bytes", size, **lab))
        s.append(Sample.of("rackpulse_filesystem_avail_bytes", avail, **lab))
        s.append(Sample.of("rackpulse_filesystem_files_free", st.f_favail, **lab))
        s.append(Sample.of("rackpulse_filesystem_readonly", 1 if readonly else 0, **lab))
        # As df counts it: used over what users can have (used + available), root's reserve left out.
        used_ratio = used / (used + avail) if used + avail > 0 else None
        return Filesystem(**lab, size=size, avail=avail, used_ratio=used_ratio, files_free=st.f_favail,
                          files=st.f_files, readonly=readonly, expect_readonly=m.mountpoint in self.cfg.expect_readonly,
                          hours_to_full=self._hours_to_full(m.mountpoint, avail, now))

    def _hours_to_full(self, mountpoint: str, avail: int, now: float) -> float | None:
        """At the rate space went over the last hours (at least ten minutes of them), when it
        is gone; None while it is not shrinking or there is too little history."""
        q = self._avail.setdefault(mountpoint, deque())
        q.append((now, avail))
        while q and now - q[0][0] > FILL_WINDOW:
            q.popleft()
        then, was = q[0]
        span = now - then
        if span < FILL_MIN_SPAN or avail >= was:
            return None
        per_hour = (was - avail) / span * 3600
        return round(avail / per_hour, 2)

    def _interfaces(self, result: CollectResult, now: float) -> list[NetInterface]:
        out = []
        for name, c in parse_net_dev(self._read("/proc/net/dev")).items():
            if self._skip_if.match(name):
                continue
            lab = {"interface": name}
            s = result.samples
            for metric, key in (("rackpulse_network_receive_bytes_total", "rx_bytes"),
                                ("rackpulse_network_transmit_bytes_total", "tx_bytes"),
                                ("rackpulse_network_receive_errors_total", "rx_errs"),
                                ("rackpulse_network_transmit_errors_total", "tx_errs"),
                                ("rackpulse_network_receive_drops_total", "rx_drop"),
                                ("rackpulse_network_transmit_drops_total", "tx_drop")):
                s.append(Sample.of(metric, c[key], **lab))
            oper = self._sys_net(name, "operstate")
            speed = self._sys_net(name, "speed")
            mbps = int(speed) if speed and speed.lstrip("-").isdigit() and int(speed) > 0 else None
            if oper is not None:
                s.append(Sample.of("rackpulse_network_up", 1 if oper == "up" else 0, **lab))
            if mbps:
                s.append(Sample.of("rackpulse_network_speed_bytes", mbps * 125_000, **lab))
            out.append(NetInterface(name=name, oper=oper, speed_mbps=mbps, **c))
        return out

    def _sys_net(self, name: str, attr: str) -> str | None:
        try:
            return self._read(f"/sys/class/net/{name}/{attr}").strip()
        except OSError:  # absent, or EINVAL reading the speed of a link that is down
            return None

    def _temperatures(self, result: CollectResult, now: float) -> list[Temperature]:
        try:
            return hottest(read_hwmon(self.root))
        except NoData:
            return []  # no hwmon drivers (a VM, a container): nothing to show, nothing wrong

    def _blockdevs(self, result: CollectResult, now: float) -> list[BlockDev]:
        out = []
        for name, d in parse_diskstats(self._read("/proc/diskstats")).items():
            if self._skip_dev.match(name):
                continue
            lab = {"device": name}
            result.samples.append(Sample.of("rackpulse_blockdev_read_bytes_total", d.read_bytes, **lab))
            result.samples.append(Sample.of("rackpulse_blockdev_written_bytes_total", d.written_bytes, **lab))
            prev = self._disks.get(name)
            self._disks[name] = (now, d.io_ms)
            busy = None
            if prev is not None and now > prev[0] and d.io_ms >= prev[1]:
                busy = min(1.0, (d.io_ms - prev[1]) / 1000 / (now - prev[0]))
                result.samples.append(Sample.of("rackpulse_blockdev_busy_ratio", round(busy, 4), **lab))
            out.append(BlockDev(name=name, read_bytes=d.read_bytes, written_bytes=d.written_bytes, busy_ratio=busy))
        return out


def hottest(sensors: list[Sensor], limit: int = 8) -> list[Temperature]:
    """The hottest temperature sensors, hottest first, with their chip's own limits: what the
    host tile and page show (the hwmon collector, when on, keeps their history and alerts)."""
    temps = sorted((s for s in sensors if s.kind == "temp" and s.value is not None),
                   key=lambda s: -(s.value or 0.0))
    def limit_of(s: Sensor, key: str) -> float | None:
        v = s.attrs.get(key)
        return round(v, 1) if v is not None else None

    return [Temperature(chip=s.chip, sensor=s.label or s.name, celsius=round(s.value or 0.0, 1),
                        max=limit_of(s, "max"), crit=limit_of(s, "crit")) for s in temps[:limit]]


def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.host]."""
    return HostCollector(host.root, c)
