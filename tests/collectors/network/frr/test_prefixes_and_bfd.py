"""BGP prefix counts (accepted, received before the inbound policy, filtered, the maximum) and
BFD sessions: parsed from real FRR 8.4.4 captures and frr_exporter's, and read from two real
FRR routers (bgpd and bfdd in network namespaces) whose routes are withdrawn and whose bfdd is
stopped while the collector watches."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial

import pytest

from collectors.base import CommandResult, ParseError
from collectors.findings import Judging
from collectors.network.frr.bfd import parse_bfd_peers
from collectors.network.frr.collector import FrrCollector, parse_bgp_neighbors
from collectors.network.frr.findings import findings
from collectors.network.frr.prefixes import PeakWatch, parse_prefix_counts, prefix_counts_command
from collectors.network.frr.state import FrrState, Peer
from tests.paths import FIXTURES
from tests.peers import running
from tests.peers.frr import FrrPair, collect_until

DIR = FIXTURES / "frr"


def test_a_neighbor_keeps_its_accepted_sent_and_maximum_prefixes_per_address_family() -> None:
    details = parse_bgp_neighbors((DIR / "frr844__show_bgp_vrf_all_neighbors.json").read_text())
    b = details[("default", "10.199.0.2")]
    v4 = b.afis["ipv4Unicast"]
    assert (v4.accepted, v4.sent, v4.limit, v4.soft_in) == (2, 4, 4, True)
    assert b.bfd == "up"
    never = details[("default", "10.199.0.3")]
    assert never.bfd is None and never.afis["ipv4Unicast"].limit is None


def test_prefix_counts_give_what_arrived_before_the_inbound_policy() -> None:
    assert parse_prefix_counts((DIR / "frr844__prefix_counts.json").read_text()) == 5
    with pytest.raises(ParseError, match="Adj-in"):
        parse_prefix_counts('{"prefixCountsFor": "10.0.0.1"}')
    assert prefix_counts_command("default", "ipv4Unicast", "10.0.0.1") == \
        "show bgp ipv4 unicast neighbors 10.0.0.1 prefix-counts json"
    assert prefix_counts_command("blue", "l2VpnEvpn", "swp1") == "show bgp vrf blue l2vpn evpn neighbors swp1 prefix-counts json"
    assert prefix_counts_command("default", "somethingNew", "x") is None


def test_bfd_sessions_parse_with_their_status_timers_diagnostics_and_flaps() -> None:
    (up,) = parse_bfd_peers((DIR / "frr844__show_bfd_peers.json").read_text(),
                            (DIR / "frr844__show_bfd_peers_counters.json").read_text())
    assert (up.peer, up.local, up.interface, up.status, up.flaps) == ("10.199.0.2", "10.199.0.1", "bgpA0", "up", 0)
    assert up.uptime_seconds is not None and up.downtime_seconds is None and up.local_discriminator
    (down,) = parse_bfd_peers((DIR / "frr844__show_bfd_peers_down.json").read_text())
    assert (down.status, down.uptime_seconds, down.diagnostic) == ("down", None, "neighbor signaled session down")
    assert down.remote_discriminator == 0 and down.downtime_seconds is not None
    three = parse_bfd_peers((DIR / "frr_exporter__show_bfd_peers.json").read_text())
    assert [(s.vrf, s.status) for s in three] == [("default", "up"), ("blue", "up"), ("default", "down")]
    assert three[2].interface == "" and three[2].key == "default/10.10.141.63"
    assert parse_bfd_peers("") == []
    with pytest.raises(ParseError, match="no peer address"):
        parse_bfd_peers('[{"status": "up"}]')
    with pytest.raises(ParseError, match="not a JSON list"):
        parse_bfd_peers("% Unknown command")


def test_the_peak_of_accepted_prefixes_starts_afresh_when_the_session_comes_back() -> None:
    w = PeakWatch(600)
    assert w.peak("p", 0, True, 1, 100) == 100
    assert w.peak("p", 300, True, 1, 40) == 100  # within ten minutes: the peak stands
    assert w.peak("p", 700, True, 1, 40) == 40  # the 100 is older than the window
    assert w.peak("p", 710, False, 1, None) is None
    assert w.peak("p", 720, True, 2, 10) == 10  # re-established: a new session, a new peak


def peer(**kw: object) -> Peer:
    base: dict[str, object] = {"vrf": "default", "afi": "ipv4Unicast", "peer": "10.0.0.1", "remote_as": "65001",
                               "state": "Established", "up": True}
    return Peer.model_validate(base | kw)


def test_prefix_findings_fire_on_a_drop_while_up_and_near_the_maximum_and_not_otherwise() -> None:
    def rules(*peers: Peer, **state: object) -> list[str | None]:
        return [f.rule for f in findings(FrrState(peers=list(peers), **state), Judging(host="r"))]  # type: ignore[arg-type]

    assert rules(peer(prefixes_received=40, prefixes_peak=100)) == ["bgp_prefixes_dropped"]
    assert rules(peer(prefixes_received=60, prefixes_peak=100)) == []  # fell by 40 %: under drop_ratio
    assert rules(peer(prefixes_received=60, prefixes_peak=100), drop_ratio=0.3) == ["bgp_prefixes_dropped"]
    assert rules(peer(prefixes_received=81, prefix_limit=100, prefixes_peak=81)) == ["bgp_prefix_limit_near"]
    assert rules(peer(prefixes_received=80, prefix_limit=100, prefixes_peak=80)) == []
    down = peer(up=False, state="Active", prefixes_received=0, prefixes_peak=None, bfd="down")
    (f,) = [f for f in findings(FrrState(peers=[down]), Judging(host="r")) if f.rule == "bgp_peer_down"]
    assert "its BFD session is down" in f.text


def test_bfdd_not_running_means_no_bfd_sessions_not_an_error() -> None:
    summary = (DIR / "frr844__show_bgp_vrf_all_summary.json").read_bytes()

    def runner(argv, timeout):  # type: ignore[no-untyped-def]
        cmd = argv[-1]
        if "bfd" in cmd:
            return CommandResult(tuple(argv), 1, b"", b"bfdd is not running\n")
        if "prefix-counts" in cmd:
            return CommandResult(tuple(argv), 0, (DIR / "frr844__prefix_counts.json").read_bytes(), b"")
        if "neighbors" in cmd:
            return CommandResult(tuple(argv), 0, (DIR / "frr844__show_bgp_vrf_all_neighbors.json").read_bytes(), b"")
        return CommandResult(tuple(argv), 0, summary, b"")

    r = FrrCollector(["vtysh"], runner=runner).collect()
    assert r.state.bfd == [] and not any("BFD" in w for w in r.warnings)
    v4 = {(p.afi, p.peer): p for p in r.state.peers}[("ipv4Unicast", "10.199.0.2")]
    assert (v4.prefixes_received, v4.prefixes_adj_in, v4.prefixes_filtered, v4.prefix_limit) == (2, 5, 3, 4)
    names = {s.metric for s in r.samples}
    assert {"rackpulse_bgp_peer_prefixes_filtered", "rackpulse_bgp_peer_prefix_limit"} <= names


# -- two real routers --------------------------------------------------------------------

@pytest.fixture(scope="module")
def routers() -> Iterator[FrrPair]:
    with running(partial(FrrPair, bfd=True), "frr-bfd") as pair:
        pair.wait_ready()
        pair.vty("configure terminal", "ip prefix-list NO10 seq 5 deny 10.200.0.0/16",
                 "ip prefix-list NO10 seq 10 permit 0.0.0.0/0 le 32", "route-map IN permit 10",
                 "match ip address prefix-list NO10", "exit", "router bgp 65001", "neighbor 10.199.0.2 bfd",
                 "address-family ipv4 unicast", "neighbor 10.199.0.2 soft-reconfiguration inbound",
                 "neighbor 10.199.0.2 route-map IN in", "neighbor 10.199.0.2 maximum-prefix 2 warning-only", "end")
        pair.vty("configure terminal", "router bgp 65002", "neighbor 10.199.0.1 bfd", "end", router="B")
        yield pair


def v4(result):  # type: ignore[no-untyped-def]
    return {(p.afi, p.peer): p for p in result.state.peers}.get(("ipv4Unicast", "10.199.0.2"))


def test_real_prefix_counts_match_the_summary_and_the_routes_filtered_by_policy(routers: FrrPair) -> None:
    c = FrrCollector(routers.vtysh("A"))
    collect_until(c, lambda r: v4(r) and v4(r).up and v4(r).prefixes_received == 2
                  and v4(r).prefixes_adj_in and v4(r).bfd == "up", "two prefixes accepted, BFD up")
    # Router A may still be announcing its own routes as the session settles: the collector's
    # reading and the summary read here are two moments, so wait until they agree.
    summary: dict[str, int] = {}

    def agree(r) -> bool:  # type: ignore[no-untyped-def]
        summary.update(json.loads(routers.vty("show bgp ipv4 unicast summary json"))["peers"]["10.199.0.2"])
        return (v4(r).prefixes_received, v4(r).prefixes_sent) == (summary["pfxRcd"], summary["pfxSnt"])

    r = collect_until(c, agree, "the collector's counts and the summary's to agree")
    p = v4(r)
    assert p.prefixes_received == summary["pfxRcd"] == 2 and p.prefixes_sent == summary["pfxSnt"]
    counts = json.loads(routers.vty("show bgp ipv4 unicast neighbors 10.199.0.2 prefix-counts json"))
    assert p.prefixes_adj_in == counts["ribTableWalkCounters"]["Adj-in"]
    assert p.prefixes_filtered == p.prefixes_adj_in - 2 and p.prefix_limit == 2
    assert "bgp_prefix_limit_near" in [f.rule for f in findings(r.state, Judging(host="A"))]
    assert p.bfd == "up" and r.state.bfd and r.state.bfd[0].up


def test_withdrawn_routes_raise_prefixes_dropped_while_the_session_stays_established(routers: FrrPair) -> None:
    c = FrrCollector(routers.vtysh("A"))
    collect_until(c, lambda r: v4(r) and v4(r).up and v4(r).prefixes_received == 2, "two prefixes accepted")
    routers.vty("configure terminal", "router bgp 65002", "address-family ipv4 unicast",
                "no network 203.0.113.0/24", "no network 203.0.113.128/25", "end", router="B")
    try:
        r = collect_until(c, lambda r: v4(r).prefixes_received == 0, "the routes withdrawn")
        p = v4(r)
        assert p.up and p.state == "Established" and p.prefixes_peak == 2
        (f,) = [f for f in findings(r.state, Judging(host="A")) if f.rule == "bgp_prefixes_dropped"]
        assert "fell from 2 to 0" in f.text and f.subject == "default/ipv4Unicast/10.199.0.2"
    finally:
        routers.vty("configure terminal", "router bgp 65002", "address-family ipv4 unicast",
                    "network 203.0.113.0/24", "network 203.0.113.128/25", "end", router="B")


def test_a_stopped_bfdd_raises_bfd_peer_down_and_the_bgp_peer_says_so(routers: FrrPair) -> None:
    # Runs last in this module: router B's bfdd does not come back.
    c = FrrCollector(routers.vtysh("A"))
    collect_until(c, lambda r: r.state.bfd and r.state.bfd[0].up, "BFD up")
    routers.stop("bfddB")
    r = collect_until(c, lambda r: r.state.bfd and r.state.bfd[0].status == "down", "BFD down")
    found = findings(r.state, Judging(host="A"))
    (b,) = [f for f in found if f.rule == "bfd_peer_down"]
    assert "10.199.0.2" in b.text and "bgpA0" in b.text
    p = v4(r)
    assert p.bfd == "down"
    words = " ".join(f.text for f in found if f.labels.get("peer") == "10.199.0.2")
    assert "BFD session is down" in words


def test_a_session_that_flapped_between_two_polls_is_a_new_session_not_a_drop_of_prefixes() -> None:
    """The session went down and came back between two polls (rackpulse never saw it down, but
    connectionsEstablished rose): its fresh, still-filling table of 10 is not "prefixes dropped"
    from the old session's 100; that the session was reset is bgp_peer_down's and the flaps' to say."""
    w = PeakWatch(600)
    assert w.peak("p", 0, True, 1, 100) == 100
    peak = w.peak("p", 30, True, 2, 10)
    assert peak == 10
    fresh = peer(prefixes_received=10, prefixes_peak=peak)
    assert [f.rule for f in findings(FrrState(peers=[fresh]), Judging(host="r"))] == []  # type: ignore[arg-type]
    assert w.peak("p", 60, True, 2, 4) == 10  # within the new session, a real drop is still seen


