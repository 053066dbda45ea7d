"""What is wrong with VPN tunnels, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from typing import Any

from collectors.findings import BAD, WARN, ChartSpec, Finding, Judging, RuleSpec, Tile, items

RULES = (RuleSpec("vpn_down", "critical", 120, 12), RuleSpec("vpn_tunnel_drops", "warning", 300))


def findings(state: dict[str, Any], judging: Judging) -> list[Finding]:
    out = []
    for v in items(state, "instances"):
        name = v["name"]
        if not v["up"]:
            out.append(Finding(BAD, f"VPN {name} down: {v.get('error')}", "vpn_down", name, {"instance": name}))
        elif v.get("drops_delta"):
            out.append(Finding(WARN, f"VPN {name}: {v['drops_delta']} packets dropped on {v.get('interface')} since "
                               "the last poll", "vpn_tunnel_drops", name,
                               {"instance": name, "interface": v.get("interface")}))
    return out


def all_clear(state: dict[str, Any], judging: Judging) -> str | None:
    vpns = items(state, "instances")
    return f"{sum(len(v['clients']) for v in vpns)} clients connected" if vpns else None


TILE = Tile("VPN", "/network#vpn", all_clear)

CHARTS: dict[str, ChartSpec] = {"vpn_instance": (("instance",), [
    ("Clients", "rackpulse_openvpn_clients", {"instance": 0}),
    ("Tun packets dropped on transmit", "rackpulse_interface_transmit_dropped_total",
     {"interface": "attr:interface"})])}
