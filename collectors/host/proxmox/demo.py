"""The demo's Proxmox VE cluster and Backup Server, as API answers for the demo's HTTPS stand-in
(demo/pve_api.py serves `demo-proxmox/pve` and `demo-proxmox/pbs` under the demo's root): two
nodes and a dozen guests backed up nightly to a PBS. For a stretch of each loop the photo
library VM (immich, set to start at boot) is stopped and its last backups failed, so its newest
is a day and a half old: pve_guest_down, pve_backup_failed and pve_backup_stale fire, and on the
Backup Server pbs_snapshot_stale."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from collectors.scenes import atomic_write

FAILING = (60.0, 120.0)  # story seconds of each 240 s loop in which immich is down
# Its failed backup task is listed only well inside that stretch: the collector reads the task list
# and the storages' contents one after the other, and a scene written between the two reads made
# the alert fire with the last good backup "2 h old" (the contents before the stretch), then
# resolve with "31 h old". Inside the margin, both reads see the same stretch.
TASK_MARGIN = 8.0
H = 3600
GiB = 1024**3
# vmid, name, type, node, onboot, running normally, vCPUs, memory GiB, busy share
GUESTS = [(100, "home-assistant", "qemu", "pve1", True, True, 2, 4, 0.03),
          (101, "nextcloud", "qemu", "pve1", True, True, 4, 8, 0.08),
          (102, "pihole", "lxc", "pve2", True, True, 1, 0.5, 0.01),
          (103, "win11", "qemu", "pve2", False, False, 4, 8, 0.0),
          (104, "media", "lxc", "pve1", True, True, 2, 2, 0.12),
          (105, "gitea", "lxc", "pve2", True, True, 2, 2, 0.02),
          (106, "paperless", "lxc", "pve2", True, True, 2, 3, 0.04),
          (107, "immich", "qemu", "pve1", True, True, 4, 8, 0.15),
          (108, "unifi", "lxc", "pve2", True, True, 1, 2, 0.02),
          (109, "vaultwarden", "lxc", "pve1", True, True, 1, 0.5, 0.01),
          (110, "grafana-old", "lxc", "pve2", False, False, 1, 1, 0.0),
          (111, "k3s-1", "qemu", "pve1", True, True, 4, 8, 0.2)]
NOT_BACKED_UP = {103, 110}
DOWN = 107


def _write(folder: Path, path: str, data: object) -> None:
    atomic_write(folder / (path.strip("/") + ".json"), json.dumps(data))


def write_scene(root: Path, t: float) -> None:
    now = int(time.time())
    failing = FAILING[0] <= t % 240.0 < FAILING[1]
    task_failed = FAILING[0] + TASK_MARGIN <= t % 240.0 < FAILING[1] - TASK_MARGIN
    nightly = now - 3 * H  # last night's backup job, three hours ago
    _write_pve(root / "demo-proxmox" / "pve", now, nightly, failing, task_failed)
    _write_pbs(root / "demo-proxmox" / "pbs", now, nightly, failing)


def _guest_row(g: tuple[Any, ...], now: int, failing: bool) -> dict[str, object]:
    vmid, name, kind, node, _onboot, runs, cpus, mem, busy = g
    running = runs and not (failing and vmid == DOWN)
    up = 86400 * 5 + vmid * 3600 if running else 0
    return {"id": f"{kind}/{vmid}", "type": kind, "vmid": vmid, "name": name, "node": node,
            "status": "running" if running else "stopped", "maxcpu": cpus, "maxmem": int(mem * GiB),
            "cpu": busy if running else 0, "mem": int(mem * GiB * 0.6) if running else 0, "uptime": up,
            "netin": up * 20_000 if running else 0, "netout": up * 8_000 if running else 0,
            "diskread": up * 50_000 if running else 0, "diskwrite": up * 30_000 if running else 0,
            "disk": 0, "maxdisk": 32 * GiB, "template": 0, **({"hastate": "started"} if vmid == 100 else {})}


def _newest_backup(vmid: int, nightly: int, failing: bool) -> int:
    # immich's last good backup is from the night before last while it is down
    return nightly - 30 * H + vmid * 60 if failing and vmid == DOWN else nightly + (vmid - 99) * 60


def _write_pve(folder: Path, now: int, nightly: int, failing: bool, task_failed: bool) -> None:
    _write(folder, "cluster/status", [
        {"type": "cluster", "id": "cluster", "name": "homelab", "nodes": 2, "quorate": 1, "version": 6},
        *({"type": "node", "id": f"node/{n}", "name": n, "nodeid": i + 1, "online": 1, "local": int(i == 0),
           "ip": f"192.168.10.{11 + i}"} for i, n in enumerate(("pve1", "pve2")))])
    nodes = [{"id": f"node/{n}", "type": "node", "node": n, "status": "online", "cpu": c, "maxcpu": cores,
              "mem": int(m * GiB), "maxmem": int(mm * GiB), "uptime": 86400 * 12, "level": ""}
             for n, c, cores, m, mm in (("pve1", 0.18, 16, 38, 64), ("pve2", 0.06, 8, 9, 32))]
    storages = [{"id": f"storage/{n}/local-zfs", "type": "storage", "storage": "local-zfs", "node": n,
                 "status": "available", "plugintype": "zfspool", "content": "images,rootdir", "shared": 0,
                 "disk": d * GiB, "maxdisk": 860 * GiB} for n, d in (("pve1", 512), ("pve2", 233))]
    storages += [{"id": f"storage/{n}/pbs-store", "type": "storage", "storage": "pbs-store", "node": n,
                  "status": "available", "plugintype": "pbs", "content": "backup", "shared": 1,
                  "disk": 1900 * GiB, "maxdisk": 4000 * GiB} for n in ("pve1", "pve2")]
    _write(folder, "cluster/resources", [*nodes, *(_guest_row(g, now, failing) for g in GUESTS), *storages])
    for vmid, name, kind, node, onboot, *_ in GUESTS:
        _write(folder, f"nodes/{node}/{kind}/{vmid}/config", {"name": name, "onboot": int(onboot)})
    _write(folder, "cluster/backup", [{"id": "backup-nightly", "type": "vzdump", "enabled": 1, "all": 1,
                                       "exclude": ",".join(str(v) for v in sorted(NOT_BACKED_UP)),
                                       "schedule": "03:00", "storage": "pbs-store", "mode": "snapshot"}])
    content = []
    for vmid, _name, kind, *_ in GUESTS:
        if vmid in NOT_BACKED_UP:
            continue
        ctime = _newest_backup(vmid, nightly, failing)
        sub = "vm" if kind == "qemu" else "ct"
        content.append({"volid": f"pbs-store:backup/{sub}/{vmid}/{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(ctime))}",
                        "content": "backup", "format": f"pbs-{sub}", "ctime": ctime, "vmid": vmid, "subtype": kind,
                        "size": (vmid - 90) * GiB, "verification": {"state": "ok", "upid": "UPID:pbs:demo"}})
    _write(folder, "nodes/pve1/storage/pbs-store/content", content)
    tasks = [{"upid": f"UPID:{n}:demo:vzdump::root@pam:", "node": n, "type": "vzdump", "id": "", "user": "root@pam",
              "starttime": nightly, "endtime": nightly + 1800, "status": "OK"} for n in ("pve1", "pve2")]
    if task_failed:  # immich's own backup, tried again after the job, failed
        tasks.insert(0, {"upid": f"UPID:pve1:demo:vzdump:{DOWN}:root@pam:", "node": "pve1", "type": "vzdump",
                         "id": str(DOWN), "user": "root@pam", "starttime": now - 1200, "endtime": now - 1150,
                         "status": "ERROR: VM 107 not running and the guest agent did not answer"})
    _write(folder, "cluster/tasks", tasks)
    _write(folder, "nodes/pve1/replication", [{"id": "101-0", "guest": 101, "jobnum": 0, "target": "pve2",
                                               "type": "local", "source": "pve1", "last_sync": now - 420,
                                               "next_sync": now + 480, "duration": 3.1, "fail_count": 0}])
    _write(folder, "nodes/pve2/replication", [])


def _write_pbs(folder: Path, now: int, nightly: int, failing: bool) -> None:
    tb = 10**12
    _write(folder, "status/datastore-usage", [{"store": "store1", "total": 4 * tb, "used": int(1.9 * tb),
                                               "avail": int(2.1 * tb), "estimated-full-date": now + 240 * 86400,
                                               "gc-status": {"removed-bytes": 38 * 10**9, "pending-bytes": 9 * 10**9}}])
    groups, snaps = [], []
    for vmid, _name, kind, *_ in GUESTS:
        if vmid in NOT_BACKED_UP:
            continue
        sub = "vm" if kind == "qemu" else "ct"
        newest = _newest_backup(vmid, nightly, failing)
        groups.append({"backup-type": sub, "backup-id": str(vmid), "last-backup": newest, "backup-count": 14,
                       "owner": "backup@pbs!pve", "files": ["index.json.blob"]})
        snaps.append({"backup-type": sub, "backup-id": str(vmid), "backup-time": newest, "size": (vmid - 90) * GiB,
                      "files": [], "verification": {"state": "ok", "upid": "UPID:pbs:demo"}})
    _write(folder, "admin/datastore/store1/groups", groups)
    _write(folder, "admin/datastore/store1/snapshots", snaps)
    status = {"last-run-state": "OK", "last-run-endtime": nightly + 7200, "next-run": nightly + 86400 + 7200}
    _write(folder, "admin/verify", [{"id": "v-nightly", "store": "store1", "schedule": "05:00", **status}])
    _write(folder, "admin/sync", [])
    _write(folder, "admin/prune", [{"id": "p-store1", "store": "store1", "schedule": "daily", **status}])
    _write(folder, "admin/gc", [{"store": "store1", "schedule": "daily", **status}])
