"""FRR's BGP JSON at its edges: the three summary shapes, each field's odd values, the
neighbors reply with and without `vrf all`, and vtysh's ways of failing, in exact words."""

from __future__ import annotations

import json
from typing import Any

import pytest

from collectors.base import CollectorError, CommandResult, ParseError
from collectors.network.frr.collector import (
    BgpPeer,
    NeighborDetail,
    check_vtysh,
    parse_bgp_neighbors,
    parse_bgp_summary,
)

UP = {"remoteAs": 65001, "state": "Established", "peerUptimeMsec": 90500, "pfxRcd": 12, "pfxSnt": 3,
      "connectionsEstablished": 2, "connectionsDropped": 1, "desc": "edge-router", "hostname": "edge1",
      "idType": "ipv4"}


def peer(name: str = "10.0.0.1", vrf: str = "default", afi: str = "ipv4Unicast", **kw: Any) -> BgpPeer:
    base = dict(vrf=vrf, afi=afi, peer=name, interface=False, remote_as="65001", state="Established",
                admin_down=False, uptime_seconds=90.5, prefixes_received=12, prefixes_sent=3, established=2,
                dropped=1, description="edge-router", hostname="edge1")
    base.update(kw)
    return BgpPeer(**base)  # type: ignore[arg-type]


def test_the_flat_shape_takes_its_vrf_name_or_default() -> None:
    assert parse_bgp_summary(json.dumps({"vrfName": "blue", "peers": {"10.0.0.1": UP}})) == [peer(vrf="blue")]
    assert parse_bgp_summary(json.dumps({"peers": {"10.0.0.1": UP}})) == [peer()]


def test_the_afi_keyed_shape_reads_each_family_and_skips_the_rest() -> None:
    doc = {"ipv4Unicast": {"vrfName": "default", "peers": {"10.0.0.1": UP}},
           "ipv6Unicast": {"peers": {"fe80::1": {**UP, "pfxRcd": None, "prefixReceivedCount": 4}}},
           "l2VpnEvpn": "not an object", "failedPeers": 0}
    assert parse_bgp_summary(json.dumps(doc)) == [
        peer(), peer("fe80::1", afi="ipv6Unicast", prefixes_received=None)]


def test_the_vrf_keyed_shape_names_each_vrf_and_skips_what_is_not_a_family() -> None:
    doc = {"default": {"ipv4Unicast": {"peers": {"swp1": {**UP, "idType": "interface"}}}, "vrfId": 0},
           "red": {"ipv4Unicast": {"vrfName": "red", "peers": {}}, "ipv6Unicast": []}}
    assert parse_bgp_summary(json.dumps(doc).encode()) == [peer("swp1", interface=True)]


def test_a_down_peer_has_no_uptime_and_its_missing_fields_are_unknown() -> None:
    doc = {"peers": {"10.0.0.2": {"state": "Active", "peerUptimeMsec": 5000, "pfxRcd": "x", "pfxSnt": True,
                                  "desc": 5, "hostname": None}}}
    assert parse_bgp_summary(json.dumps(doc)) == [BgpPeer("default", "ipv4Unicast", "10.0.0.2", False, "", "Active",
                                                          False, None, None, None, None, None, None, None)]


@pytest.mark.parametrize("fields, admin", [({"state": "Idle (Admin)"}, True), ({"peerState": "Admin"}, True),
                                           ({"state": "Idle", "peerState": "OK"}, False), ({}, False)])
def test_an_administratively_shut_peer_is_known_by_either_sign(fields: dict[str, str], admin: bool) -> None:
    got = parse_bgp_summary(json.dumps({"peers": {"p": fields}}))[0]
    assert got.admin_down is admin and got.state == fields.get("state", "Unknown")


def test_a_peer_is_up_only_when_established_and_its_base_state_drops_the_reason() -> None:
    assert peer().up and not peer(state="Idle (Admin)").up
    assert peer(state="Idle (Admin)").base_state == "Idle"


@pytest.mark.parametrize("text, error, message", [
    ("", ParseError, "vtysh printed nothing"),
    ("  \n", ParseError, "vtysh printed nothing"),
    ("% Unknown command: show bgp vrf all summary json\nmore", ParseError,
     "vtysh did not print JSON: '% Unknown command: show bgp vrf all summary json'"),
    ("{" + "x" * 100, ParseError, None),
    ("{}", CollectorError, "bgpd has no BGP instance (`router bgp` is not configured): vtysh printed {}"),
    ('{"default": 3}', ParseError, "VRF 'default': expected an object, got int"),
    ('{"peers": []}', ParseError, "default/ipv4Unicast: 'peers' is not an object"),
    ('{"peers": {"p": 1}}', ParseError, "default/ipv4Unicast/p: peer is not an object"),
])
def test_each_bad_summary_is_an_error_in_these_words(text: str, error: type[Exception], message: str | None) -> None:
    with pytest.raises(error) as err:
        parse_bgp_summary(text)
    if message is None:
        assert str(err.value).startswith("vtysh JSON is malformed (") and str(err.value).endswith(
            repr(("{" + "x" * 100)[:80]))
    else:
        assert str(err.value) == message and type(err.value) is error


