"""Proxmox VE through its HTTP API: the cluster's quorum and nodes, every guest with its newest
backup, storages, replication jobs and failed tasks. Read-only: GET, with an API token whose
role needs only to audit (PVEAuditor on /).

Not configured (no url) is "no data". A token that may not read a part is said once per part,
naming the privilege it lacks, and the rest is still read."""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Literal

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
from collectors.findings import BAD, WARN
from collectors.host.proxmox import parse
from collectors.host.proxmox.config import ProxmoxConfig
from collectors.host.proxmox.findings import guest_findings
from collectors.host.proxmox.state import ProxmoxState, PveBackup, PveGuest, PveStorage, PveTask
from collectors.proxmoxapi import Reader, read_state

FAILED_TASKS_SHOWN = 20
# The least a token needs to read everything here: auditing, on the whole tree.
GRANT = "give it the PVEAuditor role on / (pveum acl modify / --tokens '{token}' --roles PVEAuditor)"


def _m(help_: str, kind: Literal["gauge", "counter"] = "gauge", **kw: Any) -> MetricSpec:
    return MetricSpec(help_, kind, **kw)


class ProxmoxCollector(Collector):
    name: ClassVar[str] = "proxmox"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_pve_cluster_quorate": _m("1 while the cluster has quorum (absent for a single node).",
                                            states=("no quorum", "quorate")),
        "rackpulse_pve_node_online": _m("1 while the node is online in the cluster.", states=("offline", "online")),
        "rackpulse_pve_node_cpu_ratio": _m("Share of the node's cores busy, 0 to 1."),
        "rackpulse_pve_node_memory_used_bytes": _m("Memory the node uses."),
        "rackpulse_pve_node_memory_total_bytes": _m("The node's memory."),
        "rackpulse_pve_guest_running": _m("1 while the guest runs.", states=("not running", "running")),
        "rackpulse_pve_guest_expected": _m("1 when the guest should be running (onboot, HA started, or watched).",
                                           states=("optional", "expected")),
        "rackpulse_pve_guest_cpu_ratio": _m("Share of the guest's vCPUs busy, 0 to 1."),
        "rackpulse_pve_guest_memory_used_bytes": _m("Memory the guest uses now."),
        "rackpulse_pve_guest_memory_total_bytes": _m("Memory the guest was given."),
        "rackpulse_pve_guest_network_receive_bytes_total": _m("Bytes the guest received since it started.", "counter"),
        "rackpulse_pve_guest_network_transmit_bytes_total": _m("Bytes the guest sent since it started.", "counter"),
        "rackpulse_pve_guest_disk_read_bytes_total": _m("Bytes the guest read from its disks since it started.",
                                                        "counter"),
        "rackpulse_pve_guest_disk_write_bytes_total": _m("Bytes the guest wrote to its disks since it started.",
                                                         "counter"),
        "rackpulse_pve_guest_uptime_seconds": _m("Seconds since the guest started."),
        "rackpulse_pve_guest_backup_timestamp_seconds": _m("When the guest's newest backup was made (Unix time)."),
        "rackpulse_pve_storage_used_bytes": _m("Bytes used on the storage."),
        "rackpulse_pve_storage_size_bytes": _m("The storage's size."),
        "rackpulse_pve_replication_failures": _m("Failed runs of the replication job in a row."),
        "rackpulse_pve_replication_last_sync_timestamp_seconds": _m("When the replication job last synced."),
    }

    def __init__(self, cfg: ProxmoxConfig, clock: Callable[[], float] = time.time,
                 states: Mapping[str, object] | None = None) -> None:
        # `states`: the host's latest state of every collector (a Backup Server's, when [collectors.pbs] is set)
        self.cfg, self.clock, self.states = cfg, clock, states if states is not None else {}

    def collect(self) -> CollectResult:
        if not self.cfg.url:
            raise NoData("no Proxmox VE url configured")
        state = read_state(self.cfg, ("PVEAPIToken", "="), "Proxmox VE", GRANT, self._read)
        result = CollectResult(state=state)
        self._samples(state, result)
        return result

    def _read(self, read: Reader) -> ProxmoxState:
        soft = read.soft
        cluster, quorate, online = parse.parse_cluster_status(read("/cluster/status", []))
        resources = read.api.get("/cluster/resources")  # never refused: filtered to what the token may see
        nodes, guests, storages = parse.parse_resources(resources)
        # offline when either says so: corosync (status) or pvestatd (resources)
        nodes = [n.model_copy(update={"online": n.online and online.get(n.name, True)}) for n in nodes]
        guests = [self._expected(g, soft) for g in guests if not self._ignored(g)]
        covered = parse.backup_covered(read("/cluster/backup", []), guests, parse.guest_pools(resources))
        newest = self._newest_backups(soft, storages)
        for vmid, b in pbs_backups(self.states.get("pbs")).items():
            if vmid not in newest or (b.time or 0) > (newest[vmid].time or 0):
                newest[vmid] = b  # the Backup Server knows of a newer one than the storages PVE lists
        tasks = parse.parse_tasks(read("/cluster/tasks", []))
        guests = [backed_up(g, newest.get(g.vmid), g.vmid in covered, tasks) for g in guests]
        replication = [r for n in nodes if n.online for r in parse.parse_replication(
            soft(f"/nodes/{n.name}/replication", []), n.name)]
        now = self.clock()
        guests = worst_first(guests, now, self.cfg.backup_max_age)
        return ProxmoxState(
            url=self.cfg.url, tls=self.cfg.tls_words(), cluster=cluster, quorate=quorate, nodes=nodes, guests=guests,
            storages=storages, replication=replication, denied=read.denied, backup_max_age=self.cfg.backup_max_age,
            unread=read.missed,
            failed_tasks=[t for t in tasks if parse.task_failed(t)
                          and now - (t.start or 0) <= self.cfg.failed_tasks_window][:FAILED_TASKS_SHOWN],
            backup_job_failures=job_failures(tasks))

    def _expected(self, g: PveGuest, soft: Callable[..., Any]) -> PveGuest:
        """Whether it should run: onboot (read for the guests that are not running: one request
        each), HA "started", or watched."""
        onboot = None
        if not g.running:
            conf = soft(f"/nodes/{g.node}/{g.type}/{g.vmid}/config", None)
            onboot = bool(conf.get("onboot")) if isinstance(conf, dict) else None
        return g.model_copy(update={"onboot": onboot,
                                    "expected": bool(onboot) or g.hastate == "started" or self._watched(g)})

    @staticmethod
    def _newest_backups(soft: Callable[..., Any], storages: list[PveStorage]) -> dict[str, PveBackup]:
        """Each guest's newest backup over every active storage that holds backups."""
        newest: dict[str, PveBackup] = {}
        for s in storages:
            if "backup" not in s.content or not s.active:
                continue
            listing = soft(f"/nodes/{s.node}/storage/{s.name}/content", [], content="backup")
            for vmid, b in parse.parse_backups(listing, s.name).items():
                if vmid not in newest or (b.time or 0) > (newest[vmid].time or 0):
                    newest[vmid] = b
        return newest

    def _ignored(self, g: PveGuest) -> bool:
        return any(fnmatch.fnmatch(g.name, p) or fnmatch.fnmatch(g.vmid, p) for p in self.cfg.ignore)

    def _watched(self, g: PveGuest) -> bool:
        return g.name in self.cfg.watch or g.vmid in self.cfg.watch

    def _samples(self, st: ProxmoxState, result: CollectResult) -> None:
        s = result.samples
        if st.quorate is not None:
            s.append(Sample.of("rackpulse_pve_cluster_quorate", st.quorate, cluster=st.cluster))
        for n in st.nodes:
            lab = {"node": n.name}
            s.append(Sample.of("rackpulse_pve_node_online", n.online, **lab))
            for metric, v in (("cpu_ratio", n.cpu), ("memory_used_bytes", n.memory_bytes),
                              ("memory_total_bytes", n.memory_total_bytes)):
                if v is not None and n.online:
                    s.append(Sample.of(f"rackpulse_pve_node_{metric}", v, **lab))
        for g in st.guests:
            lab = {"vmid": g.vmid, "guest": g.name, "node": g.node, "type": g.type}
            s.append(Sample.of("rackpulse_pve_guest_running", g.running, **lab))
            s.append(Sample.of("rackpulse_pve_guest_expected", g.expected, **lab))
            if g.backup is not None and g.backup.time is not None:
                s.append(Sample.of("rackpulse_pve_guest_backup_timestamp_seconds", g.backup.time, **lab))
            if g.running:
                for metric, v in (("cpu_ratio", g.cpu), ("memory_used_bytes", g.memory_bytes),
                                  ("memory_total_bytes", g.memory_total_bytes), ("uptime_seconds", g.uptime),
                                  ("network_receive_bytes_total", g.net_in_bytes),
                                  ("network_transmit_bytes_total", g.net_out_bytes),
                                  ("disk_read_bytes_total", g.disk_read_bytes),
                                  ("disk_write_bytes_total", g.disk_write_bytes)):
                    if v is not None:
                        s.append(Sample.of(f"rackpulse_pve_guest_{metric}", v, **lab))
            result.entities.append(Entity(g.entity_kind, g.vmid,
                                          {"name": g.name, "node": g.node, "status": g.status}))
        for st_ in st.storages:
            lab = {"storage": st_.name, "node": "" if st_.shared else st_.node}
            if st_.used_bytes is not None and st_.total_bytes:
                s.append(Sample.of("rackpulse_pve_storage_used_bytes", st_.used_bytes, **lab))
                s.append(Sample.of("rackpulse_pve_storage_size_bytes", st_.total_bytes, **lab))
        for r in st.replication:
            lab = {"job": r.id, "guest": r.guest, "target": r.target}
            if r.fail_count is not None:
                s.append(Sample.of("rackpulse_pve_replication_failures", r.fail_count, **lab))
            if r.last_sync:
                s.append(Sample.of("rackpulse_pve_replication_last_sync_timestamp_seconds", r.last_sync, **lab))


