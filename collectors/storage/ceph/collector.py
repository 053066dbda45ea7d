"""Ceph: the cluster's health with each check's own words, OSDs up and in per host (with the
disk and bay behind each, from its metadata), placement groups by state, space."""

from __future__ import annotations

import time
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
    Runner,
    Sample,
    run_command,
)
from collectors.context import HostContext
from collectors.location import BayRule, read_locations
from collectors.storage.ceph.parse import (
    HEALTH,
    OsdMetadata,
    parse_osd_metadata,
    parse_osd_tree,
    parse_status,
)
from collectors.storage.ceph.state import CephState, Check, Cluster, Osd
from collectors.storage.common import first_line, identify, run_tool

METADATA_MAX_AGE = 600.0
# What the ceph CLI says on a host that is no cluster's client: not used here.
NOT_A_CLIENT = ("conf_read_file", "did not load config file", "unable to get monitor info",
                "error calling conf_read_file", "no monitors specified", "ObjectNotFound")


class CephCollector(Collector):
    name: ClassVar[str] = "ceph"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_ceph_health_status": MetricSpec("Cluster health: 0 HEALTH_OK, 1 HEALTH_WARN, 2 HEALTH_ERR.",
                                                   states=("ok", "warn", "error")),
        "rackpulse_ceph_health_check": MetricSpec("1 per raised health check, with its severity.", store=False),
        "rackpulse_ceph_osd_up": MetricSpec("1 if the OSD is up.", states=("down", "up")),
        "rackpulse_ceph_osd_in": MetricSpec("1 if the OSD is in (reweight above 0).", states=("out", "in")),
        "rackpulse_ceph_osds": MetricSpec("OSDs in the cluster by state (total, up, in)."),
        "rackpulse_ceph_pgs": MetricSpec("Placement groups by state (active+clean ...)."),
        "rackpulse_ceph_used_bytes": MetricSpec("Raw bytes used in the cluster."),
        "rackpulse_ceph_total_bytes": MetricSpec("Raw capacity of the cluster."),
        "rackpulse_ceph_degraded_ratio": MetricSpec("Share of object copies degraded, 0..1."),
        "rackpulse_ceph_misplaced_ratio": MetricSpec("Share of objects misplaced, 0..1."),
    }

    def __init__(self, host_root: Path, ceph: Sequence[str] = ("ceph",), connect_timeout: int = 10,
                 metadata: bool = True, timeout: float = 20.0, host: str = "", bays: Iterable[BayRule] = (),
                 runner: Runner = run_command) -> None:
        self.host_root = host_root
        self.ceph = list(ceph)
        self.connect_timeout = connect_timeout
        self.metadata = metadata
        self.timeout = timeout
        self.host = host
        self.bays = bays  # live: labels saved from a page apply from the next collection
        self.runner = runner
        # `osd metadata` is the heaviest answer on a big cluster and changes only when OSDs are
        # added or replaced: asked again when the set of OSDs changes, or every 10 minutes.
        self._meta: dict[int, OsdMetadata] = {}
        self._meta_key: tuple[int, ...] = ()
        self._meta_at = 0.0

    def _run(self, *args: str) -> str:
        argv = [*self.ceph, "--connect-timeout", str(self.connect_timeout), *args, "-f", "json"]
        res = run_tool(self.runner, argv, self.timeout, "ceph")
        out = res.stdout.decode("utf-8", "replace")
        if res.returncode != 0 or not out.strip():
            said = first_line(res)
            if any(s in res.stderr.decode("utf-8", "replace") for s in NOT_A_CLIENT):
                raise NoData(f"ceph {' '.join(args)}: {said} (not a Ceph client)")
            raise CollectorError(f"ceph {' '.join(args)}: {said}")
        return out

    def collect(self) -> CollectResult:
        status = parse_status(self._run("status"))
        result = CollectResult()
        osds: list[Osd] = []
        tree_read = False
        try:
            tree = parse_osd_tree(self._run("osd", "tree"))
            tree_read = True
            meta: dict[int, OsdMetadata] = {}
            if self.metadata:
                try:
                    meta = self._metadata(tuple(sorted(o.id for o in tree)))
                except CollectorError as exc:
                    result.warnings.append(f"OSD disks unknown: {exc}")
            locs = read_locations(self.host_root, self.bays)
            for o in tree:
                m = meta.get(o.id) or OsdMetadata("", [], [], [])
                local = bool(self.host) and m.hostname.split(".")[0] == self.host.split(".")[0]
                device = (m.devices or [""])[0]
                ident = identify(device if local and device else o.name, locs if local else {}, self.bays,
                                 serial=m.serials[0] if m.serials else None, model=m.models[0] if m.models else None)
                osds.append(Osd(id=o.id, name=o.name, host=o.host or m.hostname, up=o.up, in_=o.in_, exists=o.exists,
                                device_class=o.device_class, device=device or None, serial=ident.serial,
                                model=ident.model, bay=ident.bay))
        except CollectorError as exc:
            result.warnings.append(f"OSD tree unknown: {exc}")
        view = Cluster(health=status.health, fsid=status.fsid, quorum=status.quorum,
                       checks=[Check(**c.__dict__) for c in status.checks], num_osds=status.num_osds,
                       num_up=status.num_up, num_in=status.num_in, pgs_by_state=dict(status.pgs_by_state),
                       num_pgs=status.num_pgs, bytes_used=status.bytes_used, bytes_total=status.bytes_total,
                       degraded_ratio=status.degraded_ratio, misplaced_ratio=status.misplaced_ratio,
                       recovering_bytes_per_sec=status.recovering_bytes_per_sec, osds=osds, osd_tree=tree_read)
        result.samples = cluster_samples(view)
        result.entities = [Entity("ceph_osd", o.name, {"host": o.host, "up": o.up, "in": o.in_,
                                                       "serial": o.serial, "bay": o.bay}) for o in osds]
        result.state = CephState(clusters=[view])
        return result


    def _metadata(self, osds: tuple[int, ...]) -> dict[int, OsdMetadata]:
        if osds != self._meta_key or time.monotonic() - self._meta_at > METADATA_MAX_AGE:
            self._meta = parse_osd_metadata(self._run("osd", "metadata"))
            self._meta_key, self._meta_at = osds, time.monotonic()
        return self._meta


