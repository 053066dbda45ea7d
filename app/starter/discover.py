"""What a host has that rackpulse can watch, read from host_root the way the collectors read
it: md arrays and their members, disks with serial, WWN, controller port and enclosure slot,
bonds, tun/tap devices and the OpenVPN instances behind them, FRR, hwmon rails and fans, NUT,
storage tools, filesystems. Nothing is changed and nothing is asked of any device."""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path

from collectors.base import CollectorError, host_path, read_text
from collectors.disks.location import DiskLocation, read_locations
from collectors.disks.mdraid.mdstat import parse_mdstat
from collectors.hwmon_sysfs import read_hwmon

# by-path names of a controller port: an HBA phy, a SATA port, an NVMe slot, a USB port.
_PORT = re.compile(r"^(?P<ctl>pci-[0-9a-f:.]+)-(?:sas-phy(?P<phy>\d+)|ata-(?P<ata>\d+)(?:\.\d+)?|nvme-(?P<nvme>\d+)"
                   r"|usb-\S+?:(?P<usb>\d+))")
BIN_DIRS = ("/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/sbin", "/usr/local/bin", "/opt/MegaRAID/storcli")
TOOLS = {"zpool": "ZFS", "btrfs": "btrfs", "storcli64": "MegaRAID", "storcli": "MegaRAID", "perccli64": "PERC",
         "ceph": "Ceph", "vtysh": "FRR", "smartctl": "SMART", "mdadm": "md"}


@dataclass
class Bay:
    label: str
    path: str | None = None
    enclosure_slot: str | None = None
    disk: DiskLocation | None = None


@dataclass
class Tunnel:
    name: str
    status_file: str | None = None
    config_file: str | None = None
    interface: str | None = None
    management: str | None = None


@dataclass
class Found:
    host: str
    arrays: list[tuple[str, str | None, list[str]]] = field(default_factory=list)  # name, level, members
    disks: list[DiskLocation] = field(default_factory=list)
    bays: list[Bay] = field(default_factory=list)
    bonds: list[str] = field(default_factory=list)
    tun_devices: list[str] = field(default_factory=list)
    tunnels: list[Tunnel] = field(default_factory=list)
    frr: bool = False
    rails: list[tuple[str, str, str, float]] = field(default_factory=list)  # chip, sensor, label, volts
    fans: list[tuple[str, str, str, float]] = field(default_factory=list)  # chip, sensor, label, rpm
    ups: list[str] = field(default_factory=list)
    upsd_listening: bool = False
    tools: dict[str, str] = field(default_factory=dict)  # tool -> where found
    filesystems: list[tuple[str, str, bool]] = field(default_factory=list)  # mountpoint, fstype, read-only
    notes: list[str] = field(default_factory=list)  # what could not be read, said in the file


def _read(host_root: Path, path: str) -> str | None:
    try:
        return read_text(host_path(host_root, path))
    except OSError:
        return None


_CONTROL = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")  # control characters, and bytes not UTF-8


def _listdir(path: Path, notes: list[str] | None = None) -> list[str]:
    """The names in a folder that a config may hold: one with a control character or bytes that
    are not UTF-8 is no device a person named (tun0 + newline + [collectors.ceph] ...), so it is
    left out, and said in the file's notes."""
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return []
    odd = [n for n in names if _CONTROL.search(n)]
    if odd and notes is not None:
        notes.append(f"{path}: left out {len(odd)} name(s) with control characters or bytes that are not UTF-8")
    return [n for n in names if n not in odd]


def hostname(host_root: Path) -> str:
    text = _read(host_root, "/etc/hostname")
    if text and text.strip():
        return text.strip().split(".")[0]
    return socket.gethostname().split(".")[0] if host_root == Path("/") else "my-host"


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


