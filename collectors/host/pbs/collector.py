"""Proxmox Backup Server through its HTTP API: datastores (use, the date they fill, garbage
collection), each backup group's newest snapshot and whether it verified, and the verify, sync,
prune and GC jobs' last results. Read-only: GET, with a token whose role may only audit.

Not configured (no url) is "no data". A part the token may not read is said, naming what it
lacks, and the rest is still read."""

from __future__ import annotations

from typing import Any, ClassVar

from collectors.base import (
    Collector,
    CollectResult,
    Entity,
    MetricSpec,
    NoData,
    Runner,
    Sample,
)
from collectors.context import HostContext
from collectors.host.pbs import parse
from collectors.host.pbs.config import PbsConfig
from collectors.host.pbs.state import PbsGroup, PbsJob, PbsState
from collectors.proxmoxapi import ApiError, Reader, read_state

# The least a token needs: the Audit role on the whole tree (Datastore.Audit, Sys.Audit, Remote.Audit).
GRANT = "give it the Audit role on / (proxmox-backup-manager acl update / Audit --auth-id '{token}')"
JOBS = (("verify", "/admin/verify"), ("sync", "/admin/sync"), ("prune", "/admin/prune"), ("gc", "/admin/gc"))


class PbsCollector(Collector):
    name: ClassVar[str] = "pbs"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_pbs_datastore_size_bytes": MetricSpec("The datastore's size."),
        "rackpulse_pbs_datastore_used_bytes": MetricSpec("Bytes used on the datastore."),
        "rackpulse_pbs_datastore_estimated_full_timestamp_seconds": MetricSpec(
            "When the datastore fills at the last month's pace (Unix time)."),
        "rackpulse_pbs_group_last_backup_timestamp_seconds": MetricSpec("When the group's newest snapshot was made."),
        "rackpulse_pbs_group_snapshots": MetricSpec("Snapshots the group keeps."),
        "rackpulse_pbs_group_verified": MetricSpec("The newest snapshot's verify state.",
                                                   states=("failed", "ok", "not verified")),
        "rackpulse_pbs_job_last_run_ok": MetricSpec("1 when the job's last run ended OK.", states=("failed", "ok")),
        "rackpulse_pbs_job_last_run_timestamp_seconds": MetricSpec("When the job's last run ended."),
    }

    def __init__(self, cfg: PbsConfig) -> None:
        self.cfg = cfg

    def collect(self) -> CollectResult:
        if not self.cfg.url:
            raise NoData("no Proxmox Backup Server url configured")
        state = read_state(self.cfg, ("PBSAPIToken", ":"), "Proxmox Backup Server", GRANT, self._read)
        result = CollectResult(state=state)
        self._samples(state, result)
        return result

    def _read(self, read: Reader) -> PbsState:
        datastores = parse.parse_usage(read.api.get("/status/datastore-usage"))  # filtered, never refused
        groups: list[PbsGroup] = []
        for d in datastores:
            if d.error:
                continue
            found = parse.parse_groups(read(f"/admin/datastore/{d.name}/groups", []), d.name)
            newest = parse.newest_snapshots(read(f"/admin/datastore/{d.name}/snapshots", []), d.name)
            for g in found:
                t, verified, size = newest.get((g.type, g.id), (None, None, None))
                groups.append(g.model_copy(update={"verified": verified, "size_bytes": size,
                                                   "last_backup": g.last_backup if g.last_backup is not None else t}))
        jobs: list[PbsJob] = []
        for kind, path in JOBS:
            try:
                jobs += parse.parse_jobs(read(path, []), kind)
            except ApiError:
                continue  # an older server without this list (prune jobs came in 2.2, GC's in 3.3)
        groups.sort(key=lambda g: (g.store, g.type, g.id.zfill(12)))
        return PbsState(url=self.cfg.url, tls=self.cfg.tls_words(), datastores=datastores, groups=groups, jobs=jobs,
                        denied=read.denied, snapshot_max_age=self.cfg.snapshot_max_age, ignore=self.cfg.ignore)

    @staticmethod
    def _samples(st: PbsState, result: CollectResult) -> None:
        s = result.samples
        for d in st.datastores:
            for metric, v in (("size_bytes", d.total_bytes), ("used_bytes", d.used_bytes),
                              ("estimated_full_timestamp_seconds", d.estimated_full)):
                if v is not None:
                    s.append(Sample.of(f"rackpulse_pbs_datastore_{metric}", v, store=d.name))
        for g in st.groups:
            lab = {"store": g.store, "group": g.name}
            if g.last_backup is not None:
                s.append(Sample.of("rackpulse_pbs_group_last_backup_timestamp_seconds", g.last_backup, **lab))
            if g.count is not None:
                s.append(Sample.of("rackpulse_pbs_group_snapshots", g.count, **lab))
            s.append(Sample.of("rackpulse_pbs_group_verified", {"failed": 0, "ok": 1}.get(g.verified or "", 2), **lab))
            result.entities.append(Entity("backup group", f"{g.store}/{g.name}", {"owner": g.owner}))
        for j in st.jobs:
            lab = {"kind": j.kind, "job": j.id, "store": j.store}
            if j.last_state:
                s.append(Sample.of("rackpulse_pbs_job_last_run_ok", not j.failed, **lab))
            if j.last_end is not None:
                s.append(Sample.of("rackpulse_pbs_job_last_run_timestamp_seconds", j.last_end, **lab))


def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.pbs]."""
    return PbsCollector(c)
