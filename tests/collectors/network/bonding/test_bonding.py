"""Bonding status files: real captures, a modern 802.3ad layout, bad input, and the collector."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.base import NoData, ParseError
from collectors.network.bonding.collector import BondingCollector, parse_bonding
from tests.paths import FIXTURES

DIR = FIXTURES / "bonding"

# file -> (mode, hash policy, active slave, [(slave, up, speed, failures)])
EXPECTED = {
    "insights-core__proc_net_bonding__active-backup_arp-monitor": (
        "active-backup", None, "em3", [("em3", True, 1000, 92028), ("p2p3", True, 1000, 71524)]),
    "insights-core__proc_net_bonding__balance-rr": ("balance-rr", None, None, [("eno1", True, 1000, 0),
                                                                               ("eno2", True, 1000, 0)]),
    "insights-core__proc_net_bonding__balance-xor": ("balance-xor", "layer2+3 (2)", None,
                                                     [("eno1", True, 1000, 0), ("eno2", True, 1000, 0)]),
    "telegraf__proc_net_bonding__802.3ad_second-down": ("802.3ad", "layer2 (0)", None,
                                                        [("eth0", True, 10000, 2), ("eth1", False, None, 1)]),
    "telegraf__proc_net_bonding__active-backup_slave-down": ("active-backup", None, "eth2",
                                                             [("eth3", False, 1000, 2), ("eth2", True, 100, 0)]),
}

MODERN_LACP = """Ethernet Channel Bonding Driver: v6.1.0

Bonding Mode: IEEE 802.3ad Dynamic link aggregation
Transmit Hash Policy: layer3+4 (1)
MII Status: up
MII Polling Interval (ms): 100
Up Delay (ms): 0
Down Delay (ms): 0
Peer Notification Delay (ms): 0

802.3ad info
LACP active: on
LACP rate: slow
Min links: 0
Aggregator selection policy (ad_select): stable
System priority: 65535
System MAC address: 52:54:00:12:34:56
Active Aggregator Info:
\tAggregator ID: 1
\tNumber of ports: 2
\tActor Key: 15
\tPartner Key: 1
\tPartner Mac Address: 00:11:22:33:44:55

Slave Interface: ens3
MII Status: up
Speed: 1000 Mbps
Duplex: full
Link Failure Count: 0
Permanent HW addr: 52:54:00:12:34:56
Slave queue ID: 0
Aggregator ID: 1
Actor Churn State: none
Partner Churn State: none
Actor Churned Count: 0
Partner Churned Count: 0
details actor lacp pdu:
    system priority: 65535
    system mac address: 52:54:00:12:34:56
    port key: 15
    port priority: 255
    port number: 1
    port state: 61
details partner lacp pdu:
    system priority: 32768
    system mac address: 00:11:22:33:44:55
    oper key: 1
    port priority: 32768
    port number: 1
    port state: 63
