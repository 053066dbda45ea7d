"""What is wrong with BGP sessions, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from typing import Any

from collectors.findings import BAD, OK, WARN, ChartSpec, Finding, Judging, RuleSpec, Tile, items

RULES = (RuleSpec("bgp_peer_down", "critical", 60, 12), RuleSpec("bgp_all_peers_down", "critical", 0, 4))


def peer_level(p: dict[str, Any]) -> str:
    if p["admin_down"]:
        return OK  # shut down on purpose: shown, not alarming
    return OK if p["up"] else BAD


def findings(state: dict[str, Any], judging: Judging) -> list[Finding]:
    peers = items(state, "peers")
    live = [p for p in peers if not p["admin_down"]]
    all_down = bool(live) and not any(p["up"] for p in live)
    out = []
    for p in live:
        if not p["up"]:
            text = (f"BGP peer {p['peer']} ({p.get('description') or p['remote_as']}) {p['state']}"
                    + (f", last reset: {p['last_reset']}" if p.get("last_reset") else ""))
            out.append(Finding(BAD if all_down else WARN, text, "bgp_peer_down", f"{p['vrf']}/{p['afi']}/{p['peer']}",
                               {"peer": p["peer"], "vrf": p["vrf"], "afi": p["afi"], "peer_as": p["remote_as"]}))
        elif (p.get("uptime_seconds") or 1e9) < 600 and p.get("flaps"):
            out.append(Finding(WARN, f"BGP peer {p['peer']} flapped {p['flaps']}x, up for "
                               f"{p['uptime_seconds']:.0f} s"))
    if all_down:
        out.append(Finding(BAD, f"all {len(live)} BGP sessions of {judging.host} are down", "bgp_all_peers_down",
                           judging.host))
    return out


def all_clear(state: dict[str, Any], judging: Judging) -> str | None:
    peers = items(state, "peers")
    return f"{len(peers)} sessions Established" if peers else None


TILE = Tile("BGP", "/network#bgp", all_clear)

CHARTS: dict[str, ChartSpec] = {"bgp_peer": (("vrf", "afi", "peer"), [
    ("Established (1 = up)", "rackpulse_bgp_peer_up", {"vrf": 0, "afi": 1, "peer": 2}),
    ("Prefixes received", "rackpulse_bgp_peer_prefixes_received", {"vrf": 0, "afi": 1, "peer": 2})])}
