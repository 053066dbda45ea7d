"""ZFS pools: health, the device tree with error counts, scrub and resilver, space; each
device joined with its disk's serial and bay so a faulted one says which bay to pull."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
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
from collectors.storage.common import Identity, first_line, identify, run_tool
from collectors.storage.zfs.records import POOL_STATES, VDEV_STATES, Pool, PoolUsage
from collectors.storage.zfs.snapshots import DatasetSnapshots, snapshot_views
from collectors.storage.zfs.state import PoolView, ScanView, VdevView, ZfsState
from collectors.storage.zfs.zpool_json import parse_zpool_status_json
from collectors.storage.zfs.zpool_text import LIST_COLUMNS, parse_zpool_list, parse_zpool_status

NOT_LOADED = ("modules are not loaded", "/dev/zfs", "failed to initialize the libzfs")


class ZfsCollector(Collector):
    name: ClassVar[str] = "zfs"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_zfs_pool_state": MetricSpec("1 for the pool's current state (ONLINE, DEGRADED, FAULTED ...).",
                                               store=False),
        "rackpulse_zfs_pool_healthy": MetricSpec("1 if the pool is ONLINE.", states=("not online", "online")),
        "rackpulse_zfs_vdev_state": MetricSpec("1 per device with its state, serial and bay as labels.", store=False),
        "rackpulse_zfs_vdev_errors_total": MetricSpec("Read, write and checksum errors of a device since the last "
                                                "`zpool clear`.", "counter"),
        "rackpulse_zfs_pool_size_bytes": MetricSpec("Pool size in bytes."),
        "rackpulse_zfs_pool_allocated_bytes": MetricSpec("Bytes allocated in the pool."),
        "rackpulse_zfs_pool_free_bytes": MetricSpec("Bytes free in the pool."),
        "rackpulse_zfs_pool_fragmentation_ratio": MetricSpec("Free-space fragmentation, 0..1."),
        "rackpulse_zfs_pool_data_errors": MetricSpec("Permanent data errors zpool reports (files damaged)."),
        "rackpulse_zfs_scan_completed_ratio": MetricSpec("Progress of the last or running scrub/resilver, 0..1."),
        "rackpulse_zfs_scan_remaining_seconds": MetricSpec("zpool's estimate of the time left for the running scan."),
        "rackpulse_zfs_scan_errors": MetricSpec("Errors the last scrub or resilver could not repair."),
        "rackpulse_zfs_scan_running": MetricSpec("1 while a scrub or resilver runs.", states=("idle", "running")),
        "rackpulse_zfs_snapshot_newest_timestamp_seconds": MetricSpec(
            "When the dataset's newest snapshot was taken (Unix time; with snapshot_max_age set)."),
    }

    def __init__(self, host_root: Path, zpool: Sequence[str] = ("zpool",), fmt: str = "auto", timeout: float = 10.0,
                 bays: Iterable[BayRule] = (), runner: Runner = run_command, zfs: Sequence[str] = ("zfs",),
                 snapshot_max_age: Mapping[str, float] | None = None) -> None:
        self.zfs, self.snapshot_max_age = list(zfs), dict(snapshot_max_age or {})
        self.host_root = host_root
        self.zpool = list(zpool)
        self.json = fmt == "auto"
        self.timeout = timeout
        self.bays = bays  # live: labels saved from a page apply from the next collection
        self.runner = runner
        # The identity each device had when last seen: a disk that was pulled is still named.
        self._known: dict[str, Identity] = {}

    def restore(self, state: State) -> None:
        if isinstance(state, ZfsState):
            for p in state.pools:
                for v in p.vdevs:
                    if v.serial:
                        self._known[f"{p.name}:{v.name}"] = Identity(v.name, v.device, v.serial, v.model, v.wwn,
                                                                     v.bay)

    def _run(self, *args: str) -> tuple[int, str, str]:
        res = run_tool(self.runner, [*self.zpool, *args], self.timeout, "ZFS")
        out, err = res.stdout.decode("utf-8", "replace"), res.stderr.decode("utf-8", "replace")
        if res.returncode != 0 and any(s in (out + err) for s in NOT_LOADED):
            raise NoData(f"zpool: {first_line(res)} (ZFS not loaded)")
        return res.returncode, out, err

    def _status(self) -> list[Pool]:
        if self.json:
            rc, out, err = self._run("status", "-p", "-j", "--json-int")
            if rc == 0 and out.lstrip().startswith("{"):
                return parse_zpool_status_json(out)
            # An older zpool: "invalid option 'j'" and its usage. Ask for the text from now on.
            self.json = False
        rc, out, err = self._run("status", "-p")
        if rc != 0 and not out.strip():
            raise CollectorError(f"zpool status -p: {(err.strip().splitlines() or [f'exit status {rc}'])[0][:300]}")
        try:
            return parse_zpool_status(out)
        except ParseError as exc:
            raise ParseError(f"zpool status -p: {exc}") from None

    def _usage(self) -> dict[str, PoolUsage]:
        rc, out, err = self._run("list", "-Hp", "-o", ",".join(LIST_COLUMNS))
        if rc != 0:
            raise CollectorError(f"zpool list: {(err.strip().splitlines() or [f'exit status {rc}'])[0][:300]}")
        if out.strip() == "no pools available":
            return {}
        try:
            return {u.name: u for u in parse_zpool_list(out)}
        except ParseError as exc:
            raise ParseError(f"zpool list -Hp: {exc}") from None

    def collect(self) -> CollectResult:
        result = CollectResult()
        usage: dict[str, PoolUsage] = {}
        try:
            usage = self._usage()
        except NoData:
            raise
        except CollectorError as exc:
            result.warnings.append(str(exc))
        pools = self._status()
        locs = read_locations(self.host_root, self.bays)
        views = [self._pool_view(p, usage.get(p.name), locs) for p in pools]
        for v in views:
            result.samples.extend(pool_samples(v))
            result.entities.extend(pool_entities(v))
        snaps, snap_error = self._snapshots() if self.snapshot_max_age else ([], None)
        if snap_error:
            result.warnings.append(snap_error)
        result.state = ZfsState(pools=views, snapshots=snaps, snapshot_error=snap_error)
        for d in snaps:
            if d.newest is not None:
                result.samples.append(Sample.of("rackpulse_zfs_snapshot_newest_timestamp_seconds", d.newest,
                                                dataset=d.dataset))
        return result

    def _snapshots(self) -> tuple[list[DatasetSnapshots], str | None]:
        """The newest snapshot of each dataset; a failure is said and costs the pools nothing."""
        try:
            res = run_tool(self.runner, [*self.zfs, "list", "-H", "-p", "-t", "snapshot", "-o", "name,creation"],
                           self.timeout, "ZFS")
            if res.returncode != 0:
                return [], f"zfs list -t snapshot: {first_line(res)}"
            return snapshot_views(res.stdout.decode("utf-8", "replace"), self.snapshot_max_age), None
        except CollectorError as exc:
            return [], f"zfs list -t snapshot: {exc}"

    def _pool_view(self, pool: Pool, usage: PoolUsage | None, locs: dict[str, DiskLocation]) -> PoolView:
        vdevs = []
        for v in pool.vdevs:
            found: Identity | None = None
            if v.leaf:
                enclosure = v.enclosure.split("/sys/class/enclosure/")[-1] if v.enclosure else None
                found = identify(v.path or v.name, locs, self.bays, by_path=v.phys_path, enclosure_slot=enclosure)
                if found.serial is None and v.path and v.path != v.name:
                    found = identify(v.name, locs, self.bays)
                key = f"{pool.name}:{v.name}"
                if found.known():
                    self._known[key] = found
                elif key in self._known:  # a pulled disk: still named by what it was
                    found = found.filled_from(self._known[key])
            ident = {k: getattr(found, k) for k in ("device", "serial", "model", "wwn", "bay")} if found else {}
            vdevs.append(VdevView(**asdict(v), **ident))
        return PoolView(
            name=pool.name, state=pool.state, status=pool.status, action=pool.action, msgid=pool.msgid,
            scan=ScanView(**asdict(pool.scan)) if pool.scan else None, data_errors=pool.data_errors,
            error_files=pool.error_files[:10], size=usage.size if usage else None,
            allocated=usage.allocated if usage else None, free=usage.free if usage else None,
            fragmentation=usage.fragmentation if usage else None, capacity=usage.capacity if usage else None,
            vdevs=vdevs)


def pool_samples(p: PoolView) -> list[Sample]:
    name = p.name
    s = [Sample.of("rackpulse_zfs_pool_state", 1 if p.state == st else 0, pool=name, state=st)
         for st in POOL_STATES]
    s.append(Sample.of("rackpulse_zfs_pool_healthy", 1 if p.state == "ONLINE" else 0, pool=name))
    for value, metric in ((p.size, "size_bytes"), (p.allocated, "allocated_bytes"), (p.free, "free_bytes"),
                          (p.fragmentation, "fragmentation_ratio"), (p.data_errors, "data_errors")):
        if value is not None:
            s.append(Sample.of(f"rackpulse_zfs_pool_{metric}", value, pool=name))
    for v in p.vdevs:
        labels = {"pool": name, "vdev": v.name}
        state = v.state if v.state in VDEV_STATES else v.state or "UNKNOWN"
        s.append(Sample.of("rackpulse_zfs_vdev_state", 1, **labels, state=state, serial=v.serial,
                           bay=v.bay))
        for kind, n in (("read", v.read_errors), ("write", v.write_errors), ("checksum", v.checksum_errors)):
            if n is not None:
                s.append(Sample.of("rackpulse_zfs_vdev_errors_total", n, **labels, kind=kind))
    scan = p.scan
    if scan:
        kind = scan.function
        if scan.ratio is not None:
            s.append(Sample.of("rackpulse_zfs_scan_completed_ratio", scan.ratio, pool=name, kind=kind))
        if scan.remaining_seconds is not None and scan.state == "scanning":
            s.append(Sample.of("rackpulse_zfs_scan_remaining_seconds", scan.remaining_seconds, pool=name, kind=kind))
        if scan.errors is not None:
            s.append(Sample.of("rackpulse_zfs_scan_errors", scan.errors, pool=name, kind=kind))
    s.append(Sample.of("rackpulse_zfs_scan_running", 1 if scan and scan.state == "scanning" else 0, pool=name))
    return s


def pool_entities(p: PoolView) -> list[Entity]:
    ents = [Entity("zfs_pool", p.name, {"state": p.state, "scan": p.scan.state if p.scan else None,
                                            "devices": sorted(v.name for v in p.vdevs if v.leaf)})]
    for v in p.vdevs:
        if v.leaf:
            ents.append(Entity("zfs_device", f"{p.name}:{v.name}", {
                "pool": p.name, "state": v.state, "serial": v.serial, "bay": v.bay,
                "group": v.group}))
    return ents


def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    return ZfsCollector(host.root, c.zpool, c.format, c.command_timeout, host.bays, runner, c.zfs, c.snapshot_max_age)