def test_a_json_list_is_not_a_summary() -> None:
    with pytest.raises(ParseError) as err:
        parse_bgp_summary("[1]")
    assert "did not print JSON" in str(err.value)


def test_neighbors_with_vrf_all_are_keyed_by_vrf_and_peer() -> None:
    doc = {"default": {"vrfId": 0, "vrfName": "default",
                       "10.0.0.1": {"lastResetDueTo": "Peer closed the session", "nbrDesc": "edge", "hostname": "e1"}},
           "blue": {"vrfId": 7, "10.1.0.1": {"lastResetDueTo": "Admin. shutdown"}}}
    assert parse_bgp_neighbors(json.dumps(doc)) == {
        ("default", "10.0.0.1"): NeighborDetail("Peer closed the session", "edge", "e1"),
        ("blue", "10.1.0.1"): NeighborDetail("Admin. shutdown", None, None)}


def test_neighbors_without_vrf_all_sit_at_the_top_and_belong_to_default() -> None:
    doc = {"10.0.0.1": {"lastResetDueTo": "BGP Notification send", "nbrDesc": "x"}, "swp1": {"hostname": "leaf"}}
    assert parse_bgp_neighbors(json.dumps(doc)) == {
        ("default", "10.0.0.1"): NeighborDetail("BGP Notification send", "x", None),
        ("default", "swp1"): NeighborDetail(None, None, "leaf")}


@pytest.mark.parametrize("text, message", [("nope", "neighbors JSON is malformed: "), ("[]", "neighbors JSON is not an object")])
def test_bad_neighbors_replies_are_errors(text: str, message: str) -> None:
    with pytest.raises(ParseError) as err:
        parse_bgp_neighbors(text)
    assert str(err.value).startswith(message)


def run(code: int, out: str = "", err: str = "") -> CommandResult:
    return CommandResult(("vtysh",), code, out.encode(), err.encode())


@pytest.mark.parametrize("res, message", [
    (run(1, err="vtysh: connect: Permission denied\nother"),
     "vtysh summary: permission denied on the vty sockets (vtysh: connect: Permission denied); add the user to "
     "group frrvty, or run vtysh with sudo"),
    (run(1, err="zebra is not running\nbgpd is not running"),
     "vtysh summary: zebra is not running (is bgpd running, and is the vty socket directory in the vtysh argv right?)"),
    (run(1, err="Exiting: failed to connect to any daemons."),
     "vtysh summary: Exiting: failed to connect to any daemons. (is bgpd running, and is the vty socket directory "
     "in the vtysh argv right?)"),
    (run(2, out="", err="  % Unknown command  "), "vtysh summary exited 2: % Unknown command"),
    (run(2, out="some output " + "y" * 400), f"vtysh summary exited 2: {('some output ' + 'y' * 400)[:300]}"),
])
def test_vtyshs_ways_of_failing_become_one_clear_error(res: CommandResult, message: str) -> None:
    with pytest.raises(CollectorError) as err:
        check_vtysh(res, "summary")
    assert str(err.value) == message


def test_permission_denied_with_output_still_gives_the_output() -> None:
    assert check_vtysh(run(0, out="{}", err="Permission denied on one socket"), "summary") == "{}"
    assert check_vtysh(run(0, out="{\"a\": 1}"), "summary") == "{\"a\": 1}"


def test_a_peer_down_is_one_level_for_the_tile_and_the_alert_warning_while_others_carry_the_routes() -> None:
    """The demo showed bgp_peer_down critical in /alerts while the BGP tile and /network said warning."""
    from app.alerting.engine import Condition, Rule, evaluate
    from collectors.findings import BAD, WARN, Judging
    from collectors.network.frr.findings import findings
    from collectors.network.frr.state import FrrState, Peer

    a = Peer(vrf="default", afi="ipv4Unicast", peer="10.0.0.2", state="Active", up=False)
    b = Peer(vrf="default", afi="ipv4Unicast", peer="10.0.0.3", state="Established", up=True)
    rule = {"bgp_peer_down": Rule("bgp_peer_down", "critical", 0)}
    for peers, level, severity in (([a, b], WARN, "warning"), ([a, b.model_copy(update={"up": False})], BAD, "critical")):
        (f, *_) = [f for f in findings(FrrState(peers=peers), Judging(host="h")) if f.rule == "bgp_peer_down"]
        assert (f.level, f.severity) == (level, severity)
        states, _ = evaluate([Condition(f.rule, f.subject, f.text, {}, f.severity)], rule, {}, 1000.0, set())
        assert {s.severity for s in states.values()} == {severity}
