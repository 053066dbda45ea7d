"""What the bonding collector tells the page and Prometheus, whole, over two polls of real
captures; the advice it gives per bond, each at its edge; and the status file's corners
(indented lines, unknown modes, the kernel's "None" and "Unknown", missing lines)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from collectors.base import ParseError
from collectors.network.bonding.collector import Bond, BondingCollector, Slave, bond_hints, parse_bonding
from tests.collectors.golden import as_json, matches_golden
from tests.paths import FIXTURES

DIR = FIXTURES / "bonding"
HEADER = "Ethernet Channel Bonding Driver: v3.7.1 (April 27, 2011)\n\n"


def bump_failures(text: str, by: int) -> str:
    return re.sub(r"Link Failure Count: (\d+)", lambda m: f"Link Failure Count: {max(0, int(m[1]) + by)}", text)


def test_two_polls_of_every_capture_report_exactly_the_stored_result(tmp_path: Path) -> None:
    bonding = tmp_path / "proc/net/bonding"
    bonding.mkdir(parents=True)
    names = sorted(p.name for p in DIR.iterdir())
    for i, name in enumerate(names):
        shutil.copy(DIR / name, bonding / f"bond{i}")
    c = BondingCollector(tmp_path)
    first = as_json(c.collect())
    # Between polls: bond0's links fail 3 more times each; bond1's counters restart (a reboot
    # of the driver), which is not a negative number of new failures.
    (bonding / "bond0").write_text(bump_failures((DIR / names[0]).read_text(), 3))
    (bonding / "bond1").write_text(bump_failures((DIR / names[1]).read_text(), -10**6))
    second = as_json(c.collect())
    assert matches_golden("bonding-two-polls", {"first": first, "second": second})
    assert [s["new_failures"] for s in second["state"]["bonds"][0]["slaves"]] == [3, 3]
    assert [s["new_failures"] for s in second["state"]["bonds"][1]["slaves"]] == [0, 0]
    assert [s["new_failures"] for s in first["state"]["bonds"][0]["slaves"]] == [0, 0]


def test_only_the_configured_bonds_are_read(tmp_path: Path) -> None:
    bonding = tmp_path / "proc/net/bonding"
    bonding.mkdir(parents=True)
    for name in ("bond0", "bond1"):
        shutil.copy(DIR / "insights-core__proc_net_bonding__balance-rr", bonding / name)
    state = BondingCollector(tmp_path, bonds=["bond1"]).collect().state
    assert [b.name for b in state.bonds] == ["bond1"]  # type: ignore[union-attr]


def slave(name: str, up: bool = True, speed: int | None = 1000) -> Slave:
    return Slave(name, up, speed, "full", 0, None)


def bond(mode: str, *slaves: Slave, miimon: int | None = 100, **fields: str) -> Bond:
    return Bond(mode, mode, True, None, None, miimon, tuple(slaves), dict(fields))


RR = ("balance-rr sprays the packets of every TCP flow across {why}: they arrive out of order, TCP takes that "
      "as loss and slows down, so one flow gets less than one link. balance-xor or 802.3ad with "
      "xmit_hash_policy=layer3+4 keeps each flow on one link.")
NO_MONITOR = "No link monitoring (miimon=0 and no arp_interval): a dead slave is never noticed."

HINTS = [
    ("round-robin over two equal links", bond("balance-rr", slave("a"), slave("b")), [RR.format(why="several links")]),
    ("round-robin over unequal links", bond("balance-rr", slave("a"), slave("b", speed=100)),
     [RR.format(why="links of unequal speed")]),
    ("a down link's speed does not count", bond("balance-rr", slave("a"), slave("b"), slave("c", False, 100)),
     [RR.format(why="several links")]),
    ("links without a speed do not count", bond("balance-rr", slave("a"), slave("b", speed=None)),
     [RR.format(why="several links")]),
    ("round-robin with one link up", bond("balance-rr", slave("a"), slave("b", False)), []),
    ("xor over two links", bond("balance-xor", slave("a"), slave("b", speed=100)), []),
    ("active-backup without monitoring", bond("active-backup", slave("a"), miimon=0), [NO_MONITOR]),
    ("active-backup with ARP monitoring", bond("active-backup", slave("a"), miimon=0,
                                               **{"ARP Polling Interval (ms)": "100"}), []),
    ("active-backup with miimon", bond("active-backup", slave("a"), miimon=100), []),
    ("active-backup whose miimon is unreadable", bond("active-backup", slave("a"), miimon=None), []),
    ("xor without monitoring", bond("balance-xor", slave("a"), miimon=0), []),
]


@pytest.mark.parametrize("what, b, hints", HINTS, ids=[h[0] for h in HINTS])
def test_the_advice_for_a_bond(what: str, b: Bond, hints: list[str]) -> None:
    assert bond_hints(b) == hints


def test_indented_lines_outside_a_details_block_are_read_as_plain_lines() -> None:
    b = parse_bonding(HEADER + "Bonding Mode: load balancing (xor)\n\tMII Status: up\n\n"
                      "Slave Interface: eth0\n\tMII Status: up\n")
    assert b.mii_up and b.slaves[0].mii_up


def test_tab_indented_lacp_details_belong_to_their_block() -> None:
    b = parse_bonding(HEADER + "Bonding Mode: IEEE 802.3ad Dynamic link aggregation\nMII Status: up\n\n"
                      "Slave Interface: eth0\nMII Status: up\ndetails actor lacp pdu:\n\tport state: 61\n")
    assert b.slaves[0].fields["details actor lacp pdu port state"] == "61"
    assert "port state" not in b.slaves[0].fields


def test_the_active_aggregator_heading_is_a_key_not_an_error() -> None:
    b = parse_bonding(HEADER + "Bonding Mode: IEEE 802.3ad Dynamic link aggregation\n\n802.3ad info\n"
                      "Active Aggregator Info:\n\tAggregator ID: 1\n")
    assert b.mode == "802.3ad" and b.fields["Active Aggregator Info"] == ""


@pytest.mark.parametrize("line, mode", [
    ("fault-tolerance (active-backup) (fail_over_mac active)", "active-backup"),
    ("transmit load balancing", "balance-tlb"),
    ("adaptive load balancing", "balance-alb"),
    ("fault-tolerance (broadcast)", "broadcast"),
    ("some future mode", "some future mode"),
])
def test_the_mode_gets_its_short_name_and_an_unknown_one_keeps_the_kernels_words(line: str, mode: str) -> None:
    b = parse_bonding(HEADER + f"Bonding Mode: {line}\n")
    assert (b.mode, b.mode_text) == (mode, line)


@pytest.mark.parametrize("value, read", [("full", "full"), ("Unknown", None), ("None", None), ("none", None),
                                         ("", None)])
def test_the_kernels_words_for_nothing_read_as_nothing(value: str, read: str | None) -> None:
    b = parse_bonding(HEADER + f"Bonding Mode: x\nCurrently Active Slave: {value}\n\n"
                      f"Slave Interface: eth0\nMII Status: up\nDuplex: {value}\n")
    assert (b.active_slave, b.slaves[0].duplex) == (read, read)


def test_a_slave_without_speed_or_failure_lines_has_no_speed_and_no_failures() -> None:
    b = parse_bonding(HEADER + "Bonding Mode: x\n\nSlave Interface: eth0\nMII Status: down\n")
    s = b.slaves[0]
    assert (s.speed_mbps, s.link_failures, s.mii_up, s.perm_hwaddr, s.aggregator_id) == (None, 0, False, None, None)
    b = parse_bonding(HEADER + "Bonding Mode: x\n\nSlave Interface: eth0\nMII Status: up\nSpeed: Unknown\n")
    assert b.slaves[0].speed_mbps is None


@pytest.mark.parametrize("text, message", [
    ("", "not a bonding status file: first line ''"),
    ("\n\nx" * 1 + "y" * 150, f"not a bonding status file: first line {'x' + 'y' * 99!r}"),
    ("Ethernet Channel Bonding Driver\x00", "not a bonding status file: contains NUL bytes"),
    (HEADER + "MII Status: up\n", "bonding status has no 'Bonding Mode' line (truncated file?)"),
    (HEADER + "Bonding Mode: x\n\nSlave Interface: eth9\n", "slave eth9: no 'MII Status' line (truncated file?)"),
    (HEADER + "Bonding Mode: x\n\nSlave Interface: eth9\nMII Status: up\nLink Failure Count: -1\n",
     "slave eth9: bad link failure count: '-1'"),
    (HEADER + "Bonding Mode: x\n802.3ad details\n", "unrecognised line in bonding status: '802.3ad details'"),
])
def test_each_broken_file_is_an_error_in_these_words(text: str, message: str) -> None:
    with pytest.raises(ParseError) as err:
        parse_bonding(text)
    assert str(err.value) == message
