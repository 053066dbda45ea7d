"""FRR BGP sessions from ``vtysh -c 'show bgp vrf all summary json'`` (and neighbors json).

Format source: FRR bgpd/bgp_vty.c (``bgp_show_summary``, ``bgp_show_peer``). The summary
is keyed VRF -> AFI/SAFI ("ipv4Unicast", "ipv6Unicast", "l2VpnEvpn" ...) -> "peers" ->
peer (an address, or an interface name for unnumbered peers).
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from collectors import finite
from collectors.base import (
    Collector,
    CollectorError,
    CollectResult,
    CommandNotFound,
    CommandResult,
    Entity,
    MetricSpec,
    NoData,
    ParseError,
    Runner,
    Sample,
    run_command,
)
from collectors.context import HostContext
from collectors.network.frr.bfd import BfdSession, parse_bfd_peers
from collectors.network.frr.evpn import VtepMemory, evpn_view
from collectors.network.frr.prefixes import (
    AfiPrefixes,
    PeakWatch,
    afi_prefixes,
    parse_prefix_walk,
    prefix_counts_command,
)
from collectors.network.frr.state import BfdPeer, FrrState, Peer

STATES = ("Established", "Active", "Connect", "Idle", "OpenSent", "OpenConfirm", "Clearing", "Deleted")
_AFI_RE = re.compile(r"^(ipv4|ipv6|l2Vpn|vpnv4|vpnv6|flowspec)[A-Za-z0-9]*$", re.I)


@dataclass(frozen=True, slots=True)
class BgpPeer:
    vrf: str
    afi: str  # "ipv4Unicast", "ipv6Unicast", ...
    peer: str  # address, or interface name for an unnumbered peer
    interface: bool
    remote_as: str
    state: str  # "Established", "Active", "Connect", "Idle", "Idle (Admin)", ...
    admin_down: bool
    uptime_seconds: float | None  # only when Established (a down peer's timer counts time since it went down)
    prefixes_received: int | None
    prefixes_sent: int | None
    established: int | None  # connectionsEstablished
    dropped: int | None  # connectionsDropped: the flap count
    description: str | None
    hostname: str | None

    @property
    def up(self) -> bool:
        return self.state == "Established"

    @property
    def base_state(self) -> str:
        return self.state.split(" ")[0]


def parse_bgp_summary(data: str | bytes) -> list[BgpPeer]:
    """Parse `show bgp [vrf all] [afi safi] summary json` in any of its three shapes."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    stripped = text.strip()
    if not stripped:
        raise ParseError("vtysh printed nothing")
    if not stripped.startswith("{"):
        raise ParseError(f"vtysh did not print JSON: {stripped.splitlines()[0][:160]!r}")
    try:
        doc = finite.loads(stripped)
    except ValueError as exc:
        raise ParseError(f"vtysh JSON is malformed ({exc}): {stripped[:80]!r}") from None
    if not doc:  # it began with "{": an object
        raise CollectorError("bgpd has no BGP instance (`router bgp` is not configured): vtysh printed {}")
    peers: list[BgpPeer] = []
    if "peers" in doc:  # flat: `show bgp ipv4 unicast summary json`
        peers += _afi_peers(str(doc.get("vrfName", "default")), "ipv4Unicast", doc)
    elif any(_AFI_RE.match(k) for k in doc):  # keyed by AFI: `show bgp summary json`
        for afi, body in doc.items():
            if _AFI_RE.match(afi) and isinstance(body, dict):
                peers += _afi_peers(str(body.get("vrfName", "default")), afi, body)
    else:  # keyed by VRF, then AFI: `show bgp vrf all summary json`
        for vrf, afis in doc.items():
            if not isinstance(afis, dict):
                raise ParseError(f"VRF {vrf!r}: expected an object, got {type(afis).__name__}")
            for afi, body in afis.items():
                if _AFI_RE.match(afi) and isinstance(body, dict):
                    peers += _afi_peers(str(body.get("vrfName", vrf)), afi, body)
    return peers


