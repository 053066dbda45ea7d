"""Prefix counts per BGP peer and address family, beyond the summary's pfxRcd.

Format source: FRR bgpd/bgp_vty.c. ``show bgp vrf all neighbors json`` gives, per peer, under
"addressFamilyInfo" -> AFI key: "acceptedPrefixCounter" (what the summary calls pfxRcd: received
and accepted by the inbound policy), "sentPrefixCounter", "prefixAllowedMax" (neighbor ...
maximum-prefix N) and "inboundSoftConfigPermit" (soft-reconfiguration inbound: the routes are
kept before the policy). ``show bgp [vrf V] <afi> <safi> neighbors P prefix-counts json`` gives
"ribTableWalkCounters" -> "Adj-in": the routes received before the policy, kept only with soft
reconfiguration (otherwise 0, so it is read only then).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from collectors import finite
from collectors.base import ParseError

# The AFI keys of FRR's JSON and the words its commands take for them.
AFI_WORDS = {"ipv4Unicast": "ipv4 unicast", "ipv6Unicast": "ipv6 unicast", "ipv4Multicast": "ipv4 multicast",
             "ipv6Multicast": "ipv6 multicast", "ipv4Vpn": "ipv4 vpn", "ipv6Vpn": "ipv6 vpn",
             "ipv4LabeledUnicast": "ipv4 labeled-unicast", "ipv6LabeledUnicast": "ipv6 labeled-unicast",
             "l2VpnEvpn": "l2vpn evpn", "ipv4Flowspec": "ipv4 flowspec", "ipv6Flowspec": "ipv6 flowspec"}


@dataclass(frozen=True, slots=True)
class AfiPrefixes:
    accepted: int | None
    sent: int | None
    limit: int | None  # maximum-prefix
    soft_in: bool  # soft-reconfiguration inbound: Adj-RIB-In is kept and can be counted


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


# Any: a tool's JSON output, read key by key (each value checked where it is used)
def afi_prefixes(info: dict[str, Any]) -> dict[str, AfiPrefixes]:
    """A neighbor's "addressFamilyInfo" object -> {afi key: its prefix figures}."""
    afis = info.get("addressFamilyInfo")
    if not isinstance(afis, dict):
        return {}
    return {afi: AfiPrefixes(_int(a.get("acceptedPrefixCounter")), _int(a.get("sentPrefixCounter")),
                             _int(a.get("prefixAllowedMax")), a.get("inboundSoftConfigPermit") is True)
            for afi, a in afis.items() if isinstance(a, dict)}


def prefix_counts_command(vrf: str, afi: str, peer: str) -> str | None:
    words = AFI_WORDS.get(afi)
    if words is None:
        return None
    where = "" if vrf == "default" else f"vrf {vrf} "
    return f"show bgp {where}{words} neighbors {peer} prefix-counts json"


def parse_prefix_counts(text: str | bytes) -> int:
    """The Adj-in count of `... neighbors P prefix-counts json`."""
    return parse_prefix_walk(text)[0]


def parse_prefix_walk(text: str | bytes) -> tuple[int, int | None]:
    """(Adj-in, accepted) of `... neighbors P prefix-counts json`, both of one reading: the
    accepted count is its "pfxCounter" (None from an FRR that leaves it out). "Filtered" is their
    difference; taken against the summary's accepted count, read by another call moments apart,
    it spiked while routes changed."""
    try:
        doc = finite.loads(text)
    except ValueError as exc:
        raise ParseError(f"prefix-counts JSON is malformed: {exc}") from None
    walk = doc.get("ribTableWalkCounters") if isinstance(doc, dict) else None
    adj_in = walk.get("Adj-in") if isinstance(walk, dict) else None
    if _int(adj_in) is None:
        raise ParseError(f"prefix-counts JSON has no ribTableWalkCounters.Adj-in: {str(doc)[:120]!r}")
    return int(adj_in), _int(doc.get("pfxCounter"))  # type: ignore[arg-type]  # checked just above


class PeakWatch:
    """The highest accepted count of each session within a window, while it stays Established:
    a session that went down and came back starts afresh (its routes were withdrawn with it, and
    that is bgp_peer_down's to say)."""

    def __init__(self, window: float) -> None:
        self.window = window
        self._seen: dict[str, tuple[int | None, deque[tuple[float, int]]]] = {}

    def peak(self, key: str, now: float, up: bool, established: int | None, accepted: int | None) -> int | None:
        if not up or accepted is None:
            self._seen.pop(key, None)
            return None
        last = self._seen.get(key)
        if last is None or last[0] != established:
            last = (established, deque())
            self._seen[key] = last
        q = last[1]
        q.append((now, accepted))
        while q and now - q[0][0] > self.window:
            q.popleft()
        return max(v for _, v in q)

    def forget_others(self, keys: set[str]) -> None:
        for k in set(self._seen) - keys:
            del self._seen[k]
