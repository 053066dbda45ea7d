"""What the FRR collector knows of each BGP session: its state, typed."""

from __future__ import annotations

from collectors.state import Record, State


class Peer(Record):
    vrf: str
    afi: str  # ipv4Unicast, ipv6Unicast, l2VpnEvpn ...
    peer: str  # an address, or an interface name for an unnumbered peer
    interface: bool = False  # unnumbered
    remote_as: str = ""
    state: str = ""  # FRR's FSM state: Established, Active, Connect, Idle, "Idle (Admin)" ...
    up: bool = False  # Established
    admin_down: bool = False  # shut down on purpose
    uptime_seconds: float | None = None  # only while Established
    prefixes_received: int | None = None
    prefixes_sent: int | None = None
    flaps: int | None = None  # connectionsDropped
    description: str | None = None
    hostname: str | None = None
    last_reset: str | None = None  # why the session last went down, in FRR's words


class FrrState(State):
    peers: list[Peer] = []