# Any: a tool's JSON output, read key by key (each value checked where it is used)
def _afi_peers(vrf: str, afi: str, body: dict[str, Any]) -> list[BgpPeer]:
    raw = body.get("peers", {})
    if not isinstance(raw, dict):
        raise ParseError(f"{vrf}/{afi}: 'peers' is not an object")
    out = []
    for name, p in raw.items():
        if not isinstance(p, dict):
            raise ParseError(f"{vrf}/{afi}/{name}: peer is not an object")
        state = str(p.get("state", "Unknown"))
        up = state == "Established"
        msec = p.get("peerUptimeMsec")
        pfx = p.get("pfxRcd", p.get("prefixReceivedCount"))
        out.append(BgpPeer(
            vrf=vrf, afi=afi, peer=str(name), interface=p.get("idType") == "interface",
            remote_as=str(p.get("remoteAs", "")),
            state=state,
            admin_down=p.get("peerState") == "Admin" or "(Admin)" in state,
            uptime_seconds=msec / 1000 if up and isinstance(msec, int | float) else None,
            prefixes_received=_count(pfx),
            prefixes_sent=_count(p.get("pfxSnt")),
            established=_count(p.get("connectionsEstablished")),
            dropped=_count(p.get("connectionsDropped")),
            description=p.get("desc") if isinstance(p.get("desc"), str) else None,
            hostname=p.get("hostname") if isinstance(p.get("hostname"), str) else None,
        ))
    return out


