"""Pure readers of the Proxmox VE API's answers ("data" of each GET) into typed records.

The field names are the API's own (pve-manager's PVE/API2/Cluster.pm, Nodes.pm, Replication.pm
and pve-storage's content listing): /cluster/status, /cluster/resources, /cluster/tasks,
/cluster/backup, /nodes/{node}/storage/{storage}/content and /nodes/{node}/replication."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from collectors.host.proxmox.state import PveBackup, PveGuest, PveNode, PveReplication, PveStorage, PveTask
from collectors.proxmoxapi import ApiFormatError as PveFormatError
from collectors.proxmoxapi import items as _items
from collectors.proxmoxapi import number as _num


def _flag(d: Mapping[str, Any], key: str) -> bool | None:
    v = d.get(key)
    return None if v is None else v in (1, True, "1", "true", "yes")


def parse_cluster_status(data: Any) -> tuple[str | None, bool | None, dict[str, bool]]:
    """(cluster name, quorate, {node: online}); a node that is no cluster's has no cluster entry."""
    name, quorate, online = None, None, {}
    for d in _items(data, "/cluster/status"):
        if d.get("type") == "cluster":
            name, quorate = str(d.get("name") or ""), bool(_flag(d, "quorate"))
        elif d.get("type") == "node":
            online[str(d.get("name"))] = bool(_flag(d, "online"))
    return name, quorate, online


def parse_resources(data: Any) -> tuple[list[PveNode], list[PveGuest], list[PveStorage]]:
    """Nodes, guests (templates left out: they never run) and storages of /cluster/resources.
    A shared storage (NFS, Ceph, a PBS) is listed once per node there; here once."""
    nodes, guests, storages, shared_seen = [], [], [], set()
    for d in _items(data, "/cluster/resources"):
        kind = d.get("type")
        if kind == "node":
            cores = _num(d, "maxcpu")
            nodes.append(PveNode(name=str(d.get("node") or d.get("id", "")).removeprefix("node/"),
                                 online=d.get("status") == "online", cpu=_num(d, "cpu"),
                                 cores=int(cores) if cores is not None else None, memory_bytes=_num(d, "mem"),
                                 memory_total_bytes=_num(d, "maxmem"), uptime=_num(d, "uptime")))
        elif kind in ("qemu", "lxc"):
            if _flag(d, "template"):
                continue
            vmid = _num(d, "vmid")
            if vmid is None:
                raise PveFormatError(f"a guest without vmid: {dict(d)!r:.200}")
            guests.append(PveGuest(
                vmid=str(int(vmid)), name=str(d.get("name") or f"{kind}{int(vmid)}"), type=str(kind),
                node=str(d.get("node", "")), status=str(d.get("status") or "unknown"), uptime=_num(d, "uptime"),
                cpu=_num(d, "cpu"), cpus=_num(d, "maxcpu"), memory_bytes=_num(d, "mem"),
                memory_total_bytes=_num(d, "maxmem"), net_in_bytes=_num(d, "netin"), net_out_bytes=_num(d, "netout"),
                disk_read_bytes=_num(d, "diskread"), disk_write_bytes=_num(d, "diskwrite"),
                hastate=d.get("hastate") or None, lock=d.get("lock") or None))
        elif kind == "storage":
            name, shared = str(d.get("storage", "")), bool(_flag(d, "shared"))
            if shared and name in shared_seen:
                continue
            shared_seen.add(name) if shared else None
            storages.append(PveStorage(name=name, node=str(d.get("node", "")), type=str(d.get("plugintype", "")),
                                       shared=shared, active=d.get("status") == "available",
                                       used_bytes=_num(d, "disk"), total_bytes=_num(d, "maxdisk"),
                                       content=sorted(c for c in str(d.get("content", "")).split(",") if c)))
    return nodes, guests, storages


def parse_tasks(data: Any) -> list[PveTask]:
    """The cluster's recent tasks, newest first; a task still running has no end and no status."""
    tasks = []
    for d in _items(data, "/cluster/tasks"):
        start = _num(d, "starttime")
        if start is None:
            raise PveFormatError(f"a task without starttime: {dict(d)!r:.200}")
        tasks.append(PveTask(type=str(d.get("type", "")), id=str(d.get("id") or ""), node=str(d.get("node", "")),
                             user=str(d.get("user", "")), start=start, end=_num(d, "endtime"),
                             status=str(d.get("status") or "")))
    return sorted(tasks, key=lambda t: t.start or 0, reverse=True)


def task_failed(t: PveTask) -> bool:
    """Ended, and not "OK" nor "WARNINGS: n" (done, with something said in its log)."""
    return t.end is not None and bool(t.status) and t.status != "OK" and not t.status.startswith("WARNINGS")


def parse_backups(data: Any, storage: str) -> dict[str, PveBackup]:
    """Each guest's newest backup on one storage (its content listing with content=backup)."""
    newest: dict[str, PveBackup] = {}
    for d in _items(data, f"storage {storage} content"):
        if d.get("content", "backup") != "backup":
            continue
        vmid, ctime = _num(d, "vmid"), _num(d, "ctime")
        if vmid is None or ctime is None:
            continue  # an archive whose name says no guest (copied in by hand)
        verification = d.get("verification")
        state = verification.get("state") if isinstance(verification, Mapping) else None
        b = PveBackup(time=ctime, storage=storage, verified=str(state) if state else None, size_bytes=_num(d, "size"))
        key = str(int(vmid))
        if key not in newest or ctime > (newest[key].time or 0):
            newest[key] = b
    return newest


def parse_replication(data: Any, node: str) -> list[PveReplication]:
    """A node's replication jobs with their state (last_sync 0: never synced)."""
    out = []
    for d in _items(data, f"/nodes/{node}/replication"):
        guest = _num(d, "guest")
        last = _num(d, "last_sync")
        out.append(PveReplication(id=str(d.get("id", "")), guest=str(int(guest or 0)), target=str(d.get("target", "")),
                                  source=str(d.get("source") or node), last_sync=last or None,
                                  fail_count=int(_num(d, "fail_count") or 0), error=d.get("error") or None))
    return out


def backup_covered(jobs: Any, guests: Iterable[PveGuest], pools: Mapping[str, str]) -> set[str]:
    """The VMIDs an enabled backup job (/cluster/backup) covers: all (minus exclude), a list, or a pool."""
    ids = [g.vmid for g in guests]
    covered: set[str] = set()
    for job in _items(jobs, "/cluster/backup"):
        if _flag(job, "enabled") is False:
            continue
        exclude = {x for x in str(job.get("exclude") or "").replace(" ", ",").split(",") if x.isdigit()}
        if _flag(job, "all"):
            covered |= {v for v in ids if v not in exclude}
        elif job.get("pool"):
            covered |= {v for v in ids if pools.get(v) == job["pool"] and v not in exclude}
        else:
            covered |= {x.strip() for x in str(job.get("vmid") or "").split(",") if x.strip().isdigit()}
    return covered


def guest_pools(data: Any) -> dict[str, str]:
    """VMID -> pool, from /cluster/resources (for a job that backs up a pool)."""
    return {str(int(v)): str(d["pool"]) for d in _items(data, "/cluster/resources")
            if d.get("type") in ("qemu", "lxc") and d.get("pool") and (v := _num(d, "vmid")) is not None}
