"""What is wrong with VPN tunnels, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from collectors.findings import BAD, WARN, ChartSpec, Finding, Judging, RuleSpec, Tile
from collectors.network.openvpn.state import OpenvpnState

RULES = (
    RuleSpec("vpn_down", "critical", 120, 12, title="VPN down"),
    RuleSpec("vpn_tunnel_drops", "warning", 300, title="VPN tunnel dropping packets"),
)


def findings(state: OpenvpnState, judging: Judging) -> list[Finding]:
    out = []
    for v in state.instances:
        if not v.up:
            out.append(Finding(BAD, f"VPN {v.name} down: {v.error}", "vpn_down", v.name, {"instance": v.name}))
        elif v.drops_delta and v.drops_delta > 0:
            out.append(Finding(WARN, f"VPN {v.name}: {v.drops_delta} packets dropped on {v.interface} since "
                               "the last poll", "vpn_tunnel_drops", v.name,
                               {"instance": v.name, "interface": v.interface}))
    return out


def all_clear(state: OpenvpnState, judging: Judging) -> str | None:
    vpns = state.instances
    return f"{sum(len(v.clients) for v in vpns)} clients connected" if vpns else None


TILE = Tile("VPN", "/network#vpn", all_clear)

CHARTS: dict[str, ChartSpec] = {"vpn_instance": (("instance",), [
    ("Clients", "rackpulse_openvpn_clients", {"instance": 0}),
    ("Tun packets dropped on transmit", "rackpulse_interface_transmit_dropped_total",
     {"interface": "attr:interface"})])}
