"""Linux bonding: /proc/net/bonding/<bond>, one file per bond.

Format source: drivers/net/bonding/bond_procfs.c (``bond_info_show_master`` and
``bond_info_show_slave``); mode names from ``bond_mode_names`` in bond_options.c.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from collectors.base import (
    Collector,
    CollectorError,
    CollectResult,
    Entity,
    MetricSpec,
    NoData,
    ParseError,
    Runner,
    Sample,
    host_path,
    read_text,
)
from collectors.context import HostContext
from collectors.network.bonding.state import Bond as BondView
from collectors.network.bonding.state import BondingState
from collectors.network.bonding.state import Slave as SlaveView

MODES = {
    "load balancing (round-robin)": "balance-rr",
    "fault-tolerance (active-backup)": "active-backup",
    "load balancing (xor)": "balance-xor",
    "fault-tolerance (broadcast)": "broadcast",
    "IEEE 802.3ad Dynamic link aggregation": "802.3ad",
    "transmit load balancing": "balance-tlb",
    "adaptive load balancing": "balance-alb",
}
_KV = re.compile(r"^(?P<key>[^:]+?):\s*(?P<value>.*)$")


@dataclass(frozen=True, slots=True)
class Slave:
    name: str
    mii_up: bool
    speed_mbps: int | None
    duplex: str | None
    link_failures: int
    perm_hwaddr: str | None
    aggregator_id: int | None = None
    fields: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Bond:
    mode: str  # short name: balance-rr, active-backup, ..., or the kernel's text if unknown
    mode_text: str
    mii_up: bool
    hash_policy: str | None
    active_slave: str | None
    mii_interval_ms: int | None
    slaves: tuple[Slave, ...]
    fields: dict[str, str] = field(default_factory=dict)


def parse_bonding(text: str) -> Bond:
    """Parse one /proc/net/bonding/<bond> file. Raises ParseError quoting the bad line."""
    if "\x00" in text:
        raise ParseError("not a bonding status file: contains NUL bytes")
    lines = text.splitlines()
    first = next((ln for ln in lines if ln.strip()), "")
    # Ethernet Channel Bonding Driver: v3.7.1 (April 27, 2011)
    if not first.startswith("Ethernet Channel Bonding Driver"):
        raise ParseError(f"not a bonding status file: first line {first[:100]!r}")
    master: dict[str, str] = {}
    slaves: list[dict[str, str]] = []
    current = master
    prefix = ""
    for line in lines[lines.index(first) + 1:]:
        if not line.strip():
            prefix = ""
            continue
        if line.startswith(("\t", " ")) and prefix:
            # "details actor lacp pdu:" sub-blocks: indented "    system priority: 65535"
            m = _KV.match(line.strip())
            if m:
                current[f"{prefix} {m['key'].strip()}"] = m["value"].strip()
            continue
        m = _KV.match(line)
        if not m:
            if line.strip() == "802.3ad info":  # a heading; "Active Aggregator Info:" reads as a key
                continue
            raise ParseError(f"unrecognised line in bonding status: {line.strip()!r}")
        key, value = m["key"].strip(), m["value"].strip()
        if key == "Slave Interface":
            current = {"Slave Interface": value}
            slaves.append(current)
            prefix = ""
            continue
        if not value and key.startswith("details"):
            prefix = key
            continue
        current[key] = value
    mode_text = master.get("Bonding Mode")
    if mode_text is None:
        raise ParseError("bonding status has no 'Bonding Mode' line (truncated file?)")
    base_mode = mode_text.split(" (fail_over_mac")[0].strip()
    return Bond(
        mode=MODES.get(base_mode, base_mode),
        mode_text=mode_text,
        mii_up=master.get("MII Status") == "up",
        hash_policy=master.get("Transmit Hash Policy"),
        active_slave=_none(master.get("Currently Active Slave")),
        mii_interval_ms=_int(master.get("MII Polling Interval (ms)")),
        slaves=tuple(_slave(s) for s in slaves),
        fields=master,
    )


def _slave(f: dict[str, str]) -> Slave:
    name = f["Slave Interface"]
    if "MII Status" not in f:
        raise ParseError(f"slave {name}: no 'MII Status' line (truncated file?)")
    failures = f.get("Link Failure Count", "0")
    if not failures.isdigit():
        raise ParseError(f"slave {name}: bad link failure count: {failures!r}")
    speed = f.get("Speed", "")
    m = re.match(r"(\d+) Mbps", speed)
    return Slave(
        name=name,
        mii_up=f["MII Status"] == "up",
        speed_mbps=int(m[1]) if m else None,
        duplex=_none(f.get("Duplex")),
        link_failures=int(failures),
        perm_hwaddr=f.get("Permanent HW addr"),
        aggregator_id=_int(f.get("Aggregator ID")),
        fields=f,
    )


def _none(v: str | None) -> str | None:
    return None if v in (None, "", "None", "none", "Unknown") else v


def _int(v: str | None) -> int | None:
    return int(v) if v is not None and v.strip().isdigit() else None


def bond_hints(bond: Bond) -> list[str]:
    """Plain-language advice the page shows next to a bond."""
    hints = []
    speeds = {s.speed_mbps for s in bond.slaves if s.mii_up and s.speed_mbps}
    if bond.mode == "balance-rr" and len([s for s in bond.slaves if s.mii_up]) > 1:
        why = "links of unequal speed" if len(speeds) > 1 else "several links"
        hints.append(
            f"balance-rr sprays the packets of every TCP flow across {why}: they arrive out of order, TCP "
            "takes that as loss and slows down, so one flow gets less than one link. balance-xor or 802.3ad "
            "with xmit_hash_policy=layer3+4 keeps each flow on one link."
        )
    if bond.mode == "active-backup" and bond.mii_interval_ms == 0 and "ARP Polling Interval (ms)" not in bond.fields:
        hints.append("No link monitoring (miimon=0 and no arp_interval): a dead slave is never noticed.")
    return hints


class BondingCollector(Collector):
    name: ClassVar[str] = "bonding"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_bond_slaves": MetricSpec("Number of slaves in the bond."),
        "rackpulse_bond_slaves_up": MetricSpec("Number of slaves whose MII status is up."),
        "rackpulse_bond_up": MetricSpec("1 if the bond's MII status is up.", states=("down", "up")),
        "rackpulse_bond_info": MetricSpec("Bond mode, hash policy and active slave as labels; value 1.", store=False),
        "rackpulse_bond_slave_up": MetricSpec("1 if the slave's MII status is up.", states=("down", "up")),
        "rackpulse_bond_slave_link_failures_total": MetricSpec("Link failures the kernel counted for the slave.",
                                                               "counter"),
        "rackpulse_bond_slave_speed_bytes": MetricSpec("Slave link speed in bytes per second."),
    }

    def __init__(self, host_root: Path, bonds: list[str] | None = None) -> None:
        self.host_root = host_root
        self.bonds = bonds or []
        self._failures: dict[tuple[str, str], int] = {}

    def collect(self) -> CollectResult:
        base = host_path(self.host_root, "/proc/net/bonding")
        try:
            names = sorted(self.bonds or os.listdir(base))
        except FileNotFoundError:
            raise NoData(f"{base} does not exist (no bonding driver)") from None
        except OSError as exc:
            raise CollectorError(f"cannot list {base}: {exc}") from None
        if not names:
            raise NoData("no bonds configured on this host")
        result = CollectResult()
        bonds = []
        for name in names:
            try:
                bond = parse_bonding(read_text(base / name))
            except (ParseError, OSError) as exc:
                result.warnings.append(f"{base / name}: {exc}")
                continue
            bonds.append(self._view(name, bond, result))
        if not bonds and result.warnings:
            raise CollectorError("; ".join(result.warnings))
        result.state = BondingState(bonds=bonds)
        return result

    def _view(self, name: str, bond: Bond, result: CollectResult) -> BondView:
        up = [s for s in bond.slaves if s.mii_up]
        s = result.samples
        s += [Sample.of("rackpulse_bond_slaves", len(bond.slaves), bond=name),
              Sample.of("rackpulse_bond_slaves_up", len(up), bond=name),
              Sample.of("rackpulse_bond_up", 1 if bond.mii_up else 0, bond=name),
              Sample.of("rackpulse_bond_info", 1, bond=name, mode=bond.mode, hash_policy=bond.hash_policy or "",
                        active_slave=bond.active_slave or "")]
        slaves = []
        for sl in bond.slaves:
            prev = self._failures.get((name, sl.name))
            self._failures[(name, sl.name)] = sl.link_failures
            s.append(Sample.of("rackpulse_bond_slave_up", 1 if sl.mii_up else 0, bond=name, slave=sl.name))
            s.append(Sample.of("rackpulse_bond_slave_link_failures_total", sl.link_failures, bond=name, slave=sl.name))
            if sl.speed_mbps:
                s.append(Sample.of("rackpulse_bond_slave_speed_bytes", sl.speed_mbps * 125_000, bond=name,
                                   slave=sl.name))
            slaves.append(SlaveView(
                name=sl.name, up=sl.mii_up, speed_mbps=sl.speed_mbps, duplex=sl.duplex, link_failures=sl.link_failures,
                new_failures=sl.link_failures - prev if prev is not None and sl.link_failures >= prev else 0,
                perm_hwaddr=sl.perm_hwaddr, aggregator_id=sl.aggregator_id, active=sl.name == bond.active_slave))
            result.entities.append(Entity("bond_slave", f"{name}/{sl.name}", {
                "up": sl.mii_up, "speed_mbps": sl.speed_mbps, "aggregator_id": sl.aggregator_id}))
        result.entities.append(Entity("bond", name, {"mode": bond.mode, "up": bond.mii_up,
                                                     "active_slave": bond.active_slave}))
        return BondView(name=name, mode=bond.mode, mode_text=bond.mode_text, up=bond.mii_up,
                    hash_policy=bond.hash_policy, active_slave=bond.active_slave, slaves=slaves,
                    slaves_up=len(up), hints=bond_hints(bond))


# -- plug-in -----------------------------------------------------------------------------

def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.bonding]."""
    return BondingCollector(host.root, c.bonds)