"""


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_it_reads_mode_policy_and_each_slave(name: str) -> None:
    b = parse_bonding((DIR / name).read_text())
    mode, policy, active, slaves = EXPECTED[name]
    assert (b.mode, b.hash_policy, b.active_slave) == (mode, policy, active)
    assert [(s.name, s.mii_up, s.speed_mbps, s.link_failures) for s in b.slaves] == slaves


def test_a_modern_lacp_bond_with_pdu_details_parses() -> None:
    b = parse_bonding(MODERN_LACP)
    assert b.mode == "802.3ad" and b.hash_policy == "layer3+4 (1)"
    assert b.slaves[0].aggregator_id == 1
    assert b.slaves[0].fields["details partner lacp pdu port state"] == "63"
    assert b.fields["Partner Mac Address"] == "00:11:22:33:44:55"


@pytest.mark.parametrize(("text", "message"), [
    ("", "not a bonding status file"),
    ("Inter-|   Receive\n face |bytes\n", "not a bonding status file"),
    ("Ethernet Channel Bonding Driver: v3.7.1\n\nMII Status: up\n", "no 'Bonding Mode'"),
    ("Ethernet Channel Bonding Driver: v3.7.1\nBonding Mode: load balancing (xor)\n\nSlave Interface: eth0\n",
     "no 'MII Status'"),
    ("Ethernet Channel Bonding Driver: v3\nBonding Mode: x\nSlave Interface: eth0\nMII Status: up\n"
     "Link Failure Count: many\n", "bad link failure count"),
    ("Ethernet Channel Bonding Driver: v3\nBonding Mode: x\nwhat is this\n", "unrecognised line"),
])
def test_bad_input_is_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse_bonding(text)


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=900))
def test_any_truncation_parses_or_errors_cleanly(cut: int) -> None:
    try:
        parse_bonding(MODERN_LACP[:cut])
    except ParseError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_no_text_crashes_the_parser(text: str) -> None:
    try:
        parse_bonding("Ethernet Channel Bonding Driver: v3\n" + text)
    except ParseError:
        pass


def _host(tmp_path: Path, files: dict[str, str]) -> Path:
    d = tmp_path / "proc/net/bonding"
    d.mkdir(parents=True)
    for bond, fixture in files.items():
        shutil.copy(DIR / fixture, d / bond)
    return tmp_path


def test_the_collector_counts_slaves_and_notices_new_link_failures(tmp_path: Path) -> None:
    root = _host(tmp_path, {"bond0": "telegraf__proc_net_bonding__802.3ad",
                            "bond1": "insights-core__proc_net_bonding__balance-rr"})
    c = BondingCollector(root)
    r = c.collect()
    got = {(s.metric, dict(s.labels).get("bond"), dict(s.labels).get("slave")): s.value for s in r.samples}
    assert got[("rackpulse_bond_slaves", "bond0", None)] == 2
    assert got[("rackpulse_bond_slaves_up", "bond0", None)] == 2
    assert got[("rackpulse_bond_slave_link_failures_total", "bond0", "eth0")] == 2
    shutil.copy(DIR / "telegraf__proc_net_bonding__802.3ad_second-down", root / "proc/net/bonding/bond0")
    r = c.collect()
    bond0 = next(b for b in r.state.bonds if b.name == "bond0")
    assert bond0.slaves_up == 1 and [s.up for s in bond0.slaves] == [True, False]
    bond1 = next(b for b in r.state.bonds if b.name == "bond1")
    assert "balance-rr" in bond1.hints[0] and "out of order" in bond1.hints[0]


def test_a_broken_bond_file_is_a_warning_and_the_other_bonds_are_read(tmp_path: Path) -> None:
    root = _host(tmp_path, {"bond0": "telegraf__proc_net_bonding__802.3ad"})
    (root / "proc/net/bonding/bond1").write_bytes(b"\x00\x01garbage")
    r = BondingCollector(root).collect()
    assert [b.name for b in r.state.bonds] == ["bond0"]
    assert any("bond1" in w and "NUL" in w for w in r.warnings)


def test_a_host_without_bonding_has_no_data(tmp_path: Path) -> None:
    with pytest.raises(NoData):
        BondingCollector(tmp_path).collect()


def test_the_tile_counts_one_bond_in_the_singular(tmp_path: Path) -> None:
    from collectors.network.bonding.findings import all_clear

    one = BondingCollector(_host(tmp_path / "one", {"bond0": "telegraf__proc_net_bonding__802.3ad"})).collect()
    two = BondingCollector(_host(tmp_path / "two", {"bond0": "telegraf__proc_net_bonding__802.3ad",
                                                    "bond1": "insights-core__proc_net_bonding__balance-rr"})).collect()
    assert all_clear(one.state, None) == "1 bond, all slaves up"  # was "1 bonds"
    assert all_clear(two.state, None) == "2 bonds, all slaves up"
