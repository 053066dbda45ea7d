"""Where a disk physically is: serial and WWN from /dev/disk/by-id, the controller port
from /dev/disk/by-path, the enclosure slot from /sys/class/enclosure, and the user's
bay labels from the config.

Names follow udev's 60-persistent-storage.rules: ``ata-<model>_<serial>``,
``scsi-SATA_<model>_<serial>``, ``nvme-<model>_<serial>``, ``usb-<vendor>_<model>_<serial>-0:0``,
``wwn-0x<wwn>``; partitions end in ``-partN``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from collectors.base import host_path

_PART_RE = re.compile(r"-part\d+$")
BUS_PREFERENCE = {"ata": 0, "nvme": 0, "scsi": 1, "usb": 2, "wwn": 3}


@dataclass(frozen=True, slots=True)
class ByIdName:
    bus: str  # ata, scsi, nvme, usb, wwn
    model: str | None
    serial: str | None
    wwn: str | None = None


def parse_by_id_name(name: str) -> ByIdName | None:
    """Split a /dev/disk/by-id link name into bus, model and serial. Partitions give None."""
    if _PART_RE.search(name):
        return None
    if name.startswith("wwn-"):
        return ByIdName("wwn", None, None, wwn=name[4:].lower())
    bus, sep, rest = name.partition("-")
    if not sep or bus not in ("ata", "scsi", "nvme", "usb"):
        return None
    if bus == "scsi":
        # udev's scsi_id puts the id's type first: "3" (NAA) or "2" (EUI-64) before a hex id,
        # scsi-35000c500a1b2c3d4; "S" (unit serial, VPD page 0x80), "1" (T10 vendor id) or
        # "0" (vendor specific) before vendor_model_serial. A disk behind libata has the
        # vendor "ATA" (scsi-SATA_ST4000DM000-1F21_Z30A1B2C); a SAS disk its maker
        # (scsi-SSEAGATE_ST4000NM0023_Z1Z2ABCD), which stays part of the model.
        if re.fullmatch(r"[0-9a-f]{17,33}", rest):
            return ByIdName("scsi", None, None, wwn="0x" + rest[1:])
        if rest[:1] in ("S", "1", "0"):
            rest = rest[1:].removeprefix("ATA_")
    if bus == "usb":
        rest = re.sub(r"-\d+:\d+$", "", rest)
    if bus == "nvme" and rest.startswith("eui."):
        return None
    model, sep, serial = rest.rpartition("_")
    if not sep:
        return ByIdName(bus, None, rest or None)
    return ByIdName(bus, model.replace("_", " ") or None, serial or None)


@dataclass
class DiskLocation:
    device: str  # kernel name "sdh"
    serial: str | None = None
    model: str | None = None
    wwn: str | None = None
    by_path: str | None = None  # "pci-0000:03:00.0-sas-phy7-lun-0"
    enclosure_slot: str | None = None  # "0:0:12:0/Slot07"
    bay: str | None = None  # the user's label: "shelf 2, bay 7"
    ids: list[str] = field(default_factory=list)
    # A RAID controller's own slot ("0/252:4": controller 0, enclosure 252, slot 4) for a disk
    # behind it that the host never sees as a block device.
    slot: str | None = None


@dataclass(frozen=True)
class BayRule:
    label: str
    serial: str | None = None
    wwn: str | None = None
    path: str | None = None  # by-path name (or a prefix of it)
    enclosure_slot: str | None = None
    # A RAID controller's "EID:Slt" as storcli prints it ("252:4"), on any controller, or
    # "<controller>/<EID:Slt>" ("1/252:4") on that one only.
    slot: str | None = None

    def matches(self, loc: DiskLocation) -> bool:
        if self.serial and loc.serial and self.serial == loc.serial:
            return True
        if self.wwn and loc.wwn and self.wwn.lower() == loc.wwn.lower():
            return True
        if self.path and loc.by_path and (loc.by_path == self.path or loc.by_path.startswith(self.path + "-")):
            return True
        if self.slot and loc.slot and (loc.slot == self.slot or loc.slot.split("/", 1)[-1] == self.slot):
            return True
        return bool(self.enclosure_slot and loc.enclosure_slot == self.enclosure_slot)


def bay_of(rules: Iterable[BayRule], loc: DiskLocation) -> str | None:
    """The first rule's label that matches: the config's order decides, then the labels saved
    from a disk's page (collectors.host.BayRules gives them in that order)."""
    return next((r.label for r in rules if r.matches(loc)), None)


