"""[collectors.wireguard]: every WireGuard interface and peer, from `wg show all dump`."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator

from collectors.config import Argv, CollectorBase, Seconds, Strict, unique_names


class PeerName(Strict):
    # the peer's public key, as `wg show` prints it (44 characters of base64)
    key: Annotated[str, Field(pattern=r"^[A-Za-z0-9+/]{42,43}=?$")]
    name: Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[^\x00-\x1f]+$")]
    # A peer without a persistent keepalive (a phone) is watched only when it is expected to be
    # there: then a stale handshake is an alert too.
    expect: bool = False


class WireguardConfig(CollectorBase):
    # `wg` needs CAP_NET_ADMIN: ["sudo", "-n", "wg"] with a sudoers line for `wg show all dump`.
    wg: Argv = ["wg"]
    # A handshake older than this is stale (WireGuard re-handshakes every 2 minutes while traffic flows).
    stale_after: Seconds = 180.0
    peers: list[PeerName] = []

    @field_validator("peers")
    @classmethod
    def _unique(cls, peers: list[PeerName]) -> list[PeerName]:
        return unique_names(peers, "peer")
