"""What the data page reads from the snapshot: the storage and backup plug-ins' typed states,
each None when its plug-in has not read its source here (or left a state of another type)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from app.data import copies as cp
from app.data.config import DataSet
from app.data.homes import Home, home_of
from app.snapshot import Snapshot
from collectors.disks.mdraid.state import MdraidState
from collectors.host.basics.state import HostState
from collectors.host.borg.state import BorgState
from collectors.host.pbs.state import PbsState
from collectors.host.proxmox.state import ProxmoxState
from collectors.host.restic.state import ResticState
from collectors.probes.heartbeats.state import HeartbeatsState
from collectors.state import State
from collectors.storage.btrfs.state import BtrfsState
from collectors.storage.megaraid.state import MegaraidState
from collectors.storage.zfs.state import ZfsState

S = TypeVar("S", bound=State)
COPY_SOURCES = ("restic", "borg", "zfs", "pbs", "proxmox", "heartbeats")


def _of(snap: Snapshot, name: str, kind: type[S]) -> S | None:
    state = snap.states.get(name)
    return state if isinstance(state, kind) else None


@dataclass(frozen=True)
class Read:
    host: HostState | None = None
    mdraid: MdraidState | None = None
    zfs: ZfsState | None = None
    btrfs: BtrfsState | None = None
    megaraid: MegaraidState | None = None
    restic: ResticState | None = None
    borg: BorgState | None = None
    pbs: PbsState | None = None
    proxmox: ProxmoxState | None = None
    heartbeats: HeartbeatsState | None = None

    @classmethod
    def of(cls, snap: Snapshot) -> Read:
        return cls(_of(snap, "host", HostState), _of(snap, "mdraid", MdraidState), _of(snap, "zfs", ZfsState),
                   _of(snap, "btrfs", BtrfsState), _of(snap, "megaraid", MegaraidState),
                   _of(snap, "restic", ResticState), _of(snap, "borg", BorgState), _of(snap, "pbs", PbsState),
                   _of(snap, "proxmox", ProxmoxState), _of(snap, "heartbeats", HeartbeatsState))

    def home(self, path: str) -> Home:
        return home_of(path, self.host, self.mdraid, self.zfs, self.btrfs,
                       behind_controller=bool(self.megaraid is not None and self.megaraid.controllers))

    def copies(self, s: DataSet, h: Home, zfs_of: Callable[[str], ZfsState | None] | None = None) -> list[cp.Copy]:
        """`zfs_of(host)`: another host's ZFS state, for the set's replicas there."""
        fss = self.host.filesystems if self.host is not None else []
        return (cp.backup_copies(self.restic, s, h, fss) + cp.backup_copies(self.borg, s, h, fss)
                + cp.zfs_copies(self.zfs, h) + cp.guest_copies(self.proxmox, self.pbs, s)
                + cp.heartbeat_copies(self.heartbeats, s)
                + cp.replica_copies(s, lambda host: self.zfs if not host else zfs_of(host) if zfs_of else None))

    def discovered(self) -> list[DataSet]:
        """No set named: each mount point of an array (md, ZFS, btrfs) is one."""
        out: list[DataSet] = []
        for fs in self.host.filesystems if self.host is not None else []:
            h = self.home(fs.mountpoint)
            name = fs.mountpoint.strip("/").replace("/", "-") or "root"
            if h.kind in ("md", "zfs", "btrfs") and h.mountpoint == fs.mountpoint and all(s.name != name for s in out):
                out.append(DataSet(name=name, path=fs.mountpoint))
        return out


def away_sources(snap: Snapshot) -> dict[str, str]:
    """The copy sources that run here and have not read their source yet, or could not last time:
    name -> why, in words."""
    return {name: "not read yet" if st.up is None else "cannot read its source"
            for name, st in snap.statuses.items() if name in COPY_SOURCES and st.up is not True and not st.no_data}


def zfs_of(snap: Snapshot, others: Mapping[str, Snapshot]) -> Callable[[str], ZfsState | None]:
    """Each host's ZFS state by name: this one's, or an agent host's."""
    def of(host: str) -> ZfsState | None:
        there = snap if host == snap.host else others.get(host)
        return _of(there, "zfs", ZfsState) if there is not None else None
    return of