def _links(directory: Path) -> Iterable[tuple[str, str]]:
    """(link name, kernel device name) for each symlink in a /dev/disk/by-* folder."""
    try:
        entries = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []
    out = []
    for e in entries:
        try:
            target = os.readlink(e.path)
        except OSError:
            continue
        out.append((e.name, os.path.basename(target)))
    return out


def read_locations(host_root: Path, bays: Iterable[BayRule] = ()) -> dict[str, DiskLocation]:
    """Map kernel name -> DiskLocation from the host's udev links and enclosures."""
    locs: dict[str, DiskLocation] = {}

    def loc(dev: str) -> DiskLocation:
        return locs.setdefault(dev, DiskLocation(device=dev))

    parsed = [(name, dev, info) for name, dev in _links(host_path(host_root, "/dev/disk/by-id"))
              if (info := parse_by_id_name(name)) is not None]
    # The first name with a serial gives it: ata-/nvme- names carry the drive's own serial
    # whole, scsi- ones through the SCSI layer (a model cut to 16 characters), usb- ones the
    # bridge's. Within a bus by name, so nvme-<model>_<serial> comes before the
    # nvme-<model>_<serial>_<namespace> that newer udev adds.
    parsed.sort(key=lambda p: (BUS_PREFERENCE[p[2].bus], p[0]))
    for name, dev, info in parsed:
        d = loc(dev)
        d.ids.append(name)
        if info.wwn and not d.wwn:
            d.wwn = info.wwn
        if info.serial and not d.serial:
            d.serial, d.model = info.serial, info.model
    for name, dev in _links(host_path(host_root, "/dev/disk/by-path")):
        if not _PART_RE.search(name):
            d = loc(dev)
            d.by_path = d.by_path or name
    for slot, dev in read_enclosure_slots(host_root).items():
        loc(dev).enclosure_slot = slot
    rules = list(bays)
    for d in locs.values():
        d.bay = bay_of(rules, d)
    return locs


def read_enclosure_slots(host_root: Path) -> dict[str, str]:
    """``/sys/class/enclosure/<encl>/<slot>/device/block/<dev>`` -> {"<encl>/<slot>": dev} inverted."""
    out: dict[str, str] = {}
    base = host_path(host_root, "/sys/class/enclosure")
    try:
        enclosures = sorted(os.listdir(base))
    except OSError:
        return out
    for encl in enclosures:
        try:
            slots = sorted(os.listdir(base / encl))
        except OSError:
            continue
        for slot in slots:
            block = base / encl / slot / "device" / "block"
            try:
                devs = os.listdir(block)
            except OSError:
                continue
            for dev in devs:
                out[dev] = f"{encl}/{slot}"
    return {slot_: dev for dev, slot_ in out.items()}


def base_device(name: str) -> str:
    """Kernel name of the whole disk for a partition: sda1 -> sda, nvme0n1p2 -> nvme0n1."""
    name = name.removeprefix("/dev/")
    if m := re.fullmatch(r"(nvme\d+n\d+|mmcblk\d+|md\d+|loop\d+)p\d+", name):
        return m[1]
    if re.fullmatch(r"(nvme\d+n\d+|mmcblk\d+|md\d+|loop\d+|dm-\d+)", name):
        return name
    return re.sub(r"\d+$", "", name) or name


def bay_rules(raw: Iterable[Mapping[str, str]]) -> list[BayRule]:
    return [BayRule(**dict(r)) for r in raw]