def _openvpn(host_root: Path, found: Found) -> None:
    """Instances from their config files ("status" and "dev" lines), and status files nobody's
    config names (an instance started by hand)."""
    named: set[str] = set()
    for folder in ("/etc/openvpn", "/etc/openvpn/server", "/etc/openvpn/client"):
        for name in _listdir(host_path(host_root, folder), found.notes):
            if not name.endswith(".conf"):
                continue
            conf = f"{folder}/{name}"
            text = _read(host_root, conf) or ""
            t = Tunnel(name=name.removesuffix(".conf"), config_file=conf)
            for line in text.splitlines():
                words = line.split("#", 1)[0].split(";", 1)[0].split()
                if len(words) >= 2 and words[0] == "status":
                    t.status_file = words[1]
                elif len(words) >= 2 and words[0] == "dev":
                    t.interface = words[1] if words[1][-1:].isdigit() else None
                elif len(words) >= 3 and words[0] == "management" and words[2] != "unix":
                    t.management = f"{words[1]}:{words[2]}"
            if t.status_file:
                named.add(t.status_file)
            found.tunnels.append(t)
    for folder in ("/run/openvpn", "/run/openvpn-server", "/run/openvpn-client", "/var/log/openvpn"):
        for name in _listdir(host_path(host_root, folder), found.notes):
            path = f"{folder}/{name}"
            if "status" not in name and not name.endswith(".status") or path in named:
                continue
            stem = re.sub(r"\W+", "-", name.removesuffix(".log").removesuffix(".status").removeprefix("status-"))
            stem = stem.strip("-") or "vpn"
            # The instance whose config names no status file is most likely the one writing this.
            owner = next((t for t in found.tunnels if t.name == stem and not t.status_file), None)
            if owner is not None:
                owner.status_file = path
            else:
                found.tunnels.append(Tunnel(name=stem, status_file=path))


def _hwmon(host_root: Path, found: Found) -> None:
    try:
        sensors = read_hwmon(host_root)
    except CollectorError:
        return
    for s in sensors:
        label = s.label or f"{s.chip} {s.name}"
        if s.kind == "in" and s.value is not None:
            found.rails.append((s.chip, s.name, label, s.value))
        elif s.kind == "fan" and s.value is not None:
            found.fans.append((s.chip, s.name, label, s.value))


def discover(host_root: Path) -> Found:
    found = Found(host=hostname(host_root))
    mdstat = _read(host_root, "/proc/mdstat")
    if mdstat:
        try:
            found.arrays = [(a.name, a.level, [m.device for m in a.members]) for a in parse_mdstat(mdstat).arrays]
        except CollectorError as exc:
            found.notes.append(f"/proc/mdstat: {exc}")
    locs = read_locations(host_root)
    found.disks = sorted((d for d in locs.values() if d.serial or d.wwn or d.by_path or d.enclosure_slot),
                         key=lambda d: (len(d.device), d.device))
    found.bays = propose_bays(found.disks)
    found.bonds = _listdir(host_path(host_root, "/proc/net/bonding"), found.notes)
    net = host_path(host_root, "/sys/class/net")
    found.tun_devices = [n for n in _listdir(net, found.notes) if (net / n / "tun_flags").exists()]
    _openvpn(host_root, found)
    _hwmon(host_root, found)
    ups_conf = _read(host_root, "/etc/nut/ups.conf") or ""
    found.ups = re.findall(r"^\s*\[([^\]]+)\]", ups_conf, re.M)
    if host_root == Path("/"):
        try:
            with socket.create_connection(("127.0.0.1", 3493), timeout=0.3):
                found.upsd_listening = True
        except OSError:
            pass
    for tool in TOOLS:
        for folder in BIN_DIRS:
            if host_path(host_root, f"{folder}/{tool}").exists():
                found.tools[tool] = f"{folder}/{tool}"
                break
    found.frr = "vtysh" in found.tools or host_path(host_root, "/etc/frr/frr.conf").exists()
    for line in (_read(host_root, "/proc/mounts") or "").splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0].startswith("/dev/") and parts[2] not in ("squashfs", "iso9660"):
            found.filesystems.append((parts[1], parts[2], "ro" in parts[3].split(",")))
    return found
