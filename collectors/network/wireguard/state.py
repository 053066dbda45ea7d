"""What the WireGuard collector knows of each peer: its state, typed (never a private key)."""

from __future__ import annotations

from collectors.state import Record, State


class WgPeerView(Record):
    interface: str
    key: str  # the peer's public key
    name: str | None = None  # from [[collectors.wireguard.peers]]
    endpoint: str | None = None
    allowed_ips: list[str] = []
    handshake_age: float | None = None  # seconds since the latest handshake; None: never
    rx_bytes: int | None = None
    tx_bytes: int | None = None
    keepalive: int | None = None
    watched: bool = False  # a keepalive, or expect = true: a stale handshake is an alert
    stale: bool = False


class WireguardState(State):
    peers: list[WgPeerView] = []
    stale_after: float | None = None
