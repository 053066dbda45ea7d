"""What replacing a failed disk takes: what to order, which bay, each array's state and rebuild
estimate, and the commands to type, as text. rackpulse never runs them.

Built from the states the plug-ins already hold (SMART's disk, md's member, ZFS's vdev,
MegaRAID's drive), found by serial, so it works for a disk already pulled: md, ZFS and the
controller remember what was there."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from collectors.disks.mdraid.state import Array, MdraidState
from collectors.disks.smart.state import Disk, SmartState
from collectors.state import State
from collectors.storage.megaraid.state import MegaraidState
from collectors.storage.zfs.state import ZfsState

TYPICAL_REBUILD_BYTES_PER_S = 150e6  # a 7200 rpm disk's sustained rate; md's speed_limit_max may cut it
DATA_DISKS_LOST = {"raid1": None, "raid4": 1, "raid5": 1, "raid6": 2, "raid10": None}


@dataclass
class Place:
    """One array, pool or controller the disk belongs to, and what to type for it."""

    kind: str  # "md", "zfs", "megaraid"
    name: str  # md0, tank, c0
    state: str  # in words: "degraded (11/12), clean"
    member: str  # sdh1, ata-ST8000..., 252:7
    min_bytes: float | None = None  # the smallest replacement it accepts
    rebuild_seconds: float | None = None
    rebuild_basis: str = ""
    commands: list[str] = field(default_factory=list)


@dataclass
class Replacement:
    serial: str
    model: str | None
    capacity_bytes: int | None
    interface: str  # "SATA", "SAS", "NVMe", "?"
    form_factor: str | None
    rotation: str | None  # "7200 rpm" or "SSD"
    bay: str | None
    device: str | None
    health: str
    places: list[Place]

    @property
    def min_bytes(self) -> float | None:
        sizes = [p.min_bytes for p in self.places if p.min_bytes]
        return max(sizes) if sizes else None


def plan(serial: str, states: Mapping[str, State | None]) -> Replacement | None:
    smart, md = states.get("smart"), states.get("mdraid")
    disk = next((d for d in smart.disks if d.key == serial or d.serial == serial), None) \
        if isinstance(smart, SmartState) else None
    places = []
    if isinstance(md, MdraidState):
        places += [p for a in md.arrays if (p := _md(a, serial, disk)) is not None]
    zfs, mega = states.get("zfs"), states.get("megaraid")
    if isinstance(zfs, ZfsState):
        places += _zfs(zfs, serial)
    if isinstance(mega, MegaraidState):
        places += _megaraid(mega, serial)
    if disk is None and not places:
        return None
    member = _member_facts(states, serial)
    return Replacement(
        serial=serial, model=disk.model if disk else member.get("model"),
        capacity_bytes=disk.capacity_bytes if disk else None,
        interface=_interface(disk), form_factor=disk.form_factor if disk else None,
        rotation=(f"{disk.rotation_rpm} rpm" if disk.rotation_rpm else "SSD") if disk and disk.rotation_rpm is not None
        else None, bay=disk.bay if disk and disk.bay else member.get("bay"),
        device=disk.device if disk else member.get("device"),
        health=disk.health_name if disk else "gone", places=places)


def _interface(d: Disk | None) -> str:
    if d is None or d.protocol is None:
        return "?"
    return {"ATA": "SATA", "NVMe": "NVMe", "SCSI": "SAS"}.get(d.protocol, d.protocol)


def _member_facts(states: Mapping[str, State | None], serial: str) -> dict[str, str | None]:
    md = states.get("mdraid")
    for a in md.arrays if isinstance(md, MdraidState) else []:
        for m in a.members:
            if m.serial == serial:
                return {"model": m.model, "bay": m.bay, "device": m.disk}
    return {}


def _md(a: Array, serial: str, disk: Disk | None) -> Place | None:
    member = next((m for m in a.members if m.serial == serial or (disk and m.disk == disk.device)), None)
    if member is None:
        return None
    part = member.device  # sdh1 (a partition) or sdh (the whole disk)
    words = ", ".join(a.state_words) or a.array_state or ""
    if a.disks_total:
        words = f"{words} ({a.disks_working}/{a.disks_total} in sync)".strip(", ")
    component = _component_bytes(a)
    speed = a.sync_speed_bytes if a.sync_action == "recovery" and a.sync_speed_bytes else None
    if a.sync_action == "recovery" and a.sync_remaining_seconds:
        rebuild, basis = a.sync_remaining_seconds, "md's own estimate for the rebuild running now"
    elif component:
        rebuild = component / (speed or TYPICAL_REBUILD_BYTES_PER_S)
        basis = "at the rebuild's speed now" if speed else "at 150 MB/s, a 7200 rpm disk's sustained rate"
    else:
        rebuild, basis = None, ""
    healthy = next((m.disk for m in a.members if m.state == "active" and m.disk and m.serial != serial), None)
    cmds = []
    if member.state not in ("failed", "missing"):
        cmds.append(f"mdadm --manage /dev/{a.name} --fail /dev/{part}")
    if member.state != "missing":
        cmds.append(f"mdadm --manage /dev/{a.name} --remove /dev/{part}")
    cmds.append("# pull the disk, insert the new one, then find its name: lsblk -o NAME,SERIAL,SIZE,MODEL")
    if part != member.disk and healthy:
        cmds += [f"sgdisk --replicate=/dev/NEW /dev/{healthy}   # the partition table of a healthy member",
                 "sgdisk --randomize-guids /dev/NEW"]
        suffix = part[len(member.disk or ""):] or "1"
        cmds.append(f"mdadm --manage /dev/{a.name} --add /dev/NEW{suffix}")
    else:
        cmds.append(f"mdadm --manage /dev/{a.name} --add /dev/NEW")
    cmds.append(f"cat /proc/mdstat   # the rebuild of {a.name} starts at once")
    return Place("md", a.name, words or "?", part, component, rebuild, basis, cmds)


def _component_bytes(a: Array) -> float | None:
    """Each member's share of the array: what a replacement must at least hold."""
    n, size = a.disks_total, a.size_bytes
    if not n or not size or not a.level:
        return None
    if a.level == "raid1":
        return float(size)
    if a.level == "raid10":
        return size * 2 / n
    lost = DATA_DISKS_LOST.get(a.level)
    return size / (n - lost) if lost is not None and n > lost else None


def _zfs(state: ZfsState, serial: str) -> list[Place]:
    out = []
    for pool in state.pools:
        for v in pool.vdevs:
            if v.leaf and v.serial == serial:
                out.append(Place("zfs", pool.name, pool.state or "?", v.name, commands=[
                    f"zpool offline {pool.name} {v.name}",
                    "# pull the disk, insert the new one, then find its id: ls -l /dev/disk/by-id/",
                    f"zpool replace {pool.name} {v.name} /dev/disk/by-id/NEW",
                    f"zpool status {pool.name}   # the resilver starts at once"]))
    return out


def _megaraid(state: MegaraidState, serial: str) -> list[Place]:
    out = []
    for c in state.controllers:
        for pd in c.pds:
            if pd.serial == serial:
                enc, slot = (pd.eid_slot.split(":") + [""])[:2]
                path = f"/{c.name}/e{enc}/s{slot}"
                out.append(Place("megaraid", c.name, pd.state or "?", pd.eid_slot, commands=[
                    f"storcli {path} set offline", f"storcli {path} set missing", f"storcli {path} spindown",
                    "# pull the drive, insert the new one in the same slot",
                    f"storcli {path} show rebuild   # a controller with auto-rebuild starts it at once",
                    f"storcli {path} start rebuild   # only if it did not"]))
    return out