def _count(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


@dataclass(frozen=True, slots=True)
class NeighborDetail:
    last_reset: str | None
    description: str | None
    hostname: str | None
    afis: dict[str, AfiPrefixes] = field(default_factory=dict)
    bfd: str | None = None  # "up", "down" ... when BGP uses BFD for this peer (peerBfdInfo)
    uses_bfd: bool = False  # `neighbor ... bfd` is configured (peerBfdInfo is there, with a status or not)


NO_DETAIL = NeighborDetail(None, None, None)


def _text(v: object) -> str | None:
    return v if isinstance(v, str) else None


def parse_bgp_neighbors(data: str | bytes) -> dict[tuple[str, str], NeighborDetail]:
    """`show bgp vrf all neighbors json` -> {(vrf, peer): its reset reason, description, hostname}."""
    try:
        doc = finite.loads(data)
    except ValueError as exc:
        raise ParseError(f"neighbors JSON is malformed: {exc}") from None
    if not isinstance(doc, dict):
        raise ParseError("neighbors JSON is not an object")
    out: dict[tuple[str, str], NeighborDetail] = {}
    # Without "vrf all" the peers sit at the top level; with it, under each VRF name.
    groups = doc.items() if all(isinstance(v, dict) and ("vrfName" in v or "vrfId" in v) for v in doc.values()) \
        else [("default", doc)]
    for vrf, peers in groups:
        if not isinstance(peers, dict):
            continue
        vrf_name = str(peers.get("vrfName", vrf))
        for peer, info in peers.items():
            if isinstance(info, dict):
                bfd = info.get("peerBfdInfo")
                status = _text(bfd.get("status")) if isinstance(bfd, dict) else None
                out[(vrf_name, peer)] = NeighborDetail(_text(info.get("lastResetDueTo")), _text(info.get("nbrDesc")),
                                                       _text(info.get("hostname")), afi_prefixes(info),
                                                       status.lower() if status else None, isinstance(bfd, dict))
    return out


def check_vtysh(res: CommandResult, what: str) -> str:
    """Turn vtysh's ways of failing into one clear error; return stdout on success."""
    out = res.stdout.decode("utf-8", "replace")
    err = res.stderr.decode("utf-8", "replace").strip()
    lines = err.splitlines()
    denied = next((ln for ln in lines if "Permission denied" in ln), None)
    if denied and not out.strip():
        raise CollectorError(f"vtysh {what}: permission denied on the vty sockets ({denied.strip()[:160]}); add the "
                             "user to group frrvty, or run vtysh with sudo")
    if "is not running" in err or "failed to connect to any daemons" in err:
        reason = next((ln for ln in lines if "is not running" in ln or "failed to connect" in ln), lines[-1])
        raise CollectorError(f"vtysh {what}: {reason.strip()} (is bgpd running, and is the vty socket directory in "
                             "the vtysh argv right?)")
    if res.returncode != 0:
        raise CollectorError(f"vtysh {what} exited {res.returncode}: {(err or out).strip()[:300]}")
    return out


class FrrCollector(Collector):
    name: ClassVar[str] = "frr"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_bgp_peer_up": MetricSpec("1 if the BGP session is Established.",
                                            states=("down", "established")),
        "rackpulse_bgp_peer_admin_down": MetricSpec("1 if the peer is shut down on purpose (neighbor shutdown).",
                                                    states=("no", "shut down")),
        "rackpulse_bgp_peer_state": MetricSpec("1 for the session's current FSM state.", store=False),
        "rackpulse_bgp_peer_uptime_seconds": MetricSpec("Time since the session was Established (only while up)."),
        "rackpulse_bgp_peer_prefixes_received": MetricSpec("Prefixes received from the peer."),
        "rackpulse_bgp_peer_prefixes_sent": MetricSpec("Prefixes sent to the peer."),
        "rackpulse_bgp_peer_flaps_total": MetricSpec("Times the session dropped (connectionsDropped).", "counter"),
        "rackpulse_bgp_peer_prefixes_adj_in": MetricSpec(
            "Prefixes received before the inbound policy (Adj-RIB-In; with soft-reconfiguration inbound only)."),
        "rackpulse_bgp_peer_prefixes_filtered": MetricSpec(
            "Prefixes the inbound policy refused: received before it minus accepted."),
        "rackpulse_bgp_peer_prefix_limit": MetricSpec("The peer's maximum-prefix, where configured."),
        "rackpulse_bfd_peer_up": MetricSpec("1 if the BFD session is up.", states=("down", "up")),
        "rackpulse_bfd_peer_uptime_seconds": MetricSpec("Time since the BFD session came up (only while up)."),
        "rackpulse_bfd_peer_flaps_total": MetricSpec("Times the BFD session went down (session-down).", "counter"),
        "rackpulse_evpn_vni_up": MetricSpec("1 if the VNI's VXLAN interface is up (an L3 VNI: zebra says Up).",
                                            states=("down", "up")),
        "rackpulse_evpn_vni_remote_vteps": MetricSpec("Remote VTEPs the VNI floods to."),
        "rackpulse_evpn_vni_lost_vteps": MetricSpec("Remote VTEPs the VNI had within vtep_memory and has no longer."),
        "rackpulse_evpn_vni_macs": MetricSpec("MAC addresses known in the VNI."),
        "rackpulse_evpn_vni_arp_nd": MetricSpec("ARP and ND entries known in the VNI."),
    }

    def __init__(self, vtysh: Sequence[str] = ("vtysh",), timeout: float = 10.0, runner: Runner = run_command,
                 drop_ratio: float = 0.5, drop_window: float = 600.0, limit_near: float = 0.8, bfd: bool = True,
                 max_prefix_count_queries: int = 32, evpn: bool = True, vtep_memory: float = 86400.0) -> None:
        self.vtysh = list(vtysh)
        self.timeout = timeout
        self.runner = runner
        self.drop_ratio, self.limit_near, self.bfd = drop_ratio, limit_near, bfd
        self.max_prefix_count_queries = max_prefix_count_queries
        self.peaks = PeakWatch(drop_window)
        self.evpn = evpn
        self.vteps = VtepMemory(vtep_memory)

    def _run(self, command: str) -> CommandResult:
        try:
            return self.runner([*self.vtysh, "-c", command], self.timeout)
        except CommandNotFound as exc:
            # No FRR on this host: nothing to watch, not a failure.
            raise NoData(f"{exc} (FRR not installed)") from None

    def collect(self) -> CollectResult:
        peers = parse_bgp_summary(self._summary())
        result = CollectResult()
        details: dict[tuple[str, str], NeighborDetail] = {}
        try:
            details = parse_bgp_neighbors(check_vtysh(self._run("show bgp vrf all neighbors json"),
                                                      "show bgp vrf all neighbors json"))
        except CollectorError as exc:
            result.warnings.append(f"reset reasons unavailable: {exc}")
        bfd = self._bfd(result) if self.bfd else []
        by_address = {(b.vrf, b.peer): b for b in bfd}
        by_interface = {(b.vrf, b.interface): b for b in bfd if b.interface}
        queries = self.max_prefix_count_queries
        now = time.time()
        views = []
        for p in peers:
            extra = details.get((p.vrf, p.peer)) or NO_DETAIL
            afi = extra.afis.get(p.afi)
            adj_in = walked = None
            if afi is not None and afi.soft_in and p.up and queries > 0:
                queries -= 1
                adj_in, walked = self._adj_in(p, result)
            accepted = p.prefixes_received
            # filtered from one reading (Adj-in and its own accepted count); an older FRR without the
            # latter: against the summary's count
            base = walked if walked is not None else accepted
            filtered = max(adj_in - base, 0) if adj_in is not None and base is not None else None
            limit = afi.limit if afi else None
            key = f"{p.vrf}/{p.afi}/{p.peer}"
            peak = self.peaks.peak(key, now, p.up, p.established, accepted)
            # A BFD session to the same address is this peer's only when BGP uses BFD for it
            # (`neighbor ... bfd`): a static route's or OSPF's session to that router is not.
            session = ((by_interface.get((p.vrf, p.peer)) if p.interface else None) or by_address.get((p.vrf, p.peer))
                       if extra.uses_bfd else None)
            _peer_samples(result.samples, p, accepted, adj_in, filtered, limit)
            views.append(Peer(vrf=p.vrf, afi=p.afi, peer=p.peer, interface=p.interface, remote_as=p.remote_as,
                              state=p.state, up=p.up, admin_down=p.admin_down, uptime_seconds=p.uptime_seconds,
                              prefixes_received=accepted, prefixes_sent=p.prefixes_sent, flaps=p.dropped,
                              prefixes_adj_in=adj_in, prefixes_filtered=filtered, prefix_limit=limit,
                              prefixes_peak=peak, description=p.description or extra.description,
                              hostname=p.hostname or extra.hostname, last_reset=extra.last_reset,
                              bfd=session.status if session else extra.bfd))
            result.entities.append(Entity("bgp_peer", key, {
                "state": p.state, "remote_as": p.remote_as, "last_reset": extra.last_reset}))
        self.peaks.forget_others({f"{p.vrf}/{p.afi}/{p.peer}" for p in peers})
        vnis = []
        if self.evpn:
            try:
                vnis = evpn_view(self._ask, self.vteps, result, now)
            except (CollectorError, ParseError) as exc:
                result.warnings.append(f"EVPN VNIs unavailable: {exc}")
        result.state = FrrState(peers=views, bfd=[_bfd_view(b, result) for b in bfd], evpn=vnis,
                                drop_ratio=self.drop_ratio, drop_window=self.peaks.window, limit_near=self.limit_near)
        return result

    def _summary(self) -> str:
        res = self._run("show bgp vrf all summary json")
        text = (res.stdout + res.stderr).decode("utf-8", "replace")
        if text.lstrip().startswith("%") or "Unknown command" in text:
            # An FRR (or Quagga-era vtysh) without "vrf all" JSON: ask for the default VRF only.
            return check_vtysh(self._run("show bgp summary json"), "show bgp summary json")
        return check_vtysh(res, "show bgp vrf all summary json")

    def _ask(self, command: str) -> str:
        return check_vtysh(self._run(command), command)

    def _adj_in(self, p: BgpPeer, result: CollectResult) -> tuple[int | None, int | None]:
        """(the prefixes received before the inbound policy, those accepted) of one reading, for a
        peer whose router keeps them."""
        command = prefix_counts_command(p.vrf, p.afi, p.peer)
        if command is None:
            return None, None
        try:
            return parse_prefix_walk(check_vtysh(self._run(command), command))
        except CollectorError as exc:
            result.warnings.append(f"{p.vrf}/{p.afi}/{p.peer}: prefixes before the inbound policy unavailable: {exc}")
            return None, None

    def _bfd(self, result: CollectResult) -> list[BfdSession]:
        """BFD sessions, when bfdd runs: without it there are none, which is not a failure."""
        try:
            text = check_vtysh(self._run("show bfd peers json"), "show bfd peers json")
        except NoData:
            return []
        except CollectorError as exc:
            if "is not running" in str(exc) or "failed to connect" in str(exc):
                return []
            result.warnings.append(f"BFD sessions unavailable: {exc}")
            return []
        if not text.strip() or text.lstrip().startswith("%"):
            return []  # this vtysh talks to no bfdd (or has no BFD commands)
        counters = b""
        try:
            counters = check_vtysh(self._run("show bfd peers counters json"), "show bfd peers counters json").encode()
        except CollectorError as exc:
            result.warnings.append(f"BFD flap counts unavailable: {exc}")
        try:
            return parse_bfd_peers(text, counters)
        except ParseError as exc:
            result.warnings.append(f"BFD sessions unreadable: {exc}")
            return []