def test_a_bfd_session_to_a_peers_address_is_not_its_own_when_bgp_does_not_use_bfd_for_it() -> None:
    """bfdd has a session to 10.199.0.2 (for a static route, say) and it is down; BGP's neighbor
    10.199.0.2 has no `neighbor ... bfd` (no peerBfdInfo): its BFD is not said to be down."""
    summary = (DIR / "frr844__show_bgp_vrf_all_summary.json").read_bytes()
    neighbors = json.loads((DIR / "frr844__show_bgp_vrf_all_neighbors.json").read_text())
    del neighbors["default"]["10.199.0.2"]["peerBfdInfo"]
    down = (DIR / "frr844__show_bfd_peers_down.json").read_bytes()

    def runner(argv, timeout):  # type: ignore[no-untyped-def]
        cmd = argv[-1]
        if cmd == "show bfd peers json":
            return CommandResult(tuple(argv), 0, down, b"")
        if "bfd" in cmd:
            return CommandResult(tuple(argv), 0, b"[]", b"")
        if "prefix-counts" in cmd:
            return CommandResult(tuple(argv), 0, (DIR / "frr844__prefix_counts.json").read_bytes(), b"")
        if "neighbors" in cmd:
            return CommandResult(tuple(argv), 0, json.dumps(neighbors).encode(), b"")
        return CommandResult(tuple(argv), 0, summary, b"")

    r = FrrCollector(["vtysh"], runner=runner).collect()
    peer_of = {(p.afi, p.peer): p for p in r.state.peers}[("ipv4Unicast", "10.199.0.2")]
    assert peer_of.bfd is None
    assert r.state.bfd and r.state.bfd[0].status == "down"  # the session itself is still shown and judged
    assert not any("10.199.0.2" in f.text and "its BFD session" in f.text
                   for f in findings(r.state, Judging(host="r")))  # type: ignore[arg-type]


