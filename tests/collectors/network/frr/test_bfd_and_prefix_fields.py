"""BFD sessions and prefix counts field by field: every key bfdd's ``_display_peer_json`` and
``__display_peer_counters_json`` write (FRR bfdd/bfdd_vty.c), the defaults when one is left out,
values of the wrong type, and the exact words of each refusal; the prefix-count walk of
bgp_vty.c and the peak of accepted prefixes at its window's edge."""

from __future__ import annotations

import json

import pytest

from collectors.base import ParseError
from collectors.network.frr.bfd import BfdSession, parse_bfd_peers
from collectors.network.frr.prefixes import PeakWatch, afi_prefixes, parse_prefix_walk

MULTIHOP = {"multihop": True, "peer": "192.0.2.9", "local": "192.0.2.1", "vrf": "red", "id": 11,
            "remote-id": 22, "status": "up", "uptime": 3600, "downtime": 99, "diagnostic": "ok",
            "remote-diagnostic": "neighbor signaled session down"}
DOWN = {"peer": "fe80::2", "interface": "eth1", "id": 5, "remote-id": True, "status": "down", "uptime": 7,
        "downtime": 120.5, "diagnostic": "control detection time expired", "remote-diagnostic": "ok"}
SHUT = {"peer": "10.0.0.3", "multihop": "yes", "status": "shutdown", "id": "12", "downtime": "long"}


def test_every_field_of_a_session_is_read_and_the_missing_ones_have_their_defaults() -> None:
    up, down, shut, bare = parse_bfd_peers(json.dumps([MULTIHOP, DOWN, SHUT, {"peer": "10.0.0.4"}]))
    assert up == BfdSession(peer="192.0.2.9", local="192.0.2.1", vrf="red", interface="", multihop=True,
                            status="up", uptime_seconds=3600.0, downtime_seconds=None, diagnostic="ok",
                            remote_diagnostic="neighbor signaled session down", local_discriminator=11,
                            remote_discriminator=22, flaps=None)
    # a session that is not up has a downtime and no uptime, whatever else bfdd printed
    assert down == BfdSession(peer="fe80::2", local="", vrf="default", interface="eth1", multihop=False,
                              status="down", uptime_seconds=None, downtime_seconds=120.5,
                              diagnostic="control detection time expired", remote_diagnostic="ok",
                              local_discriminator=5, remote_discriminator=None)  # true is not a number
    assert (shut.multihop, shut.status, shut.downtime_seconds, shut.local_discriminator) == (False, "shutdown", None, None)
    assert shut.admin_down and not shut.up and down.key == "default/fe80::2%eth1" and up.key == "red/192.0.2.9"
    assert (bare.status, bare.vrf, bare.diagnostic, bare.remote_diagnostic) == ("unknown", "default", "", "")
    assert not bare.admin_down and not bare.up


def test_flaps_come_from_the_counters_matched_by_vrf_peer_local_and_interface() -> None:
    counters = json.dumps([
        "not a session",
        {"peer": "192.0.2.9", "local": "192.0.2.1", "vrf": "red", "session-down": 3},
        {"peer": "fe80::2", "interface": "eth1", "session-down": 7},  # no vrf: the default one
        {"peer": "10.0.0.3", "session-down": True},  # not a count
        {"peer": "10.0.0.4", "vrf": "blue", "session-down": 9},  # another VRF's session of that peer
    ])
    up, down, shut, other = parse_bfd_peers(json.dumps([MULTIHOP, DOWN, SHUT, {"peer": "10.0.0.4"}]), counters)
    assert (up.flaps, down.flaps, shut.flaps, other.flaps) == (3, 7, None, None)


