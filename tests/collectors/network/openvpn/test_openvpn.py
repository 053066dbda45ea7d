"""OpenVPN: status formats over real captures, and the collector against a real server,
real clients, the management interface and real tun drop counters."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.base import CollectorError, ParseError
from collectors.network.openvpn.collector import OpenvpnCollector, tuning_hints
from collectors.network.openvpn.config import Instance
from collectors.network.openvpn.status import (
    parse_load_stats,
    parse_openvpn_config,
    parse_state,
    parse_status,
)
from tests.paths import FIXTURES
from tests.peers import running
from tests.peers.openvpn import OpenvpnPeers

DIR = FIXTURES / "openvpn"

# file -> (mode, version, clients, undef, bytes in, bytes out)
EXPECTED = {
    "patrickjahns_openvpn_exporter__version1.status": ("server", 1, 4, 0, 29742109, 34002697),
    "patrickjahns_openvpn_exporter__duplicate.status": ("server", 1, 2, 2, 2449472, 1830536),
    "kumina_openvpn_exporter__server2.status": ("server", 2, 5, 0, 25320320728, 73302413065),
    "kumina_openvpn_exporter__server3.status": ("server", 3, 5, 0, 25320320728, 73302413065),
    "netdata-go.d.plugin__v2.5.1__version3.txt": ("server", 3, 2, 0, 7308, 7235),
    "netdata-go.d.plugin__v2.5.1__version2-no-clients.txt": ("server", 2, 0, 0, 0, 0),
    "kumina_openvpn_exporter__client.status": ("client", 0, 0, 0, 292806201, 197558969),
    "netdata-go.d.plugin__v2.5.1__static-key.txt": ("client", 0, 0, 0, 19265, 261631),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_status_version_gives_clients_and_totals(name: str) -> None:
    s = parse_status((DIR / name).read_text())
    assert (s.mode, s.version, len(s.clients), s.undef_clients, s.bytes_in, s.bytes_out) == EXPECTED[name]


def test_v2_columns_come_from_the_header_line_whatever_the_openvpn_version() -> None:
    old = parse_status((DIR / "kumina_openvpn_exporter__server2.status").read_text())  # 2.3: no Client ID
    new = parse_status((DIR / "netdata-go.d.plugin__v2.5.1__version3.txt").read_text())  # 2.5: more columns
    assert old.clients[0].connected_since == 1489680543 and old.clients[0].client_id is None
    assert new.clients[0].virtual_address == "10.8.0.6" and new.clients[0].client_id == "0"


def test_management_replies_parse() -> None:
    assert parse_load_stats((DIR / "netdata-go.d.plugin__mgmt__load-stats.txt").read_text()) == (1, 7811, 7667)
    s = parse_status((DIR / "netdata-go.d.plugin__mgmt__status3.txt").read_text())
    assert s.version == 3 and s.mode == "server"
    assert parse_state("1434608935,CONNECTED,SUCCESS,10.8.0.6,127.0.0.1,1194,,\r\nEND\r\n") == "CONNECTED"


@pytest.mark.parametrize(("text", "message"), [
    ("", "empty"),
    ("garbage\n", "not an OpenVPN status"),
    ("OpenVPN CLIENT LIST\nUpdated,x\nCommon Name,Real Address,Bytes Received,Bytes Sent,Connected Since\n"
     "a,1.2.3.4:1,12", "without END"),
    ("OpenVPN CLIENT LIST\nCommon Name,Real Address,Bytes Received,Bytes Sent,Connected Since\na,b,x,1,d\nEND\n",
     "expected a number"),
    ("TITLE,OpenVPN\nCLIENT_LIST,a,b\nEND\n", "before its HEADER"),
    ("TITLE,OpenVPN\nWHAT,is this\nEND\n", "unknown line"),
    ("\x00\x01", "NUL"),
])
def test_bad_status_is_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse_status(text)


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=1200))
def test_any_truncation_parses_or_errors_cleanly(cut: int) -> None:
    text = (DIR / "kumina_openvpn_exporter__server2.status").read_text()[:cut]
    try:
        parse_status(text)
    except ParseError:
        pass


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("TITLECLIENT_HEADER,\t\nEND0123abc:.")), max_size=300))
def test_no_text_crashes_the_parser(text: str) -> None:
    try:
        parse_status(text)
    except ParseError:
        pass


def test_config_directives_are_read_with_every_push_kept() -> None:
    conf = parse_openvpn_config("# comment\n; other\ndev tun\ntxqueuelen 500\npush \"sndbuf 393216\"\n"
                                "push \"rcvbuf 393216\"\n<ca>\nMIIB\n</ca>\n")
    assert conf["txqueuelen"] == ["500"] and conf["push"] == ['"sndbuf 393216"', '"rcvbuf 393216"']


def test_hints_say_what_was_seen_and_the_line_to_add() -> None:
    inst = Instance(name="site", interface="tun0", config_file="/etc/openvpn/site.conf", path_mtu=1420, link_mbps=100)
    hints = tuning_hints(inst, {"tx_queue_len": 500}, 120, 30.0, {"dev": ["tun"]}, None)
    assert [h.do.split("`")[1] for h in hints] == ["txqueuelen 1000", "mssfix 1420 mtu", "sndbuf 524288"]
    assert "120 packets dropped on tun0" in hints[0].saw
    tuned = {"txqueuelen": ["1000"], "mssfix": ["1420", "mtu"], "sndbuf": ["524288"], "rcvbuf": ["524288"]}
    assert tuning_hints(inst, {"tx_queue_len": 1000}, 0, 30.0, tuned, None) == []


def test_a_dead_management_socket_and_a_missing_status_file_are_clear_errors(tmp_path: Path) -> None:
    c = OpenvpnCollector(tmp_path, [Instance(name="a", management=str(tmp_path / "nope.sock")),
                                    Instance(name="b", status_file="/run/openvpn/none.status")])
    with pytest.raises(CollectorError, match=r"a: management .*cannot connect.*b: status file .* does not exist"):
        c.collect()


@pytest.fixture(scope="module")
def vpn() -> Iterator[OpenvpnPeers]:
    with running(OpenvpnPeers, "ovpn") as peers:
        yield peers


def wait_clients(c: OpenvpnCollector, n: int, timeout: float = 20) -> dict:  # type: ignore[type-arg]
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = c.collect().state.instances[0]
            if len(last.clients) == n:
                return last
        except CollectorError as exc:
            last = str(exc)
        time.sleep(0.3)
    raise AssertionError(f"expected {n} clients; last: {last}")


def test_the_real_server_status_file_lists_both_clients(vpn: OpenvpnPeers) -> None:
    c = OpenvpnCollector(Path("/"), [Instance(name="site", status_file=str(vpn.status_file))])
    inst = wait_clients(c, 2)
    assert sorted(cl.common_name for cl in inst.clients) == ["client1", "client2"]
    assert all(cl.virtual_address.startswith("10.8.0.") for cl in inst.clients)


def test_the_management_interface_with_a_password_gives_status_load_and_state(vpn: OpenvpnPeers) -> None:
    inst = Instance(name="site", management=str(vpn.mgmt), management_password_file=str(vpn.password_file))
    r = OpenvpnCollector(Path("/"), [inst]).collect()
    got = r.state.instances[0]
    assert got.state == "CONNECTED" and len(got.clients) == 2 and got.bytes_in > 0
    values = {(s.metric, dict(s.labels).get("common_name")): s.value for s in r.samples}
    assert values[("rackpulse_openvpn_clients", None)] == 2
    assert values[("rackpulse_openvpn_client_received_bytes_total", "client1")] > 0


def test_a_wrong_management_password_is_refused_clearly(vpn: OpenvpnPeers, tmp_path: Path) -> None:
    bad = tmp_path / "pw"
    bad.write_text("wrong\n")
    c = OpenvpnCollector(Path("/"), [Instance(name="site", management=str(vpn.mgmt), management_password_file=str(bad))])
    with pytest.raises(CollectorError, match="password refused"):
        c.collect()


def test_client_mode_statistics_are_read(vpn: OpenvpnPeers) -> None:
    status = vpn.base / "client2.status"
    c = OpenvpnCollector(Path("/"), [Instance(name="c2", status_file=str(status))])
    # The client rewrites the file every second; the first one may predate any traffic.
    deadline = time.monotonic() + 15
    got: dict = {}  # type: ignore[type-arg]
    while time.monotonic() < deadline:
        try:
            got = c.collect().state.instances[0]
            if got.bytes_in > 0:
                break
        except CollectorError:
            pass
        time.sleep(0.3)
    assert got.mode == "client" and got.bytes_in > 0


def test_real_tun_drops_are_counted_and_explained(vpn: OpenvpnPeers) -> None:
    inst = Instance(name="client1", status_file=str(vpn.base / "client1.status"), interface="ovc1",
                    sys_root=str(vpn.sys_root), config_file=str(vpn.base / "client1.conf"))
    c = OpenvpnCollector(Path("/"), [inst])
    before = c.collect().state.instances[0].iface.tx_dropped
    vpn.make_drops(client=1, datagrams=1000)
    r = c.collect()
    got = r.state.instances[0]
    assert got.iface.tx_dropped - before >= 500 and got.drops_delta >= 500
    assert got.iface.tx_queue_len == 20
    assert "txqueuelen 1000" in got.hints[0].do and "client1.conf" in got.hints[0].do
    drops = [s.value for s in r.samples if s.metric == "rackpulse_interface_transmit_dropped_total"]
    assert drops == [got.iface.tx_dropped]


def test_a_missing_tun_is_reported_not_a_crash(vpn: OpenvpnPeers) -> None:
    inst = Instance(name="site", status_file=str(vpn.status_file), interface="tun9", sys_root=str(vpn.sys_root))
    r = OpenvpnCollector(Path("/"), [inst]).collect()
    assert r.state.instances[0].iface_error.startswith("interface tun9 not found")
    assert r.state.instances[0].up
