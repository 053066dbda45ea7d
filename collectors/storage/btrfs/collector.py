"""btrfs: each mounted filesystem's devices (missing ones too) with their error counters,
the last scrub, and space by profile; each device joined with its disk's serial and bay."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from collectors.base import (
    Collector,
    CollectorError,
    CollectResult,
    Entity,
    MetricSpec,
    NoData,
    ParseError,
    Runner,
    Sample,
    run_command,
)
from collectors.context import HostContext
from collectors.location import BayRule, DiskLocation, read_locations
from collectors.state import State
from collectors.storage.btrfs.parse import (
    ERROR_KINDS,
    BtrfsFs,
    parse_device_stats,
    parse_fi_show,
    parse_scrub_status,
)
from collectors.storage.btrfs.state import BtrfsState, DeviceView, FsView, ScrubView
from collectors.storage.btrfs.sysfs import btrfs_mounts, read_allocation, read_devinfo
from collectors.storage.common import Identity, first_line, identify, run_tool


class BtrfsCollector(Collector):
    name: ClassVar[str] = "btrfs"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_btrfs_device_errors_total": MetricSpec("A device's error counters (write, read, flush, corruption, "
                                                    "generation) since they were last reset.", "counter"),
        "rackpulse_btrfs_device_missing": MetricSpec("1 if the filesystem misses this device.",
                                                     states=("present", "missing")),
        "rackpulse_btrfs_devices_missing": MetricSpec("Devices the filesystem misses, listed or not."),
        "rackpulse_btrfs_allocation_total_bytes": MetricSpec("Space allocated to a type (data, metadata, system) "
                                                             "in a profile."),
        "rackpulse_btrfs_allocation_used_bytes": MetricSpec("Space used within that allocation."),
        "rackpulse_btrfs_scrub_errors": MetricSpec("Errors the last scrub found, by kind (uncorrectable, "
                                                   "corrected, csum ...)."),
        "rackpulse_btrfs_scrub_running": MetricSpec("1 while a scrub runs.", states=("idle", "running")),
    }

    def __init__(self, host_root: Path, btrfs: Sequence[str] = ("btrfs",), timeout: float = 10.0,
                 bays: Iterable[BayRule] = (), runner: Runner = run_command) -> None:
        self.host_root = host_root
        self.btrfs = list(btrfs)
        self.timeout = timeout
        self.bays = bays  # live: labels saved from a page apply from the next collection
        self.runner = runner
        self._known: dict[str, tuple[Identity, str | None]] = {}  # "<uuid>:<devid>" -> the disk it was, its path

    def restore(self, state: State) -> None:
        if isinstance(state, BtrfsState):
            for fs in state.filesystems:
                for d in fs.devices:
                    if d.serial:
                        self._known[f"{fs.uuid}:{d.devid}"] = (Identity(d.path or "", d.disk, d.serial, d.model, d.wwn,
                                                                        d.bay), d.path)

    def _run(self, *args: str) -> tuple[int, str, str]:
        res = run_tool(self.runner, [*self.btrfs, *args], self.timeout, "btrfs-progs")
        return res.returncode, res.stdout.decode("utf-8", "replace"), first_line(res)

    def collect(self) -> CollectResult:
        mounts = btrfs_mounts(self.host_root)
        if not mounts:
            raise NoData("no btrfs filesystem mounted")
        rc, out, said = self._run("filesystem", "show", "--raw")
        if rc != 0 and "Label:" not in out:
            raise CollectorError(f"btrfs filesystem show: {said}")
        try:
            filesystems = parse_fi_show(out)
        except ParseError as exc:
            raise ParseError(f"btrfs filesystem show --raw: {exc}") from None
        result = CollectResult()
        locs = read_locations(self.host_root, self.bays)
        views = []
        for fs in filesystems:
            mount = _mount_of(fs, mounts)
            if mount is None:
                continue  # not mounted here: nothing to ask the kernel, and not this host's to judge
            view = self._fs_view(fs, mount, locs, result.warnings)
            views.append(view)
            result.samples.extend(fs_samples(view))
            result.entities.extend(fs_entities(view))
        result.state = BtrfsState(filesystems=views)
        return result

    def _fs_view(self, fs: BtrfsFs, mount: str, locs: dict[str, DiskLocation], warnings: list[str]) -> FsView:
        name = fs.label or fs.uuid
        devinfo = read_devinfo(self.host_root, fs.uuid)
        stats: dict[str, dict[str, int]] = {}
        if any(d.errors is None for d in devinfo.values()) or not devinfo:
            rc, out, said = self._run("device", "stats", mount)
            try:
                stats = parse_device_stats(out) if out.strip() else {}
                if not stats:
                    warnings.append(f"btrfs device stats {mount}: {said}")
            except ParseError as exc:
                warnings.append(f"btrfs device stats {mount}: {exc}")
        devices = []
        for d in fs.devices:
            info = devinfo.get(d.devid)
            errors = (info.errors if info else None) or stats.get(d.path or "", {}) or {}
            missing = d.missing or bool(info and info.missing)
            ident = identify(d.path or f"devid {d.devid}", locs, self.bays)
            key = f"{fs.uuid}:{d.devid}"
            path = d.path
            if ident.known():
                self._known[key] = (ident, d.path)
            elif key in self._known:  # a device that is gone: still named by what it was
                ident = ident.filled_from(self._known[key][0])
                path = path or self._known[key][1]
            devices.append(DeviceView(devid=d.devid, path=path, missing=missing, size=d.size, used=d.used,
                                      disk=ident.device, serial=ident.serial, model=ident.model, wwn=ident.wwn,
                                      bay=ident.bay, errors={k: errors.get(k, 0) for k in ERROR_KINDS}))
        listed = len(fs.devices)
        unlisted = max((fs.total_devices or listed) - listed, 0) if fs.some_missing else 0
        scrub: ScrubView | None = None
        rc, out, said = self._run("scrub", "status", "-R", mount)
        if out.strip():
            s = parse_scrub_status(out)
            scrub = ScrubView(status=s.status, started=s.started, duration_seconds=s.duration_seconds,
                              errors=dict(s.errors), uncorrectable=s.uncorrectable, corrected=s.corrected,
                              bytes_scrubbed=s.bytes_scrubbed, ratio=s.ratio)
        elif rc != 0:
            warnings.append(f"btrfs scrub status {mount}: {said}")
        return FsView(name=name, uuid=fs.uuid, label=fs.label, mount=mount, used=fs.used,
                      total_devices=fs.total_devices, devices=devices,
                      missing=sum(1 for d in devices if d.missing) + unlisted, unlisted_missing=unlisted,
                      allocation=read_allocation(self.host_root, fs.uuid), scrub=scrub)


def _mount_of(fs: BtrfsFs, mounts: list[tuple[str, str]]) -> str | None:
    paths = {d.path for d in fs.devices if d.path}
    names = {os.path.basename(p) for p in paths}
    for source, mnt in mounts:
        if source in paths or os.path.basename(source) in names:
            return mnt
    return None


def fs_samples(fs: FsView) -> list[Sample]:
    name = fs.name
    s = [Sample.of("rackpulse_btrfs_devices_missing", fs.missing, fs=name)] if fs.missing is not None else []
    for d in fs.devices:
        device = d.path or f"devid {d.devid}"
        s.append(Sample.of("rackpulse_btrfs_device_missing", 1 if d.missing else 0, fs=name, device=device))
        for kind, n in d.errors.items():
            if n is not None:
                s.append(Sample.of("rackpulse_btrfs_device_errors_total", n, fs=name, device=device, kind=kind))
    for a in fs.allocation:
        for metric, value in (("rackpulse_btrfs_allocation_total_bytes", a.total),
                              ("rackpulse_btrfs_allocation_used_bytes", a.used)):
            if value is not None:
                s.append(Sample.of(metric, value, fs=name, type=a.type, profile=a.profile))
    if fs.scrub:
        s.append(Sample.of("rackpulse_btrfs_scrub_running", 1 if fs.scrub.status == "running" else 0, fs=name))
        for kind, n in fs.scrub.errors.items():
            if n is not None:
                s.append(Sample.of("rackpulse_btrfs_scrub_errors", n, fs=name, kind=kind))
    return s


def fs_entities(fs: FsView) -> list[Entity]:
    ents = [Entity("btrfs_fs", fs.name, {"uuid": fs.uuid, "mount": fs.mount, "missing": fs.missing,
                                         "devices": sorted(d.path or "" for d in fs.devices)})]
    for d in fs.devices:
        ents.append(Entity("btrfs_device", f"{fs.name}:{d.devid}", {
            "fs": fs.name, "path": d.path, "missing": d.missing, "serial": d.serial, "bay": d.bay}))
    return ents


def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    return BtrfsCollector(host.root, c.btrfs, c.command_timeout, host.bays, runner)