def test_a_bad_answer_is_refused_in_words_that_name_the_command() -> None:
    with pytest.raises(ParseError) as err:
        parse_bfd_peers('{"peer": "10.0.0.1"}')
    assert str(err.value) == "show bfd peers json: not a JSON list: '{\"peer\": \"10.0.0.1\"}'"
    with pytest.raises(ParseError) as err:
        parse_bfd_peers("[]", "[{truncated")
    assert str(err.value).startswith("show bfd peers counters json: malformed JSON")
    with pytest.raises(ParseError) as err:
        parse_bfd_peers("[1")
    assert str(err.value).startswith("show bfd peers json: malformed JSON")
    session = {"local": "10.0.0.1", "diagnostic": "x" * 300}
    with pytest.raises(ParseError) as err:
        parse_bfd_peers(json.dumps([{"peer": "10.0.0.2"}, session]))
    assert str(err.value) == f"show bfd peers json: session 1 has no peer address: {str(session)[:120]!r}"
    with pytest.raises(ParseError, match="session 0 has no peer address: 'x'"):
        parse_bfd_peers('["x"]')
    assert parse_bfd_peers("", "") == [] and parse_bfd_peers("[]", "[]") == []


def test_a_json_that_is_a_list_but_not_of_lists_is_refused_by_its_shape() -> None:
    # tool_json is asked for a list: an object is refused before it is read
    with pytest.raises(ParseError, match="show bfd peers counters json: not a JSON list"):
        parse_bfd_peers("[]", '{"session-down": 1}')


def test_prefix_figures_per_address_family_take_only_whole_numbers() -> None:
    info = {"addressFamilyInfo": {
        "ipv4Unicast": {"acceptedPrefixCounter": 5, "sentPrefixCounter": 6, "prefixAllowedMax": 100,
                        "inboundSoftConfigPermit": True},
        "ipv6Unicast": {"acceptedPrefixCounter": True, "sentPrefixCounter": "6", "inboundSoftConfigPermit": "yes"},
        "l2VpnEvpn": "not an object"}}
    got = afi_prefixes(info)
    assert set(got) == {"ipv4Unicast", "ipv6Unicast"}
    assert (got["ipv4Unicast"].accepted, got["ipv4Unicast"].sent, got["ipv4Unicast"].limit,
            got["ipv4Unicast"].soft_in) == (5, 6, 100, True)
    assert (got["ipv6Unicast"].accepted, got["ipv6Unicast"].sent, got["ipv6Unicast"].limit,
            got["ipv6Unicast"].soft_in) == (None, None, None, False)
    assert afi_prefixes({"addressFamilyInfo": []}) == {} and afi_prefixes({}) == {}


def test_the_prefix_walk_says_what_it_could_not_read() -> None:
    assert parse_prefix_walk('{"ribTableWalkCounters": {"Adj-in": 5}, "pfxCounter": 4}') == (5, 4)
    assert parse_prefix_walk('{"ribTableWalkCounters": {"Adj-in": 5}, "pfxCounter": false}') == (5, None)
    with pytest.raises(ParseError) as err:
        parse_prefix_walk("{oops")
    assert str(err.value).startswith("prefix-counts JSON is malformed: ")
    doc = {"prefixCountsFor": "10.0.0.1", "ribTableWalkCounters": {"Adj-in": True}, "pad": "y" * 200}
    with pytest.raises(ParseError) as err:
        parse_prefix_walk(json.dumps(doc))
    assert str(err.value) == f"prefix-counts JSON has no ribTableWalkCounters.Adj-in: {str(doc)[:120]!r}"
    with pytest.raises(ParseError, match=r"no ribTableWalkCounters.Adj-in: '\[1, 2\]'"):
        parse_prefix_walk("[1, 2]")
    with pytest.raises(ParseError, match="no ribTableWalkCounters.Adj-in"):
        parse_prefix_walk('{"ribTableWalkCounters": [5]}')


def test_the_peak_keeps_a_reading_exactly_the_window_old_and_forgets_a_session_without_a_count() -> None:
    w = PeakWatch(600)
    assert w.peak("a", 0, True, 1, 100) == 100
    assert w.peak("a", 600, True, 1, 50) == 100  # exactly the window old: still in it
    assert w.peak("a", 601, True, 1, 40) == 50
    assert w.peak("b", 0, True, 1, 70) == 70
    assert w.peak("b", 10, True, 1, None) is None  # up, but no count: starts afresh
    assert w.peak("b", 20, True, 1, 10) == 10
    assert w.peak("a", 602, False, 1, 40) is None  # down: forgotten
    assert w.peak("a", 603, True, 1, 30) == 30
