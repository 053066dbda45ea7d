"""The starter config as TOML text: what was found, each part commented with what it is and
what to change. Only keys whose value differs from the default are set; the rest is said."""

from __future__ import annotations

import time
from pathlib import Path

import tomli_w

from app.logsafe import escape
from app.starter.discover import Found


def q(value: str) -> str:
    """A TOML string, as a TOML writer quotes it: a name the host chose (an interface, a mount
    point, a serial) stays one value, whatever quotes, brackets or newlines it holds."""
    return tomli_w.dumps({"v": value}).removeprefix("v = ").rstrip("\n")


def _disk_words(d: object) -> str:
    dev = getattr(d, "device", "")
    model = getattr(d, "model", None) or "model unknown"
    serial = getattr(d, "serial", None) or getattr(d, "wwn", None) or "no serial"
    return f"now {dev}: {model}, serial {serial}"


def render(found: Found, host_root: Path, now: float | None = None) -> str:
    day = time.strftime("%Y-%m-%d", time.localtime(now))
    out = [
        f"# rackpulse configuration, written by `rackpulse init` on {day} from what {found.host} has.",
        "# Rename the bay labels to where each disk really sits, delete what you do not want, then",
        "# `rackpulse check-config` and `rackpulse serve`. Every key with its default and meaning:",
        "# rackpulse.example.toml.",
        "",
        f"host = {q(found.host)}",
    ]
    if host_root != Path("/"):
        out.append(f"host_root = {q(str(host_root))}")
    out += ["", "[web]", "## Only this machine can open the pages; another address needs a password",
            "## (`rackpulse hash-password`).", '# listen = "127.0.0.1"', "# port = 9842", "",
            "[storage]", '# url = "sqlite:///rackpulse.db"', ""]
    if found.notes:
        out += [f"## could not read: {n}" for n in found.notes] + [""]
    out += _disks(found)
    out += _network(found)
    out += _home(found)
    out += _storage_tools(found)
    ro = [m for m, _, readonly in found.filesystems if readonly]
    out += ["[collectors.host]",
            f"## Filesystems found: {', '.join(f'{m} ({t})' for m, t, _ in found.filesystems) or 'none'}."]
    if ro:
        out += ["## Read-only now; list those that are read-only on purpose, or each one raises an alert:",
                f"# expect_readonly = [{', '.join(q(m) for m in ro)}]"]
    out.append("")
    # Each item is one line. Names the host chose (an interface, a model, a note) stand in comments
    # as they are: a newline in one would start a line of config ("tun0\n[collectors.ceph]\nceph
    # = [\"/bin/sh\", ...]" ran as root on the next `collect`). Control characters are shown
    # escaped; values are JSON-quoted by q() already, which has none.
    return "\n".join(escape(line) for line in out)


def _disks(found: Found) -> list[str]:
    out = ["[collectors.mdraid]"]
    if found.arrays:
        for name, level, members in found.arrays:
            out.append(f"## {name}: {level or 'level unknown'}, members {' '.join(members) or 'none'}")
    else:
        out.append("## no md arrays on this host now (the collector says \"no data\" until there are)")
    out += ["", "[collectors.smart]", f"## {len(found.disks)} disks found; smartctl never wakes a sleeping one.", ""]
    if found.bays:
        out += ["## Bays: one per controller port or enclosure slot a disk sits in now. Rename each label",
                '## to where it is ("shelf 1, bay 3"): the label follows the port, so a replacement disk',
                "## lands in the same bay. A disk on no port the kernel names is matched by serial below."]
    for b in found.bays:
        out += ["[[disks.bays]]", f"label = {q(b.label)}"]
        out.append(f"path = {q(b.path)}" if b.path else f"enclosure_slot = {q(b.enclosure_slot or '')}")
        if b.disk is not None:
            out[-1] += f"  # {_disk_words(b.disk)}"
    placed = {id(b.disk) for b in found.bays}
    for d in found.disks:
        if id(d) not in placed and d.serial:
            out += ["[[disks.bays]]", f"label = {q('bay of ' + d.device)}",
                    f"serial = {q(d.serial)}  # {_disk_words(d)}"]
    return [*out, ""]


def _network(found: Found) -> list[str]:
    out = []
    if found.bonds:
        out += ["[collectors.bonding]", f"bonds = [{', '.join(q(b) for b in found.bonds)}]", ""]
    if found.frr:
        out += ["[collectors.frr]", "## FRR is installed: its BGP sessions per VRF and address family.", "enabled = true",
                ""]
    if found.tunnels or found.tun_devices:
        out += ["[collectors.openvpn]", f"## tun/tap devices now: {', '.join(found.tun_devices) or 'none'}"]
        for t in found.tunnels:
            out += ["[[collectors.openvpn.instances]]", f"name = {q(t.name)}"]
            if t.status_file:
                out.append(f"status_file = {q(t.status_file)}")
            if t.management:
                out.append(f"management = {q(t.management)}")
            if t.interface:
                out.append(f"interface = {q(t.interface)}")
            if t.config_file:
                out.append(f"config_file = {q(t.config_file)}")
            if not t.status_file and not t.management:
                out.append("## no status file or management interface in its config: add `status <file> 10` there")
        out.append("")
    return out


def _home(found: Found) -> list[str]:
    out = []
    if found.rails or found.fans:
        out += ["[collectors.hwmon]", "## Every sensor shows on the Power page anyway; rails and fans named here get",
                "## their own alerts. Set min/max from your supply's tolerance (suggested: ±5% of now)."]
        for chip, sensor, label, volts in found.rails:
            out += ["[[collectors.hwmon.rails]]", f"name = {q(label)}", f"chip = {q(chip)}", f"sensor = {q(sensor)}",
                    f"# min = {volts * 0.95:.2f}  # now {volts:.3f} V", f"# max = {volts * 1.05:.2f}"]
        for chip, sensor, label, rpm in found.fans:
            out += ["[[collectors.hwmon.fans]]", f"name = {q(label)}", f"chip = {q(chip)}", f"sensor = {q(sensor)}",
                    f"# min_rpm = {max(rpm * 0.5, 100):.0f}  # now {rpm:.0f} RPM"]
        out.append("")
    if found.ups or found.upsd_listening:
        out += ["[collectors.nut]", "[[collectors.nut.upsd]]", 'host = "127.0.0.1"', "port = 3493"]
        if found.ups:
            out.append(f"ups = [{', '.join(q(u) for u in found.ups)}]  # from /etc/nut/ups.conf")
        out.append("")
    return out


def _storage_tools(found: Found) -> list[str]:
    seen = [f"{tool} ({where})" for tool, where in found.tools.items()]
    if not seen:
        return []
    return ["## Tools found: " + ", ".join(seen) + ".",
            "## ZFS, btrfs, MegaRAID/PERC and Ceph collectors are on by default and use what is installed;",
            "## storcli = [\"perccli64\"] under [collectors.megaraid] for a PERC.", ""]