def worst_first(guests: list[PveGuest], now: float, max_age: float) -> list[PveGuest]:
    """The guests as the section lists them: what fails first (down, its backup failed), then what
    warns (a stale or unverified backup), then the rest, each group by VMID."""
    def rank(g: PveGuest) -> tuple[int, str]:
        levels = {f.level for f in guest_findings(g, now, max_age)}
        return (0 if BAD in levels else 1 if WARN in levels else 2, g.vmid.zfill(10))
    return sorted(guests, key=rank)


def pbs_backups(pbs: object) -> dict[str, PveBackup]:
    """Each guest's newest snapshot on the Backup Server the pbs collector reads (its groups vm/<VMID>
    and ct/<VMID>), so a guest's row shows its newest backup from either side."""
    from collectors.host.pbs.state import PbsState

    newest: dict[str, PveBackup] = {}
    if not isinstance(pbs, PbsState):
        return newest
    for g in pbs.groups:
        if g.type in ("vm", "ct") and g.id.isdigit() and g.last_backup is not None:
            b = PveBackup(time=g.last_backup, storage=f"PBS {g.store}", verified=g.verified, size_bytes=g.size_bytes)
            if g.id not in newest or g.last_backup > (newest[g.id].time or 0):
                newest[g.id] = b
    return newest


def backed_up(g: PveGuest, newest: PveBackup | None, covered: bool, tasks: list[PveTask]) -> PveGuest:
    """The guest with its newest backup, whether a job covers it, and its newest vzdump task
    (one started for it alone) when that failed after its newest backup."""
    last = next((t for t in tasks if t.type == "vzdump" and t.id == g.vmid and t.end is not None), None)
    failed = last if last is not None and parse.task_failed(last) and (newest is None or (last.start or 0) > (newest.time or 0)) \
        else None
    return g.model_copy(update={"backup": newest, "backup_expected": covered or newest is not None,
                                "backup_failed": failed.status if failed else None,
                                "backup_failed_at": failed.start if failed else None})


def job_failures(tasks: list[PveTask]) -> list[PveTask]:
    """Per node, its newest backup job over several guests (a vzdump task with no single VMID), when it failed."""
    newest: dict[str, PveTask] = {}
    for t in tasks:  # newest first
        if t.type == "vzdump" and not t.id and t.end is not None:
            newest.setdefault(t.node, t)
    return [t for t in newest.values() if parse.task_failed(t)]


def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.proxmox]."""
    return ProxmoxCollector(c, states=host.states)
