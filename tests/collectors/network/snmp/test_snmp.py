"""SNMP switch ports: the IF-MIB parser, and the collector against a real net-snmp snmpd."""

from __future__ import annotations

import inspect
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectors.network.snmp.collector as snmp_module
from collectors.base import CollectorError
from collectors.network.snmp.collector import (
    IF_TABLE,
    IF_X_TABLE,
    Port,
    SnmpCollector,
    count_flaps,
    parse_if_walk,
)
from collectors.snmpwire import SnmpTarget
from tests.peers import running
from tests.peers.snmpd import Snmpd


def vb(col: str, idx: int, value: object) -> tuple[str, object]:
    return (f"{col}.{idx}", value)


def test_64bit_counters_win_over_wrapped_32bit_ones_and_names_come_from_ifxtable() -> None:
    ports = parse_if_walk([
        vb(f"{IF_TABLE}.2", 2, "ge1"), vb(f"{IF_TABLE}.7", 2, 1), vb(f"{IF_TABLE}.8", 2, 1),
        vb(f"{IF_TABLE}.10", 2, 305039742), vb(f"{IF_TABLE}.16", 2, 10), vb(f"{IF_TABLE}.5", 2, 4294967295),
        vb(f"{IF_X_TABLE}.1", 2, "Gi0/2"), vb(f"{IF_X_TABLE}.6", 2, 4600007038), vb(f"{IF_X_TABLE}.10", 2, 20),
        vb(f"{IF_X_TABLE}.15", 2, 10000), vb(f"{IF_X_TABLE}.18", 2, "uplink"),
    ])
    p = ports[0]
    assert (p.name, p.alias, p.in_octets, p.counters_64bit, p.speed_bps) == ("Gi0/2", "uplink", 4600007038, True,
                                                                             10_000_000_000)


def test_an_agent_without_ifxtable_falls_back_to_32bit_counters() -> None:
    p = parse_if_walk([vb(f"{IF_TABLE}.2", 1, "eth0"), vb(f"{IF_TABLE}.8", 1, 2), vb(f"{IF_TABLE}.10", 1, 99),
                       vb(f"{IF_TABLE}.16", 1, 7)])[0]
    assert (p.name, p.oper, p.in_octets, p.counters_64bit) == ("eth0", "down", 99, False)


def test_a_partial_walk_without_oper_status_is_a_clear_error() -> None:
    with pytest.raises(CollectorError, match="no ifOperStatus"):
        parse_if_walk([vb(f"{IF_TABLE}.2", 1, "eth0")])


def test_a_bounce_between_polls_is_seen_through_iflastchange() -> None:
    port = Port(1, "ge1", "", True, "up", None, 5000, None, None, False, None, None, None, None)
    assert count_flaps(None, port) == 0
    assert count_flaps(("up", 5000), port) == 0
    assert count_flaps(("down", 4000), port) == 1
    assert count_flaps(("up", 4000), port) == 2


def test_the_collector_never_sends_a_set() -> None:
    assert "set_cmd" not in inspect.getsource(snmp_module)


def test_secrets_are_not_in_the_targets_repr() -> None:
    t = SnmpTarget(name="sw", host="127.0.0.1", community="topsecret", auth_password="authpw", priv_password="privpw")
    assert "topsecret" not in repr(t) and "authpw" not in repr(t)


@pytest.fixture(scope="module")
def agent() -> Iterator[Snmpd]:
    with running(Snmpd, "snmp") as a:
        yield a


def ports_of(c: SnmpCollector) -> dict[str, dict]:  # type: ignore[type-arg]
    return {p.name: p for p in c.collect().state.targets[0].ports}