def test_a_peer_down_in_two_address_families_is_said_in_two_different_lines() -> None:
    v4 = peer(up=False, state="Active", afi="ipv4Unicast")
    v6 = peer(up=False, state="Active", afi="ipv6Unicast")
    texts = [f.text for f in findings(FrrState(peers=[v4, v6]), Judging(host="r")) if f.rule == "bgp_peer_down"]  # type: ignore[arg-type]
    assert len(texts) == 2 and len(set(texts)) == 2
    assert "IPv4 unicast down" in texts[0] and "IPv6 unicast down" in texts[1]


def test_filtered_comes_from_one_reading_so_routes_arriving_between_two_calls_are_not_filtered() -> None:
    """Seven routes arrived between the summary (2 accepted) and the prefix-count walk (9 in,
    9 accepted): none was filtered. Against the summary's older count it read 7 filtered."""
    summary = (DIR / "frr844__show_bgp_vrf_all_summary.json").read_bytes()
    walk = json.loads((DIR / "frr844__prefix_counts.json").read_text())
    walk["pfxCounter"], walk["ribTableWalkCounters"]["Adj-in"] = 9, 9

    def runner(argv, timeout):  # type: ignore[no-untyped-def]
        cmd = argv[-1]
        if "bfd" in cmd:
            return CommandResult(tuple(argv), 1, b"", b"bfdd is not running\n")
        if "prefix-counts" in cmd:
            return CommandResult(tuple(argv), 0, json.dumps(walk).encode(), b"")
        if "neighbors" in cmd:
            return CommandResult(tuple(argv), 0, (DIR / "frr844__show_bgp_vrf_all_neighbors.json").read_bytes(), b"")
        return CommandResult(tuple(argv), 0, summary, b"")

    r = FrrCollector(["vtysh"], runner=runner).collect()
    v4 = {(p.afi, p.peer): p for p in r.state.peers}[("ipv4Unicast", "10.199.0.2")]
    assert (v4.prefixes_received, v4.prefixes_adj_in, v4.prefixes_filtered) == (2, 9, 0)
