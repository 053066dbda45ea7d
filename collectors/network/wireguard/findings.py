"""What is wrong with WireGuard peers, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from collections.abc import Sequence

from collectors.findings import WARN, ChartSpec, Finding, Judging, RuleSpec, Tile, about, level_of
from collectors.network.wireguard.state import WgPeerView, WireguardState
from collectors.plugin import View

RULES = (
    RuleSpec("wireguard_handshake_stale", "warning", 0, title="WireGuard peer silent"),
)


def span(seconds: float) -> str:
    s = int(seconds)
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60} min"
    return f"{s // 60} min {s % 60} s" if s >= 60 else f"{s} s"


def who(p: WgPeerView) -> str:
    return f"{p.name} ({p.key[:8]}…)" if p.name else p.key


def peer_findings(p: WgPeerView, stale_after: float | None) -> list[Finding]:
    if not p.stale:
        return []
    when = "never" if p.handshake_age is None else f"{span(p.handshake_age)} ago"
    limit = "" if stale_after is None else f", stale after {span(stale_after)}"
    return [Finding(WARN, f"WireGuard peer {who(p)} on {p.interface}: last handshake {when}{limit}",
                    "wireguard_handshake_stale", f"{p.interface}/{p.name or p.key}",
                    {"interface": p.interface, "peer": p.name or p.key, "endpoint": p.endpoint})]


def findings(state: WireguardState, judging: Judging) -> list[Finding]:
    return [f for p in state.peers for f in peer_findings(p, state.stale_after)]


def all_clear(state: WireguardState, judging: Judging) -> str | None:
    if not state.peers:
        return None
    fresh = sum(1 for p in state.peers if p.handshake_age is not None and not p.stale)
    return f"{fresh} of {len(state.peers)} peers with a recent handshake"


def view(state: WireguardState, found: Sequence[Finding]) -> View:
    return {"peers": [(p, level_of(about(found, interface=p.interface, peer=p.name or p.key))) for p in state.peers]}


TILE = Tile("WireGuard", "/network", all_clear)
CHARTS: dict[str, ChartSpec] = {}
