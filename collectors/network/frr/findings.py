"""What is wrong with BGP sessions, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from collections.abc import Sequence

from collectors.findings import BAD, WARN, ChartSpec, Finding, Judging, RuleSpec, Tile, about, level_of
from collectors.network.frr.state import FrrState, Peer
from collectors.plugin import View

RULES = (RuleSpec("bgp_peer_down", "critical", 60, 12), RuleSpec("bgp_all_peers_down", "critical", 0, 4))
# BGP's finite state machine (RFC 4271, FRR's words for it): only Established is up; Active
# means "trying to connect", which a person reads as down.
STATE_WORDS = {"Established": "up", "Idle": "down", "Connect": "down", "Active": "down", "OpenSent": "down",
               "OpenConfirm": "down", "Clearing": "down", "Deleted": "down", "Idle (Admin)": "shut down",
               "Idle (PfxCt)": "down, prefix limit reached", "Idle (NoNeg)": "down, no common capability"}


def labels(p: Peer) -> dict[str, str]:
    return {"peer": p.peer, "vrf": p.vrf, "afi": p.afi, "peer_as": p.remote_as}


def findings(state: FrrState, judging: Judging) -> list[Finding]:
    live = [p for p in state.peers if not p.admin_down]  # one shut down on purpose is shown, not alarming
    all_down = bool(live) and not any(p.up for p in live)
    out = []
    for p in live:
        if not p.up:
            text = (f"BGP peer {p.peer} ({p.description or p.remote_as}) down ({p.state})"
                    + (f", last reset: {p.last_reset}" if p.last_reset else ""))
            out.append(Finding(BAD if all_down else WARN, text, "bgp_peer_down", f"{p.vrf}/{p.afi}/{p.peer}",
                               labels(p)))
        elif p.uptime_seconds is not None and p.uptime_seconds < 600 and p.flaps:
            out.append(Finding(WARN, f"BGP peer {p.peer} up again for {p.uptime_seconds:.0f} s, after going down "
                                     f"{p.flaps} {'time' if p.flaps == 1 else 'times'}",
                               labels=labels(p)))
    if all_down:
        out.append(Finding(BAD, f"all {len(live)} BGP sessions of {judging.host} are down", "bgp_all_peers_down",
                           judging.host))
    return out


def all_clear(state: FrrState, judging: Judging) -> str | None:
    return f"{len(state.peers)} sessions up" if state.peers else None


def view(state: FrrState, found: Sequence[Finding]) -> View:
    """Each session with how it stands: the level of the findings about it."""
    return {"peers": [(p, level_of(about(found, **labels(p)))) for p in state.peers]}


TILE = Tile("BGP", "/network#bgp", all_clear)

CHARTS: dict[str, ChartSpec] = {"bgp_peer": (("vrf", "afi", "peer"), [
    ("Session", "rackpulse_bgp_peer_up", {"vrf": 0, "afi": 1, "peer": 2}),
    ("Prefixes received", "rackpulse_bgp_peer_prefixes_received", {"vrf": 0, "afi": 1, "peer": 2})])}
