"""The network half of `rackpulse demo`: BGP peers (one flapping), a VPN whose tun drops
rise, a six-link bond with a flapping slave, and a switch with a bouncing port.

Everything is derived from the story time ``t`` so the pages move while you watch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from collectors.network.snmp.collector import IF_TABLE, IF_X_TABLE
from collectors.scenes import atomic_write
from collectors.snmpwire import SnmpTarget


def bgp_summary(t: float) -> dict[str, Any]:
    """What `show bgp vrf all summary json` prints on a Ceph node with two unnumbered uplinks."""
    flap_up = int(t // 30) % 2 == 0  # the third session bounces every 30 s
    flaps = int(t // 60)

    def peer(asn: int, up: bool, uptime: float, pfx: int, desc: str, iface: bool, dropped: int) -> dict[str, Any]:
        p = {"remoteAs": asn, "state": "Established" if up else "Active", "peerState": "OK",
             "peerUptimeMsec": int(uptime * 1000), "pfxRcd": pfx if up else 0, "pfxSnt": 4 if up else 0,
             "connectionsEstablished": dropped + (1 if up else 0), "connectionsDropped": dropped,
             "desc": desc, "idType": "interface" if iface else "ipv4"}
        if up:
            p["hostname"] = desc.split()[0]
        return p

    v6 = {
        "swp1": peer(65100, True, 86400 * 12 + t, 42, "tor-a uplink", True, 0),
        "swp2": peer(65100, True, 86400 * 12 + t, 42, "tor-b uplink", True, 0),
    }
    v4 = {
        "10.0.250.1": peer(65200, flap_up, t % 30, 12, "edge-router 3G failover", False, flaps),
        "10.0.250.9": {**peer(65300, False, 0, 0, "old-isp (shut down)", False, 0), "state": "Idle (Admin)",
                       "peerState": "Admin"},
    }
    return {"default": {"ipv4Unicast": {"vrfName": "default", "peers": v4},
                        "ipv6Unicast": {"vrfName": "default", "peers": v6}}}


def bgp_neighbors(t: float) -> dict[str, Any]:
    reason = "Peer closed the session" if int(t // 30) % 2 else "Waiting for NHT"
    return {"default": {"vrfName": "default", "10.0.250.1": {"lastResetDueTo": reason},
                        "swp1": {"lastResetDueTo": "Waiting for peer OPEN"}}}


def write_network(root: Path, t: float) -> None:
    """The story's clock for the simulated switch (make_walker); the files the bonding and
    OpenVPN collectors read are their own scenes (collectors/network/*/demo.py)."""
    atomic_write(root / "demo-network.json", json.dumps({"t": t}))


def make_walker(root: Path):
    """A simulated 10-port switch answering the SNMP collector; port 7 bounces (autoneg mismatch)."""

    async def walk(target: SnmpTarget) -> tuple[int, list[tuple[str, Any]]]:
        t = json.loads((root / "demo-network.json").read_text())["t"]
        uptime = int(t * 100) + 8_640_000
        out: list[tuple[str, Any]] = []
        for i in range(1, 11):
            bouncing = i == 7
            oper = (1 if int(t // 7) % 2 == 0 else 2) if bouncing else (2 if i == 10 else 1)
            last_change = int((t // 7) * 700) if bouncing else 100
            rx = (i * 10**9 + int(t) * i * 1_000_000) % 2**64
            out += [(f"{IF_TABLE}.2.{i}", f"port{i}"), (f"{IF_TABLE}.7.{i}", 1 if i != 10 else 2),
                    (f"{IF_TABLE}.8.{i}", oper), (f"{IF_TABLE}.9.{i}", last_change),
                    (f"{IF_TABLE}.14.{i}", int(t // 3) if bouncing else 0), (f"{IF_TABLE}.20.{i}", 0),
                    (f"{IF_X_TABLE}.1.{i}", f"ge-0/0/{i}"), (f"{IF_X_TABLE}.6.{i}", rx),
                    (f"{IF_X_TABLE}.10.{i}", rx // 2), (f"{IF_X_TABLE}.15.{i}", 1000),
                    (f"{IF_X_TABLE}.18.{i}", "fibre to nas" if bouncing else "")]
        return uptime, out

    return walk
