"""The OpenVPN instances `rackpulse init` finds, as the starter config's [collectors.openvpn]:
from their config files ("status", "dev" and "management" lines), and status files nobody's
config names (an instance started by hand)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from collectors.starter import HostTree, q

CONFIG_DIRS = ("/etc/openvpn", "/etc/openvpn/server", "/etc/openvpn/client")
STATUS_DIRS = ("/run/openvpn", "/run/openvpn-server", "/run/openvpn-client", "/var/log/openvpn")


@dataclass
class Tunnel:
    name: str
    status_file: str | None = None
    config_file: str | None = None
    interface: str | None = None
    management: str | None = None


def tunnels(tree: HostTree) -> list[Tunnel]:
    found: list[Tunnel] = []
    named: set[str] = set()
    for folder in CONFIG_DIRS:
        for name in tree.listdir(folder):
            if not name.endswith(".conf"):
                continue
            conf = f"{folder}/{name}"
            t = Tunnel(name=name.removesuffix(".conf"), config_file=conf)
            for line in (tree.read(conf) or "").splitlines():
                words = line.split("#", 1)[0].split(";", 1)[0].split()
                if len(words) >= 2 and words[0] == "status":
                    t.status_file = words[1]
                elif len(words) >= 2 and words[0] == "dev":
                    t.interface = words[1] if words[1][-1:].isdigit() else None
                elif len(words) >= 3 and words[0] == "management" and words[2] != "unix":
                    t.management = f"{words[1]}:{words[2]}"
            if t.status_file:
                named.add(t.status_file)
            found.append(t)
    for folder in STATUS_DIRS:
        for name in tree.listdir(folder):
            path = f"{folder}/{name}"
            if "status" not in name and not name.endswith(".status") or path in named:
                continue
            stem = re.sub(r"\W+", "-", name.removesuffix(".log").removesuffix(".status").removeprefix("status-"))
            stem = stem.strip("-") or "vpn"
            # The instance whose config names no status file is most likely the one writing this.
            owner = next((t for t in found if t.name == stem and not t.status_file), None)
            if owner is not None:
                owner.status_file = path
            else:
                found.append(Tunnel(name=stem, status_file=path))
    return found


def starter(tree: HostTree) -> list[str]:
    tun = [n for n in tree.listdir("/sys/class/net") if tree.exists(f"/sys/class/net/{n}/tun_flags")]
    found = tunnels(tree)
    if not found and not tun:
        return []
    out = ["[collectors.openvpn]", f"## tun/tap devices now: {', '.join(tun) or 'none'}"]
    for t in found:
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
    return out
