"""The network half of `rackpulse demo`: the switch with a bouncing port (the BGP peers, one
flapping, are printed by the vtysh stand-in in app/demo/tools.py).

Everything is derived from the story time ``t`` so the pages move while you watch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from collectors.network.snmp.collector import IF_TABLE, IF_X_TABLE
from collectors.scenes import atomic_write
from collectors.snmpwire import SnmpTarget


def write_network(root: Path, t: float) -> None:
    """The story's clock for the simulated switch (make_walker); the files the bonding and
    OpenVPN collectors read are their own scenes (collectors/network/*/demo.py)."""
    atomic_write(root / "demo-network.json", json.dumps({"t": t}))


BOUNCE = (20.0, 80.0)  # story seconds in which port 7 bounces


def make_walker(root: Path):
    """A simulated 10-port switch answering the SNMP collector; port 7 bounces (autoneg mismatch)
    from the story's 20th second to its 80th. Before it the port stands as the last loop left it
    (its last change the same), so each loop opens calm: no flap is counted across the loop's seam."""

    async def walk(target: SnmpTarget) -> tuple[int, list[tuple[str, Any]]]:
        t = json.loads((root / "demo-network.json").read_text())["t"]
        uptime = int(t * 100) + 8_640_000
        out: list[tuple[str, Any]] = []
        for i in range(1, 11):
            bouncing = i == 7 and BOUNCE[0] <= t < BOUNCE[1]
            oper = (1 if int(t // 7) % 2 == 0 else 2) if bouncing else (2 if i == 10 else 1)
            phase = t if bouncing else BOUNCE[1] - 1  # the change it last made, until it bounces again
            last_change = int((phase // 7) * 700) if i == 7 else 100
            rx = (i * 10**9 + int(t) * i * 1_000_000) % 2**64
            out += [(f"{IF_TABLE}.2.{i}", f"port{i}"), (f"{IF_TABLE}.7.{i}", 1 if i != 10 else 2),
                    (f"{IF_TABLE}.8.{i}", oper), (f"{IF_TABLE}.9.{i}", last_change),
                    (f"{IF_TABLE}.14.{i}", int(min(t, BOUNCE[1]) // 3) if i == 7 else 0), (f"{IF_TABLE}.20.{i}", 0),
                    (f"{IF_X_TABLE}.1.{i}", f"ge-0/0/{i}"), (f"{IF_X_TABLE}.6.{i}", rx),
                    (f"{IF_X_TABLE}.10.{i}", rx // 2), (f"{IF_X_TABLE}.15.{i}", 1000),
                    (f"{IF_X_TABLE}.18.{i}", "fibre to nas" if i == 7 else "")]
        return uptime, out

    return walk