def test_v2c_walk_reads_the_real_agents_ports(agent: Snmpd) -> None:
    c = SnmpCollector([SnmpTarget(name="sw", host="127.0.0.1", port=agent.port, community=agent.community, timeout=1, retries=0)])
    r = c.collect()
    ports = {p.name: p for p in r.state.targets[0].ports}
    assert "lo" in ports and agent.veth[0] in ports
    assert ports["lo"].oper == "up" and ports["lo"].counters_64bit
    up = {dict(s.labels)["interface"]: s.value for s in r.samples if s.metric == "rackpulse_snmp_interface_oper_up"}
    assert up["lo"] == 1


@pytest.mark.parametrize(("user", "auth", "priv", "auth_proto", "priv_proto"), [
    ("monitor", "monitor-authpass", "monitor-privpass", "SHA", "AES"),
    ("monauth", "monauth-authpass", None, "SHA-256", "none"),
])
def test_v3_users_with_auth_and_privacy_work(agent: Snmpd, user: str, auth: str, priv: str | None, auth_proto: str,
                                             priv_proto: str) -> None:
    t = SnmpTarget(name="sw", host="127.0.0.1", port=agent.port, version="3", user=user, auth_password=auth, priv_password=priv,
               auth_protocol=auth_proto, priv_protocol=priv_proto, timeout=1, retries=0)
    assert "lo" in ports_of(SnmpCollector([t]))


@pytest.mark.parametrize(("target_kw", "message"), [
    ({"community": "wrong"}, "no response within 1s x 1 (wrong community"),
    ({"version": "3", "user": "monitor", "auth_password": "wrong-password", "priv_password": "monitor-privpass"},
     "authentication failed"),
    ({"version": "3", "user": "nobody", "auth_password": "whatever-pass", "priv_password": "whatever-pass"},
     "unknown SNMPv3 user 'nobody'"),
])
def test_wrong_credentials_give_clear_errors(agent: Snmpd, target_kw: dict, message: str) -> None:  # type: ignore[type-arg]
    t = SnmpTarget(name="sw", host="127.0.0.1", port=agent.port, timeout=1, retries=0, **target_kw)
    with pytest.raises(CollectorError) as err:
        SnmpCollector([t]).collect()
    assert message in str(err.value)
    assert "wrong-password" not in str(err.value)


def test_a_dead_target_is_an_error_and_does_not_hide_a_live_one(agent: Snmpd) -> None:
    from tests.peers.snmpd import free_udp_port

    c = SnmpCollector([SnmpTarget(name="dead", host="127.0.0.1", port=free_udp_port(), community="x", timeout=0.5, retries=0),
                       SnmpTarget(name="sw", host="127.0.0.1", port=agent.port, community=agent.community, timeout=1, retries=0)])
    r = c.collect()
    assert [t.up for t in r.state.targets] == [False, True]
    assert any("dead (127.0.0.1:" in w and "no response" in w for w in r.warnings)


def test_a_bouncing_port_counts_flaps(agent: Snmpd) -> None:
    c = SnmpCollector([SnmpTarget(name="sw", host="127.0.0.1", port=agent.port, community=agent.community, timeout=1, retries=0)])
    port = agent.veth[0]

    def poll_until(want_up: bool) -> Any:
        # snmpd caches its interface table for a few seconds; poll as a collector would.
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            got = ports_of(c)[port]
            if (got.oper == "up") is want_up:
                return got
            time.sleep(0.5)
        raise AssertionError(f"{port} never went {'up' if want_up else 'down'}")

    assert poll_until(True).flaps == 0
    agent.set_link(False)
    down = poll_until(False)
    assert down.oper in ("down", "lowerLayerDown") and down.flaps == 1
    agent.set_link(True)
    assert poll_until(True).flaps == 2


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(list(snmp_module.COLUMNS)), st.integers(1, 5),
                          st.one_of(st.integers(-5, 2**64), st.text(max_size=6), st.none())), max_size=40))
def test_no_walk_crashes_the_parser(rows: list[tuple[str, int, object]]) -> None:
    try:
        parse_if_walk([(f"{col}.{idx}", value) for col, idx, value in rows])
    except CollectorError:
        pass