def _bfd_view(b: BfdSession, result: CollectResult) -> BfdPeer:
    labels = {"vrf": b.vrf, "peer": b.peer, "interface": b.interface}
    result.samples.append(Sample.of("rackpulse_bfd_peer_up", 1 if b.up else 0, **labels))
    if b.uptime_seconds is not None:
        result.samples.append(Sample.of("rackpulse_bfd_peer_uptime_seconds", b.uptime_seconds, **labels))
    if b.flaps is not None:
        result.samples.append(Sample.of("rackpulse_bfd_peer_flaps_total", b.flaps, **labels))
    result.entities.append(Entity("bfd_peer", b.key, {"status": b.status, "diagnostic": b.diagnostic,
                                                      "remote_diagnostic": b.remote_diagnostic}))
    return BfdPeer(key=b.key, peer=b.peer, local=b.local, vrf=b.vrf, interface=b.interface, multihop=b.multihop,
                   status=b.status, up=b.up, admin_down=b.admin_down, uptime_seconds=b.uptime_seconds,
                   downtime_seconds=b.downtime_seconds, diagnostic=b.diagnostic,
                   remote_diagnostic=b.remote_diagnostic, local_discriminator=b.local_discriminator,
                   remote_discriminator=b.remote_discriminator, flaps=b.flaps)


