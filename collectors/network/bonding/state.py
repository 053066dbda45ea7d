"""What the bonding collector knows of each bond and its slaves: its state, typed."""

from __future__ import annotations

from collectors.state import Record, State


class Slave(Record):
    name: str
    up: bool = False  # MII status
    speed_mbps: int | None = None
    duplex: str | None = None
    link_failures: int | None = None  # the kernel's count since the bond came up
    new_failures: int | None = None  # since the previous poll
    perm_hwaddr: str | None = None
    aggregator_id: int | None = None
    active: bool = False  # the active slave of an active-backup bond


class Bond(Record):
    name: str
    mode: str = ""  # balance-rr, active-backup, 802.3ad ...
    mode_text: str = ""  # as the kernel says it
    up: bool = False
    hash_policy: str | None = None
    active_slave: str | None = None
    slaves: list[Slave] = []
    slaves_up: int | None = None
    hints: list[str] = []  # what to change, in words


class BondingState(State):
    bonds: list[Bond] = []
