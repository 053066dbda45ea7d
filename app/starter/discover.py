"""What a host has that rackpulse can watch, read from host_root the way the collectors read
it: its name, its disks with serial, WWN, controller port and enclosure slot (the bays to
label), and each plug-in's own part (its `starter`: md arrays, bonds, OpenVPN instances, rails,
UPSes, storage tools ...). Nothing is changed and nothing is asked of any device."""

from __future__ import annotations

import logging
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path

from collectors import plugins
from collectors.location import DiskLocation, read_locations
from collectors.starter import HostTree

log = logging.getLogger("rackpulse.init")
# by-path names of a controller port: an HBA phy, a SATA port, an NVMe slot, a USB port.
_PORT = re.compile(r"^(?P<ctl>pci-[0-9a-f:.]+)-(?:sas-phy(?P<phy>\d+)|ata-(?P<ata>\d+)(?:\.\d+)?|nvme-(?P<nvme>\d+)"
                   r"|usb-\S+?:(?P<usb>\d+))")


@dataclass
class Bay:
    label: str
    path: str | None = None
    enclosure_slot: str | None = None
    disk: DiskLocation | None = None


@dataclass
class Found:
    host: str
    disks: list[DiskLocation] = field(default_factory=list)
    bays: list[Bay] = field(default_factory=list)
    parts: dict[str, list[str]] = field(default_factory=dict)  # plug-in -> its section of the starter config
    notes: list[str] = field(default_factory=list)  # what could not be read, said in the file
    arrays_mounted: list[tuple[str, str, str]] = field(default_factory=list)  # (mount point, device, fstype)


_ARRAY_DEVICE = re.compile(r"^/dev/md(\d+|/.+)$")


def array_mounts(tree: HostTree) -> list[tuple[str, str, str]]:
    """The mount points of md arrays, ZFS datasets and btrfs filesystems: the data sets /data
    judges when none is named (app/data/sources.py)."""
    from collectors.base import ParseError
    from collectors.host.basics.procfs import parse_mounts

    text = tree.read("/proc/1/mounts") or tree.read("/proc/mounts") or ""
    try:
        mounts = parse_mounts(text)
    except ParseError as exc:
        tree.notes.append(f"data sets: {exc}")
        return []
    return [(m.mountpoint, m.device, m.fstype) for m in mounts
            if m.fstype in ("zfs", "btrfs") or _ARRAY_DEVICE.match(m.device)]


def hostname(tree: HostTree) -> str:
    text = tree.read("/etc/hostname")
    if text and text.strip():
        return text.strip().split(".")[0]
    return socket.gethostname().split(".")[0] if tree.live else "my-host"


def propose_bays(disks: list[DiskLocation]) -> list[Bay]:
    """One bay per enclosure slot, else per controller port, labelled for the user to rename:
    a rule by port keeps its label when the disk in it is replaced."""
    bays: list[Bay] = []
    ports = []
    for d in disks:
        if d.enclosure_slot:
            encl, _, slot = d.enclosure_slot.partition("/")
            bays.append(Bay(f"enclosure {encl}, {slot}", enclosure_slot=d.enclosure_slot, disk=d))
        elif d.by_path and (m := _PORT.match(d.by_path)):
            n = next(int(m[k]) for k in ("phy", "ata", "nvme", "usb") if m[k] is not None)
            kind = "NVMe slot" if m["nvme"] is not None else "USB port" if m["usb"] is not None else "port"
            ports.append((m["ctl"], kind, n, d))
    # Each NVMe drive is a controller of its own: they are counted as slots in PCI order. Ports of
    # HBAs and SATA controllers are numbered as the controller numbers them, per controller.
    nvme = sorted((p for p in ports if p[1] == "NVMe slot"), key=lambda p: p[0])
    bays += [Bay(f"NVMe slot {i + 1}", path=d.by_path, disk=d) for i, (_, _, _, d) in enumerate(nvme)]
    rest = [p for p in ports if p[1] != "NVMe slot"]
    controllers = sorted({c for c, _, _, _ in rest})
    for ctl, kind, n, d in sorted(rest, key=lambda p: (controllers.index(p[0]), p[1], p[2])):
        where = f"controller {controllers.index(ctl) + 1}, " if len(controllers) > 1 else ""
        bays.append(Bay(f"{where}{kind} {n}", path=d.by_path, disk=d))
    return bays


def discover(host_root: Path) -> Found:
    tree = HostTree(host_root)
    found = Found(host=hostname(tree))
    locs = read_locations(host_root)
    found.disks = sorted((d for d in locs.values() if d.serial or d.wwn or d.by_path or d.enclosure_slot),
                         key=lambda d: (len(d.device), d.device))
    found.bays = propose_bays(found.disks)
    for name, plugin in plugins().items():
        if plugin.setup.starter is None:
            continue
        try:
            found.parts[name] = plugin.setup.starter(tree)
        except Exception as exc:  # noqa: BLE001 - one plug-in's bug costs its own part of the file
            log.warning("init: %s could not look at the host: %s", name, exc)
            tree.notes.append(f"{name}: could not look at the host ({type(exc).__name__})")
    found.arrays_mounted = array_mounts(tree)
    found.notes = tree.notes
    return found
