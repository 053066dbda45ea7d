"""Every copy that covers a data set's path: restic and borg snapshots whose paths include it, the
ZFS snapshots of its dataset, Proxmox and PBS backups of the guests it names, and the heartbeat
jobs it names (an rsync that pings when done). One Copy per destination, with its newest time.

A copy kept on the same array as the data dies with it: a ZFS snapshot in the same pool, a
restic repository under the same mount. It is listed, and not counted against losing the array."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.data.config import DataSet
from app.data.homes import Home, mount_of
from collectors.backup import BackupRepoView, BackupState, covers
from collectors.host.basics.state import Filesystem
from collectors.host.pbs.state import PbsState
from collectors.host.proxmox.state import ProxmoxState
from collectors.probes.heartbeats.state import HeartbeatsState
from collectors.storage.zfs.state import ZfsState


@dataclass(frozen=True)
class Copy:
    kind: str  # restic, borg, zfs, replica, pbs, vzdump, heartbeat
    where: str  # the repository's name, the dataset, the datastore, the job
    newest: float | None  # its newest time; None: none yet, or not known (error)
    offsite: bool = False
    same_array: bool = False  # on the array the data is on: lost with it
    checked: float | None = None  # its last check (restic/borg check, PBS verify) that ended
    check_ok: bool | None = None
    error: str | None = None  # its source cannot be read now: its newest is not known
    count: int | None = None
    source: str = ""  # "restic/nas-local": which plug-in's source it is (what an unreadable one holds)
    note: str = ""  # "its last run failed"

    @property
    def label(self) -> str:
        names = {"restic": "restic", "borg": "borg", "zfs": "ZFS snapshots", "pbs": "PBS", "vzdump": "Proxmox backup",
                 "heartbeat": "job", "replica": "ZFS replica"}
        return f"{names.get(self.kind, self.kind)} {self.where}"


def _repo_copy(kind: str, r: BackupRepoView, path: str, home: Home, filesystems: Sequence[Filesystem]) -> Copy | None:
    same = False
    if r.location.startswith("/") and home.mountpoint is not None:
        there = mount_of(r.location, filesystems)
        same = there is not None and there.mountpoint == home.mountpoint
    source = f"{kind}/{r.name}"
    checked, ok = (r.check.ended, r.check.ok) if r.check is not None else (None, None)
    if r.error:
        return Copy(kind, r.name, None, r.offsite, same, checked, ok, error=r.error, source=source)
    groups = [g for g in r.groups if covers(g.paths, path)]
    if not groups:
        return None
    times = [g.newest for g in groups if g.newest is not None]
    return Copy(kind, r.name, max(times) if times else None, r.offsite, same, checked, ok,
                count=sum(g.count or 0 for g in groups), source=source)


def backup_copies(state: BackupState | None, s: DataSet, home: Home,
                  filesystems: Sequence[Filesystem]) -> list[Copy]:
    """A repository that cannot be opened is a copy of unknown age (its alerts are held)."""
    if state is None:
        return []
    kind = type(state).kind
    out = [_repo_copy(kind, r, s.path, home, filesystems) for r in state.repos]
    return [c for c in out if c is not None]


def zfs_copies(state: ZfsState | None, home: Home) -> list[Copy]:
    """The snapshots of the dataset itself: in its pool, so lost with it."""
    if state is None or home.kind != "zfs":
        return []
    return [Copy("zfs", d.dataset, d.newest, same_array=True, count=d.count, source="zfs")
            for d in state.snapshots if d.dataset == home.device]


def guest_copies(pve: ProxmoxState | None, pbs: PbsState | None, s: DataSet) -> list[Copy]:
    out = []
    wanted = set(s.guests)
    for g in pve.guests if pve is not None else []:
        if g.vmid in wanted and g.backup is not None:
            ok = None if g.backup.verified is None else g.backup.verified == "ok"
            out.append(Copy("vzdump", f"{g.vmid} on {g.backup.storage}", g.backup.time, check_ok=ok,
                            checked=g.backup.time if ok is not None else None, source="proxmox"))
    for grp in pbs.groups if pbs is not None else []:
        if grp.type in ("vm", "ct") and grp.id in wanted:
            ok = None if grp.verified is None else grp.verified == "ok"
            out.append(Copy("pbs", f"{grp.store}/{grp.type}/{grp.id}", grp.last_backup, check_ok=ok, count=grp.count,
                            checked=grp.last_backup if ok is not None else None, source="pbs"))
    return out


def heartbeat_copies(state: HeartbeatsState | None, s: DataSet) -> list[Copy]:
    if state is None:
        return []
    return [Copy("heartbeat", b.name, b.last_success, source="heartbeats",
                 note="its last run failed" if b.status == "failed" else "")
            for b in state.beats if b.name in s.heartbeats]


def replica_copies(s: DataSet, zfs_of: Callable[[str], ZfsState | None]) -> list[Copy]:
    """The newest snapshot of each replica the set names, on the host that holds it; a host whose
    ZFS state is not here (an agent silent, its zfs collector off) is a copy of unknown age."""
    out = []
    for r in s.replicas:
        where = f"{r.host}:{r.dataset}" if r.host else r.dataset
        state = zfs_of(r.host)
        if state is None:
            out.append(Copy("replica", where, None, r.offsite, error=f"no ZFS snapshots from {r.host or 'this host'}",
                            source=f"replica/{where}"))
            continue
        found = next((d for d in state.snapshots if d.dataset == r.dataset), None)
        out.append(Copy("replica", where, found.newest if found else None, r.offsite,
                        count=found.count if found else 0, source=f"replica/{where}",
                        note="" if found else "no snapshot of it (is it in the zfs collector's snapshot_max_age?)"))
    return out
