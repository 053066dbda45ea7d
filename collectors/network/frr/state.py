"""What the FRR collector knows of each BGP session and BFD session: its state, typed."""

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
    prefixes_received: int | None = None  # FRR's pfxRcd: received and accepted by the inbound policy
    prefixes_sent: int | None = None
    # Before the inbound policy (Adj-RIB-In): known only with soft-reconfiguration inbound,
    # which keeps them; filtered = those minus the accepted ones.
    prefixes_adj_in: int | None = None
    prefixes_filtered: int | None = None
    prefix_limit: int | None = None  # neighbor ... maximum-prefix N
    # The most prefixes accepted within the drop window while the session stayed up.
    prefixes_peak: int | None = None
    flaps: int | None = None  # connectionsDropped
    description: str | None = None
    hostname: str | None = None
    last_reset: str | None = None  # why the session last went down, in FRR's words
    bfd: str | None = None  # the BFD session's status when BGP uses BFD for this peer ("up", "down" ...)


class BfdPeer(Record):
    key: str  # vrf/peer[%interface]
    peer: str
    local: str = ""
    vrf: str = "default"
    interface: str = ""
    multihop: bool = False
    status: str = ""  # up, down, init, shutdown, adm-down
    up: bool = False
    admin_down: bool = False
    uptime_seconds: float | None = None
    downtime_seconds: float | None = None
    diagnostic: str = ""
    remote_diagnostic: str = ""
    local_discriminator: int | None = None
    remote_discriminator: int | None = None
    flaps: int | None = None


class EvpnVni(Record):
    vni: int
    type: str = "L2"  # L2 or L3
    vxlan_interface: str = ""
    tenant_vrf: str = "default"
    local_vtep: str | None = None
    svi: str | None = None
    macs: int | None = None
    arp_nd: int | None = None
    remote_vteps: list[str] = []
    lost_vteps: list[str] = []  # there within vtep_memory, gone now
    up: bool = True  # its VXLAN interface up (an L3 VNI: zebra's state Up), and still listed
    gone: bool = False  # listed before, no longer
    state: str | None = None  # an L3 VNI's state in zebra's words


class FrrState(State):
    peers: list[Peer] = []
    bfd: list[BfdPeer] = []
    evpn: list[EvpnVni] = []
    # How the collector was told to judge prefixes ([collectors.frr] drop_ratio, drop_window,
    # limit_near), carried so the findings judge what the page shows. None: not known (a state
    # of another version), and the defaults apply.
    drop_ratio: float | None = 0.5
    drop_window: float | None = 600.0
    limit_near: float | None = 0.8