# -- plug-in -----------------------------------------------------------------------------

def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.frr]."""
    return FrrCollector(c.vtysh, c.command_timeout, runner, c.drop_ratio, c.drop_window, c.limit_near, c.bfd,
                        c.max_prefix_count_queries, c.evpn, c.vtep_memory)


def _peer_samples(s: list[Sample], p: BgpPeer, accepted: int | None, adj_in: int | None, filtered: int | None,
                  limit: int | None) -> None:
    labels = {"vrf": p.vrf, "afi": p.afi, "peer": p.peer, "peer_as": p.remote_as}
    s.append(Sample.of("rackpulse_bgp_peer_up", 1 if p.up else 0, **labels))
    s.append(Sample.of("rackpulse_bgp_peer_admin_down", 1 if p.admin_down else 0, **labels))
    for st in STATES:
        s.append(Sample.of("rackpulse_bgp_peer_state", 1 if p.base_state == st else 0, **labels, state=st))
    for metric, value in (("uptime_seconds", p.uptime_seconds), ("prefixes_received", accepted),
                          ("prefixes_sent", p.prefixes_sent), ("flaps_total", p.dropped),
                          ("prefixes_adj_in", adj_in), ("prefixes_filtered", filtered)):
        if value is not None:
            s.append(Sample.of(f"rackpulse_bgp_peer_{metric}", value, **labels))
    if limit is not None:
        s.append(Sample.of("rackpulse_bgp_peer_prefix_limit", limit, **labels))
