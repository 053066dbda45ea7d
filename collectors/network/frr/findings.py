"""What is wrong with BGP sessions, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from collections.abc import Sequence

from collectors.findings import BAD, WARN, ChartSpec, Finding, Judging, RuleSpec, Tile, about, level_of
from collectors.network.frr.state import BfdPeer, EvpnVni, FrrState, Peer
from collectors.plugin import View

RULES = (
    RuleSpec("bgp_peer_down", "critical", 60, 12, title="BGP peer down"),
    RuleSpec("bgp_all_peers_down", "critical", 0, 4, title="All BGP peers down"),
    RuleSpec("bgp_prefixes_dropped", "warning", 0, 12, title="BGP prefixes dropped"),
    RuleSpec("bgp_prefix_limit_near", "warning", 0, 24, title="BGP prefix limit near"),
    RuleSpec("bfd_peer_down", "critical", 0, 12, title="BFD peer down"),
    RuleSpec("evpn_vtep_lost", "critical", 60, 12, title="EVPN VTEP lost"),
    RuleSpec("evpn_vni_down", "critical", 60, 12, title="EVPN VNI down"),
)
# BGP's finite state machine (RFC 4271, FRR's words for it): only Established is up; Active
# means "trying to connect", which a person reads as down.
STATE_WORDS = {"Established": "up", "Idle": "down", "Connect": "down", "Active": "down", "OpenSent": "down",
               "OpenConfirm": "down", "Clearing": "down", "Deleted": "down", "Idle (Admin)": "shut down",
               "Idle (PfxCt)": "down, prefix limit reached", "Idle (NoNeg)": "down, no common capability"}


# FRR's address-family keys (bgpd's `show bgp vrf all summary json`) as a person says them.
AFI_WORDS = {"ipv4Unicast": "IPv4 unicast", "ipv6Unicast": "IPv6 unicast", "ipv4Multicast": "IPv4 multicast",
             "ipv6Multicast": "IPv6 multicast", "ipv4Vpn": "IPv4 VPN", "ipv6Vpn": "IPv6 VPN",
             "ipv4LabeledUnicast": "IPv4 labeled unicast", "ipv6LabeledUnicast": "IPv6 labeled unicast",
             "ipv4Flowspec": "IPv4 flowspec", "ipv6Flowspec": "IPv6 flowspec", "l2VpnEvpn": "L2VPN EVPN"}


def afi_words(afi: str) -> str:
    return AFI_WORDS.get(afi, afi)


def labels(p: Peer) -> dict[str, str]:
    return {"peer": p.peer, "vrf": p.vrf, "afi": p.afi, "peer_as": p.remote_as}


def findings(state: FrrState, judging: Judging) -> list[Finding]:
    live = [p for p in state.peers if not p.admin_down]  # one shut down on purpose is shown, not alarming
    all_down = bool(live) and not any(p.up for p in live)
    out = []
    drop_ratio = state.drop_ratio if state.drop_ratio is not None else 0.5
    drop_window = state.drop_window if state.drop_window is not None else 600.0
    limit_near = state.limit_near if state.limit_near is not None else 0.8
    for p in live:
        subject = f"{p.vrf}/{p.afi}/{p.peer}"
        if not p.up:
            # The address family named: a peer down in IPv4 and IPv6 unicast is two lines of one
            # notification, and they must not read the same.
            text = (f"BGP peer {p.peer} ({p.description or p.remote_as}) {afi_words(p.afi)} down ({p.state})"
                    + (f", last reset: {p.last_reset}" if p.last_reset else "")
                    + (f"; its BFD session is {p.bfd}" if p.bfd and p.bfd != "up" else ""))
            # one level for the tile, /network and the alert: a warning while other peers carry
            # the routes, critical when none does (the alert said critical while the tile said warning)
            out.append(Finding(BAD if all_down else WARN, text, "bgp_peer_down", subject, labels(p),
                               severity="critical" if all_down else "warning"))
            continue
        if p.bfd and p.bfd not in ("up", "shutdown", "adm-down"):
            out.append(Finding(WARN, f"BGP peer {p.peer} is Established but its BFD session is {p.bfd}: the path "
                                     "is failing faster than BGP's hold timer sees", labels=labels(p)))
        accepted = p.prefixes_received
        if accepted is not None and p.prefixes_peak and accepted < p.prefixes_peak * (1 - drop_ratio):
            out.append(Finding(WARN, f"BGP peer {p.peer} ({p.description or p.remote_as}) {afi_words(p.afi)}: accepted "
                                     f"prefixes fell from {p.prefixes_peak} to {accepted} within "
                                     f"{_minutes(drop_window)} while the session stayed up",
                               "bgp_prefixes_dropped", subject, labels(p)))
        if accepted is not None and p.prefix_limit and accepted > p.prefix_limit * limit_near:
            out.append(Finding(WARN, f"BGP peer {p.peer} {afi_words(p.afi)}: {accepted} prefixes accepted of a maximum of "
                                     f"{p.prefix_limit} ({accepted / p.prefix_limit:.0%}); past it the session "
                                     "is torn down", "bgp_prefix_limit_near", subject, labels(p)))
        elif p.uptime_seconds is not None and p.uptime_seconds < 600 and p.flaps:
            out.append(Finding(WARN, f"BGP peer {p.peer} up again for {p.uptime_seconds:.0f} s, after going down "
                                     f"{p.flaps} {'time' if p.flaps == 1 else 'times'}",
                               labels=labels(p)))
    for b in state.bfd:
        if not b.up and not b.admin_down:
            why = b.diagnostic if b.diagnostic and b.diagnostic != "ok" else ""
            out.append(Finding(BAD, f"BFD session to {b.peer}" + (f" on {b.interface}" if b.interface else "")
                               + f" is {b.status}" + (f" ({why})" if why else ""),
                               "bfd_peer_down", b.key, bfd_labels(b)))
    for v in state.evpn:
        if not v.up:
            why = ("is no longer known to zebra" if v.gone else
                   f"is {v.state}" if v.state else f"has its VXLAN interface {v.vxlan_interface} down")
            out.append(Finding(BAD, f"EVPN VNI {v.vni} {why}", "evpn_vni_down", str(v.vni), vni_labels(v)))
        elif v.lost_vteps:
            out.append(Finding(BAD, f"EVPN VNI {v.vni} lost remote VTEP{'s' if len(v.lost_vteps) > 1 else ''} "
                                    f"{', '.join(v.lost_vteps)} ({len(v.remote_vteps)} left)",
                               "evpn_vtep_lost", str(v.vni), vni_labels(v)))
    if all_down:
        out.append(Finding(BAD, f"all {len(live)} BGP sessions of {judging.host} are down", "bgp_all_peers_down",
                           judging.host))
    return out


def bfd_labels(b: BfdPeer) -> dict[str, str]:
    return {"peer": b.peer, "vrf": b.vrf} | ({"interface": b.interface} if b.interface else {})


def vni_labels(v: EvpnVni) -> dict[str, str]:
    return {"vni": str(v.vni), "type": v.type, "interface": v.vxlan_interface}


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 120 else f"{seconds:.0f} s"


def all_clear(state: FrrState, judging: Judging) -> str | None:
    if not state.peers and not state.evpn:
        return None
    words = [f"{len(state.peers)} sessions up"] if state.peers else []
    words += [f"{len(state.bfd)} BFD"] if state.bfd else []
    words += [f"{len(state.evpn)} VNI{'s' if len(state.evpn) > 1 else ''}"] if state.evpn else []
    return ", ".join(words)


def view(state: FrrState, found: Sequence[Finding]) -> View:
    """Each session with how it stands: the level of the findings about it."""
    return {"peers": [(p, level_of(about(found, **labels(p)))) for p in state.peers],
            "bfd": [(b, level_of(about(found, **bfd_labels(b)))) for b in state.bfd],
            "evpn": [(v, level_of(about(found, **vni_labels(v)))) for v in state.evpn]}


TILE = Tile("BGP", "/network#bgp", all_clear)

CHARTS: dict[str, ChartSpec] = {"bgp_peer": (("vrf", "afi", "peer"), [
    ("Session", "rackpulse_bgp_peer_up", {"vrf": 0, "afi": 1, "peer": 2}),
    ("Prefixes accepted", "rackpulse_bgp_peer_prefixes_received", {"vrf": 0, "afi": 1, "peer": 2}),
    ("Prefixes filtered", "rackpulse_bgp_peer_prefixes_filtered", {"vrf": 0, "afi": 1, "peer": 2})])}