def cluster_samples(c: Cluster) -> list[Sample]:
    s = [Sample.of("rackpulse_ceph_health_status", HEALTH[c.health])] if c.health in HEALTH else []
    for chk in c.checks:
        if chk.name:
            s.append(Sample.of("rackpulse_ceph_health_check", 1, check=chk.name, severity=chk.severity))
    for o in c.osds:
        # "host" is rackpulse's own label on every series: the OSD's CRUSH host is ceph_host.
        s.append(Sample.of("rackpulse_ceph_osd_up", 1 if o.up else 0, osd=o.name, ceph_host=o.host))
        s.append(Sample.of("rackpulse_ceph_osd_in", 1 if o.in_ else 0, osd=o.name, ceph_host=o.host))
    for state, n in (("total", c.num_osds), ("up", c.num_up), ("in", c.num_in)):
        if n is not None:
            s.append(Sample.of("rackpulse_ceph_osds", n, state=state))
    for state, count in c.pgs_by_state.items():
        if count is not None:
            s.append(Sample.of("rackpulse_ceph_pgs", count, state=state))
    for value, metric in ((c.bytes_used, "used_bytes"), (c.bytes_total, "total_bytes"),
                          (c.degraded_ratio, "degraded_ratio"), (c.misplaced_ratio, "misplaced_ratio")):
        if value is not None:
            s.append(Sample.of(f"rackpulse_ceph_{metric}", value))
    return s


def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    return CephCollector(host.root, c.ceph, c.connect_timeout, c.metadata, c.command_timeout, host.name,
                         host.bays, runner)
