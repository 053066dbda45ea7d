"""The switch-port walk at its edges: a whole walk read into ports field by field, odd values
an agent sends, flaps counted from ifLastChange, and pysnmp's errors in words a user can act on."""

from __future__ import annotations

import pytest

from collectors.base import CollectorError
from collectors.network.snmp.collector import (
    IF_TABLE,
    IF_X_TABLE,
    Port,
    _value,
    count_flaps,
    explain,
    parse_if_walk,
)
from collectors.snmpwire import SnmpTarget


def port(**kw: object) -> Port:
    base: dict[str, object] = dict(index=1, name="1", alias="", admin_up=False, oper="unknown", speed_bps=None,
                                   last_change=None, in_octets=None, out_octets=None, counters_64bit=False,
                                   in_errors=None, out_errors=None, in_discards=None, out_discards=None)
    base.update(kw)
    return Port(**base)  # type: ignore[arg-type]


def test_a_whole_walk_reads_every_column_into_its_field() -> None:
    walk = [(f".{IF_TABLE}.{col}.7", v) for col, v in ((2, "ge-0/0/7"), (5, 1_000_000_000), (7, 1), (8, 7),
                                                        (9, 12345), (10, 11), (13, 1), (14, 2), (16, 22), (19, 3),
                                                        (20, 4))]
    walk += [(f"{IF_X_TABLE}.{col}.7", v) for col, v in ((1, "ge-0/0/7"), (6, 111), (10, 222), (15, 0),
                                                         (18, "fibre to nas"))]
    walk += [(f"{IF_TABLE}.8.3", 1), (f"{IF_TABLE}.2.3", ""), (f"{IF_TABLE}.99.3", "unknown column"),
             (f"{IF_TABLE}.8.x", 1), ("1.3.6.1.2.1.1.3.0", 5)]
    assert parse_if_walk(walk) == [
        port(index=3, name="3", oper="up"),
        port(index=7, name="ge-0/0/7", alias="fibre to nas", admin_up=True, oper="lowerLayerDown",
             speed_bps=1_000_000_000, last_change=12345, in_octets=111, out_octets=222, counters_64bit=True,
             in_errors=2, out_errors=4, in_discards=1, out_discards=3),
    ]


@pytest.mark.parametrize("oper, word", [(1, "up"), (2, "down"), (3, "testing"), (5, "dormant"), (6, "notPresent"),
                                        (9, "unknown"), ("noSuchInstance", "unknown")])
def test_every_oper_status_has_its_name(oper: object, word: str) -> None:
    assert parse_if_walk([(f"{IF_TABLE}.8.1", oper)])[0].oper == word


def test_only_both_64bit_counters_make_a_port_64bit() -> None:
    p = parse_if_walk([(f"{IF_TABLE}.8.1", 1), (f"{IF_TABLE}.10.1", 5), (f"{IF_TABLE}.16.1", 6),
                       (f"{IF_X_TABLE}.6.1", 50)])[0]
    assert (p.counters_64bit, p.in_octets, p.out_octets) == (False, 5, 6)


def test_a_partial_walk_says_which_port_lacks_its_status() -> None:
    with pytest.raises(CollectorError) as err:
        parse_if_walk([(f"{IF_TABLE}.8.1", 1), (f"{IF_TABLE}.2.12", "x")])
    assert str(err.value) == "ifIndex 12: the agent returned no ifOperStatus (a partial walk?)"


@pytest.mark.parametrize("prev, last_change, oper, flaps", [
    (None, 100, "up", 0),
    (("up", 100), 100, "up", 0),
    (("up", 100), 200, "up", 2),
    (("up", 100), 200, "down", 1),
    (("up", None), 200, "up", 0),
    (("up", 100), None, "up", 0),
    (("down", None), None, "up", 1),
])
def test_flaps_are_counted_from_status_and_last_change(prev: tuple[str, int | None] | None, last_change: int | None,
                                                       oper: str, flaps: int) -> None:
    assert count_flaps(prev, port(oper=oper, last_change=last_change)) == flaps


class RequestTimedOut(Exception):
    pass


class WrongDigest(Exception):
    pass


V2 = SnmpTarget(name="rack-sw", host="192.0.2.10", port=161, community="c", timeout=1.5, retries=2)
V3 = SnmpTarget(name="core", host="192.0.2.11", port=1161, version="3", user="monitor", timeout=2, retries=0)


@pytest.mark.parametrize("target, indication, message", [
    (V2, RequestTimedOut("x"), "rack-sw (192.0.2.10:161): no response within 1.5s x 3 (wrong community, wrong "
                               "address, or agent down)"),
    (V3, "No SNMP response received before timeout", "core (192.0.2.11:1161): no response within 2s x 1 (wrong "
                                                     "address, or agent down)"),
    (V2, "Request timed out", "rack-sw (192.0.2.10:161): no response within 1.5s x 3 (wrong community, wrong "
                              "address, or agent down)"),
    (V3, WrongDigest("x"), "core (192.0.2.11:1161): SNMPv3 authentication failed (wrong auth password or protocol "
                           "for user 'monitor')"),
    (V3, "Wrong SNMP PDU digest", "core (192.0.2.11:1161): SNMPv3 authentication failed (wrong auth password or "
                                  "protocol for user 'monitor')"),
    (V3, "Unknown USM user", "core (192.0.2.11:1161): unknown SNMPv3 user 'monitor'"),
    (V3, "UnknownUserName", "core (192.0.2.11:1161): unknown SNMPv3 user 'monitor'"),
    (V3, "Unsupported SNMP security level", "core (192.0.2.11:1161): user 'monitor' does not support this security "
                                            "level (auth/priv settings)"),
    (V3, "Ciphering services not available", "core (192.0.2.11:1161): SNMPv3 privacy needs the 'cryptography' "
                                             "package"),
    (V2, "something else", "rack-sw (192.0.2.10:161): something else"),
])
def test_pysnmp_errors_become_words_a_user_can_act_on(target: SnmpTarget, indication: object, message: str) -> None:
    assert explain(target, indication) == message


class Pretty:
    def prettyPrint(self) -> str:  # noqa: N802 (pysnmp's name)
        return "ge-0/0/7"


@pytest.mark.parametrize("raw, value", [(7, 7), ("12", 12), (Pretty(), "ge-0/0/7"), (None, "None"), ("eth0", "eth0")])
def test_varbind_values_become_numbers_where_they_are_numbers(raw: object, value: object) -> None:
    assert _value(raw) == value
