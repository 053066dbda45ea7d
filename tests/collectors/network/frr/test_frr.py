"""FRR BGP: parsing over real captures, and the collector against two real bgpd routers."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.base import CollectorError, ParseError
from collectors.network.frr.collector import FrrCollector, parse_bgp_neighbors, parse_bgp_summary
from tests.paths import FIXTURES
from tests.peers import running
from tests.peers.frr import FrrPair

DIR = FIXTURES / "frr"


def test_vrf_all_summary_gives_every_peer_with_its_state_and_uptime_only_when_up() -> None:
    peers = {(p.vrf, p.peer): p for p in parse_bgp_summary((DIR / "frr_exporter__show_bgp_vrf_all_ipv4_summary.json")
                                                           .read_text())}
    up = peers[("default", "192.168.0.2")]
    assert (up.state, up.uptime_seconds, up.prefixes_received, up.remote_as) == ("Established", 10.0, 0, "64513")
    active = peers[("default", "192.168.0.3")]
    assert (active.state, active.uptime_seconds, active.prefixes_received) == ("Active", None, 2)
    admin = peers[("default", "192.168.0.4")]
    assert admin.admin_down and not admin.up
    assert {vrf for vrf, _ in peers} == {"default", "red"}


def test_afi_keyed_and_flat_summaries_parse_too() -> None:
    sonic = parse_bgp_summary((DIR / "sonic-utilities__ipv6_bgp_summary.json").read_text())
    assert sonic and all(p.afi == "ipv6Unicast" for p in sonic)
    vrf = parse_bgp_summary((DIR / "sonic-utilities__ipv4_bgp_summary_vrf.json").read_text())
    assert {p.vrf for p in vrf} == {"Vnet_90"}


def test_unnumbered_peers_are_named_by_their_interface() -> None:
    doc = ('{"default": {"ipv6Unicast": {"vrfName": "default", "peers": {"swp1": {"remoteAs": 65100, '
           '"state": "Established", "peerUptimeMsec": 5000, "pfxRcd": 42, "pfxSnt": 4, "idType": "interface", '
           '"hostname": "tor-a", "connectionsDropped": 3}}}}}')
    (p,) = parse_bgp_summary(doc)
    assert (p.peer, p.interface, p.hostname, p.dropped, p.prefixes_received) == ("swp1", True, "tor-a", 3, 42)


def test_an_old_vtysh_without_vrf_all_json_falls_back_to_the_default_vrf() -> None:
    from collectors.base import CommandResult

    calls = []

    def runner(argv, timeout):  # type: ignore[no-untyped-def]
        calls.append(argv[-1])
        if "vrf all" in argv[-1]:
            return CommandResult(tuple(argv), 0, b"% Unknown command: show bgp vrf all summary json\n", b"")
        return CommandResult(tuple(argv), 0, (DIR / "sonic-utilities__ipv4_bgp_summary.json").read_bytes(), b"")

    r = FrrCollector(["vtysh"], runner=runner).collect()
    assert calls[:2] == ["show bgp vrf all summary json", "show bgp summary json"]
    assert len(r.state.peers) == 24


def test_neighbors_json_gives_descriptions_per_vrf() -> None:
    n = parse_bgp_neighbors((DIR / "frr_exporter__show_bgp_vrf_all_neighbors.json").read_text())
    assert set(n) == {("default", "swp2"), ("default", "10.1.1.10"), ("vrf1", "10.2.0.1")}


@pytest.mark.parametrize(("text", "message"), [
    ("", "printed nothing"),
    ("% Unknown command: show bgp vrf all summary json", "did not print JSON"),
    ('{"default": {"ipv4Unicast": {"peers": {', "malformed"),
    ('{"default": 5}', "expected an object"),
    ('{"ipv4Unicast": {"peers": []}}', "'peers' is not an object"),
])
def test_bad_output_is_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse_bgp_summary(text)


def test_an_empty_object_means_no_bgp_instance() -> None:
    with pytest.raises(CollectorError, match="no BGP instance"):
        parse_bgp_summary((DIR / "sonic-utilities__no_bgp_neigh.json").read_text())


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from(
                        ["default", "ipv4Unicast", "ipv6Unicast", "peers", "10.0.0.1", "state", "pfxRcd",
                         "peerUptimeMsec", "remoteAs", "vrfName", "idType"]), c, max_size=4), max_leaves=15))
def test_no_json_shape_crashes_the_parser(doc: object) -> None:
    import json
    try:
        parse_bgp_summary(json.dumps(doc))
    except CollectorError:
        pass


def test_a_hung_vtysh_is_a_timeout_error(tmp_path: Path) -> None:
    c = FrrCollector([sys.executable, "-c", "import time; time.sleep(60)"], timeout=0.5)
    with pytest.raises(CollectorError, match="timed out after 0.5s"):
        c.collect()


def test_vtysh_without_daemons_says_bgpd_is_not_running(tmp_path: Path) -> None:
    with pytest.raises(CollectorError, match="failed to connect to any daemons|is not running"):
        FrrCollector(["vtysh", "--vty_socket", str(tmp_path)]).collect()


@pytest.fixture(scope="module")
def routers() -> Iterator[FrrPair]:
    with running(FrrPair, "frr") as pair:
        yield pair


def wait_for(c: FrrCollector, predicate, timeout: float = 30):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = {(p.afi, p.peer): p for p in c.collect().state.peers}
            if predicate(last):
                return last
        except CollectorError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"condition not met; last seen: {last}")


def test_real_bgp_sessions_go_established_down_and_established_again(routers: FrrPair) -> None:
    c = FrrCollector(routers.vtysh("A"))
    both_up = lambda p: all(k in p and p[k].up for k in (("ipv4Unicast", "10.199.0.2"),  # noqa: E731
                                                          ("ipv6Unicast", "fd00:199::2")))
    peers = wait_for(c, both_up)
    v4 = peers[("ipv4Unicast", "10.199.0.2")]
    assert v4.remote_as == "65002" and v4.description == "rtrB-v4" and v4.uptime_seconds >= 0
    never = peers[("ipv4Unicast", "10.199.0.3")]
    assert never.state in ("Active", "Connect", "Idle") and never.uptime_seconds is None
    wait_for(c, lambda p: p[("ipv4Unicast", "10.199.0.2")].prefixes_received == 3)

    routers.stop_b()
    peers = wait_for(c, lambda p: not p[("ipv4Unicast", "10.199.0.2")].up)
    down = peers[("ipv4Unicast", "10.199.0.2")]
    assert down.uptime_seconds is None and down.flaps >= 1
    r = c.collect()
    up = {dict(s.labels)["peer"]: s.value for s in r.samples if s.metric == "rackpulse_bgp_peer_up"}
    assert up["10.199.0.2"] == 0

    routers.start_b()
    peers = wait_for(c, both_up)
    assert peers[("ipv4Unicast", "10.199.0.2")].flaps >= 1


def test_an_admin_shutdown_peer_is_shown_as_intended(routers: FrrPair) -> None:
    c = FrrCollector(routers.vtysh("A"))
    # Alone (one test of this module, or its first on a worker) bgpd may not yet hold the peer
    # from its config: a shutdown sent then is lost. Wait until it shows the peer.
    wait_for(c, lambda p: ("ipv4Unicast", "10.199.0.3") in p)
    routers.vty("configure terminal", "router bgp 65001", "neighbor 10.199.0.3 shutdown message maintenance", "end")
    try:
        peers = wait_for(c, lambda p: p[("ipv4Unicast", "10.199.0.3")].admin_down)
        assert peers[("ipv4Unicast", "10.199.0.3")].state.startswith("Idle")
    finally:
        routers.vty("configure terminal", "router bgp 65001", "no neighbor 10.199.0.3 shutdown", "end")


def test_the_last_reset_reason_comes_from_the_neighbors_command(routers: FrrPair) -> None:
    c = FrrCollector(routers.vtysh("A"))
    peers = wait_for(c, lambda p: p[("ipv4Unicast", "10.199.0.2")].last_reset)
    assert isinstance(peers[("ipv4Unicast", "10.199.0.2")].last_reset, str)


def test_a_router_without_bgp_config_is_a_clear_error(routers: FrrPair) -> None:
    # Runs last in this module: it removes router B's BGP instance.
    routers.vty("configure terminal", "no router bgp 65002", "end", router="B")
    with pytest.raises(CollectorError, match="no BGP instance"):
        FrrCollector(routers.vtysh("B")).collect()


def test_a_user_without_access_to_the_vty_sockets_gets_permission_denied(routers: FrrPair) -> None:
    # Runs as "nobody", outside group frrvty, against router A's sockets.
    argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *routers.vtysh("A")]
    with pytest.raises(CollectorError, match="(?i)permission denied|failed to connect"):
        FrrCollector(argv).collect()
