"""OpenVPN status and management replies at their edges, each error in its exact words:
columns from the header whatever their number, unauthenticated clients, CRLF replies,
missing numbers, and config files with inline certificates."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from collectors.base import CollectorError, ParseError
from collectors.network.openvpn.collector import read_interface, tuning_hints
from collectors.network.openvpn.config import Instance
from collectors.network.openvpn.status import (
    VpnClient,
    VpnStatus,
    parse_load_stats,
    parse_openvpn_config,
    parse_state,
    parse_status,
)

HEADER = ("HEADER,CLIENT_LIST,Common Name,Real Address,Virtual Address,Bytes Received,Bytes Sent,"
          "Connected Since,Connected Since (time_t),Client ID")
LONG = "x" * 200


def v2(*lines: str, header: str = HEADER) -> str:
    return "\n".join(["TITLE,OpenVPN 2.6.3 x86_64-pc-linux-gnu ", "TIME,2026-11-23 10:00:00,1795600000", header,
                      *lines, "END"]) + "\n"


def test_a_v2_status_reads_every_client_counts_the_unauthenticated_and_keeps_the_title_whole() -> None:
    got = parse_status(v2("CLIENT_LIST,alice,198.51.100.7:51234,10.8.0.6,1200,3400,2026-11-23 09:00:00,1795596400,4",
                          "CLIENT_LIST,UNDEF,203.0.113.9:40000,,10,20,2026-11-23 09:59:00,1795599940,5",
                          "CLIENT_LIST,UNDEF,203.0.113.9:40001,,10,20,2026-11-23 09:59:00,1795599940,6",
                          "HEADER,ROUTING_TABLE,Virtual Address,Common Name,Real Address,Last Ref",
                          "ROUTING_TABLE,10.8.0.6,alice,198.51.100.7:51234,2026-11-23 10:00:00",
                          "GLOBAL_STATS,Max bcast/mcast queue length,3"))
    assert got == VpnStatus("server", 2, "OpenVPN 2.6.3 x86_64-pc-linux-gnu ", 1795600000, (
        VpnClient("alice", "198.51.100.7:51234", "10.8.0.6", 1200, 3400, 1795596400, "4"),), undef_clients=2,
        global_stats={"Max bcast/mcast queue length": "3"})


def test_a_management_reply_with_crlf_and_tabs_parses_like_a_file() -> None:
    text = v2("CLIENT_LIST,bob,192.0.2.1:1194,10.8.0.10,5,6,d,1795599000,7").replace(",", "\t").replace("\n", "\r\n")
    got = parse_status(text)
    assert (got.version, got.title, got.clients[0].common_name, got.clients[0].bytes_sent) == (
        3, "OpenVPN 2.6.3 x86_64-pc-linux-gnu ", "bob", 6)


def test_newer_columns_beyond_the_header_and_one_missing_last_column_are_both_read() -> None:
    extra = parse_status(v2("CLIENT_LIST,a,192.0.2.1:1,10.8.0.2,1,2,d,1795599000,3,user,AES-256-GCM"))
    short = parse_status(v2("CLIENT_LIST,a,192.0.2.1:1,10.8.0.2,1,2,d,1795599000"))
    assert (extra.clients[0].client_id, short.clients[0].client_id) == ("3", None)


def test_a_header_without_addresses_or_times_gives_empty_ones() -> None:
    got = parse_status(v2("CLIENT_LIST,a,1,2", header="HEADER,CLIENT_LIST,Common Name,Bytes Received,Bytes Sent"))
    assert got.clients == (VpnClient("a", "", None, 1, 2, None),)


def test_a_status_without_time_has_no_update_time_and_an_odd_time_is_none() -> None:
    assert parse_status("TITLE,x\nHEADER,ROUTING_TABLE\nEND\n").updated is None
    assert parse_status("TITLE,x\nTIME,now\nEND\n").updated is None
    assert parse_status("TITLE,x\nTIME,now,soon\nEND\n").updated is None


@pytest.mark.parametrize("text, message", [
    ("\x00", "not an OpenVPN status: contains NUL bytes"),
    ("\n>INFO:OpenVPN Management Interface\n", "OpenVPN status is empty"),
    ("y" * 150 + "\n", f"not an OpenVPN status: first line {'y' * 100!r}"),
    ("TITLE,x\n" + "z" * 150 + "\n", f"OpenVPN status ends without END (truncated?): last line {'z' * 100!r}"),
    (f"TITLE,x\nCLIENT_LIST,{LONG}\nEND\n", f"CLIENT_LIST before its HEADER line: {('CLIENT_LIST,' + LONG)[:160]!r}"),
    ("TITLE,x\nHEADER,CLIENT_LIST\nCLIENT_LIST,a\nEND\n", "CLIENT_LIST before its HEADER line: 'CLIENT_LIST,a'"),
    (v2("CLIENT_LIST,a,b,c,1,2,d"), "CLIENT_LIST with 6 fields, header has 8: 'CLIENT_LIST,a,b,c,1,2,d'"),
    (v2("CLIENT_LIST,a,b,c,many,2,d,1795599000,3"),
     "expected a number, got 'many' in: 'CLIENT_LIST,a,b,c,many,2,d,1795599000,3'"),
    (v2("CLIENT_LIST,a", header="HEADER,CLIENT_LIST,Common Name"), "expected a number, got '' in: 'CLIENT_LIST,a'"),
    (f"TITLE,x\n{LONG}\nEND\n", f"unknown line in OpenVPN status: {LONG[:160]!r}"),
    ("OpenVPN CLIENT LIST\nCommon Name,Real Address,Bytes Received,Bytes Sent,Connected Since\na,b,1\nEND\n",
     "client line with 3 fields, expected 5: 'a,b,1'"),
    ("OpenVPN STATISTICS\nno comma here\nEND\n", "statistics line without a comma: 'no comma here'"),
])
def test_each_broken_status_is_an_error_in_these_words(text: str, message: str) -> None:
    with pytest.raises(ParseError) as err:
        parse_status(text)
    assert str(err.value) == message


def test_a_v1_status_joins_routes_to_clients_and_counts_the_unauthenticated() -> None:
    got = parse_status("OpenVPN CLIENT LIST\nUpdated,Thu Jun 18 08:12:15 2015\n"
                       "Common Name,Real Address,Bytes Received,Bytes Sent,Connected Since\n"
                       "alice,198.51.100.7:51234,10,20,Thu Jun 18 08:00:00 2015\n"
                       "UNDEF,203.0.113.9:40000,1,2,Thu Jun 18 08:12:00 2015\n"
                       "ROUTING TABLE\nVirtual Address,Common Name,Real Address,Last Ref\n"
                       "10.8.0.6,alice,198.51.100.7:51234,Thu Jun 18 08:12:10 2015\n"
                       "GLOBAL STATS\nMax bcast/mcast queue length,0\nEND\n")
    updated = int(time.mktime((2015, 6, 18, 8, 12, 15, 0, 0, -1)))  # OpenVPN writes its local time
    assert got == VpnStatus("server", 1, None, updated, (VpnClient("alice", "198.51.100.7:51234", "10.8.0.6", 10, 20,
                                                                 None),), 1,
                            global_stats={"Max bcast/mcast queue length": "0"})


@pytest.mark.parametrize("reply, want", [
    ("SUCCESS: nclients=2,bytesin=10,bytesout=20\r\n", (2, 10, 20)),
    (">INFO:hello\r\nSUCCESS: nclients=0,bytesin=0,bytesout=0\r\n", (0, 0, 0)),
])
def test_load_stats_come_from_the_last_line(reply: str, want: tuple[int, int, int]) -> None:
    assert parse_load_stats(reply) == want


@pytest.mark.parametrize("reply, message", [
    ("", "unexpected load-stats reply: ''"),
    ("ERROR: " + LONG, f"unexpected load-stats reply: {('ERROR: ' + LONG)[:160]!r}"),
])
def test_a_bad_load_stats_reply_is_quoted(reply: str, message: str) -> None:
    with pytest.raises(ParseError) as err:
        parse_load_stats(reply)
    assert str(err.value) == message


def test_the_state_is_the_last_row_before_end_whatever_notifications_come_between() -> None:
    assert parse_state(">STATE:1795599000,RECONNECTING,,,\r\n1795599000,CONNECTED\r\nEND\r\n") == "CONNECTED"


@pytest.mark.parametrize("reply, message", [
    ("END\r\n", "empty state reply"),
    (">STATE:1,CONNECTED\r\n", "empty state reply"),
    ("1795599000\r\nEND\r\n", "unexpected state reply: '1795599000'"),
    ("soon,CONNECTED\r\nEND\r\n", "unexpected state reply: 'soon,CONNECTED'"),
    (LONG + "\r\nEND\r\n", f"unexpected state reply: {LONG[:160]!r}"),
])
def test_a_bad_state_reply_is_quoted(reply: str, message: str) -> None:
    with pytest.raises(ParseError) as err:
        parse_state(reply)
    assert str(err.value) == message


def test_a_config_file_is_read_without_comments_and_inline_certificates() -> None:
    text = """# server.conf
;old-option
#
--dev tun
txqueuelen 1000
push "route 10.0.0.0 255.0.0.0"
push "sndbuf 524288"
<ca>
-----BEGIN CERTIFICATE-----
MIIBszCCAVmgAwIBAgIUTHISISNOTAREALCERT
-----END CERTIFICATE-----
</ca>
sndbuf 524288
TXQueueLen 2000
"""
    assert parse_openvpn_config(text) == {"dev": ["tun"], "txqueuelen": ["2000"], "sndbuf": ["524288"],
                                          "push": ['"route 10.0.0.0 255.0.0.0"', '"sndbuf 524288"']}


@pytest.mark.parametrize("text, message", [
    ("OpenVPN STATISTICS\n" + "w" * 200 + "\nEND\n", f"statistics line without a comma: {('w' * 200)[:160]!r}"),
    ("OpenVPN STATISTICS\nTUN/TAP read bytes,lots\nEND\n",
     "expected a number, got 'lots' in: 'TUN/TAP read bytes,lots'"),
])
def test_bad_client_statistics_are_errors_in_these_words(text: str, message: str) -> None:
    with pytest.raises(ParseError) as err:
        parse_status(text)
    assert str(err.value) == message


def test_client_statistics_keep_their_update_time_and_keys_with_commas() -> None:
    got = parse_status("OpenVPN STATISTICS\nUpdated,Thu Jun 18 08:12:15 2015\nTCP/UDP read bytes,7\n"
                       "Auth read bytes, incl. retries,3\nEND\n")
    assert got.updated == int(time.mktime((2015, 6, 18, 8, 12, 15, 0, 0, -1)))
    assert got.stats == {"TCP/UDP read bytes": 7, "Auth read bytes, incl. retries": 3}
    assert parse_status("OpenVPN STATISTICS\nUpdated,yesterday\nEND\n").updated is None


def test_v1_sections_switch_on_their_headers_and_short_rows_are_skipped() -> None:
    got = parse_status("OpenVPN CLIENT LIST\nCommon Name,Real Address,Bytes Received,Bytes Sent,Connected Since\n"
                       "ROUTING TABLE\nVirtual Address,Common Name,Real Address,Last Ref\n10.8.0.9,bob\n"
                       "GLOBAL STATS\nno value here\nMax bcast/mcast queue length,2\nEND\n")
    assert (got.clients, got.global_stats) == ((), {"Max bcast/mcast queue length": "2"})


def test_a_v1_client_line_with_a_bad_byte_count_is_quoted() -> None:
    with pytest.raises(ParseError) as err:
        parse_status("OpenVPN CLIENT LIST\nCommon Name,Real Address,Bytes Received,Bytes Sent,Connected Since\n"
                     "a,b,1,x,d\nEND\n")
    assert str(err.value) == "expected a number, got 'x' in: 'a,b,1,x,d'"


def test_the_tun_interface_is_read_from_sysfs_and_a_missing_value_left_out(tmp_path: Path) -> None:
    tun = tmp_path / "class/net/tun0"
    (tun / "statistics").mkdir(parents=True)
    for rel, value in {"statistics/tx_dropped": "280", "statistics/rx_dropped": "1", "statistics/tx_bytes": "10",
                       "statistics/rx_bytes": "20\n", "tx_queue_len": "500", "mtu": "not a number"}.items():
        (tun / rel).write_text(value)
    assert read_interface(tmp_path, "tun0") == {"tx_dropped": 280, "rx_dropped": 1, "tx_bytes": 10, "rx_bytes": 20,
                                                "tx_queue_len": 500}
    with pytest.raises(CollectorError) as err:
        read_interface(tmp_path, "tun9")
    assert str(err.value) == f"interface tun9 not found under {tmp_path / 'class' / 'net'}"


SLOW = Instance(name="site-b", interface="tun0", config_file="/etc/openvpn/site-b.conf", path_mtu=1420, link_mbps=20)
QUEUE = {"saw": "120 packets dropped on tun0 in the last 30.0s with a transmit queue of 500",
         "do": "raise the tun queue: add `txqueuelen 1000` to /etc/openvpn/site-b.conf (or `ip link set tun0 "
               "txqueuelen 1000` now)"}
MSS = {"saw": "the path MTU is 1420 but /etc/openvpn/site-b.conf sets none of tun-mtu, mssfix, fragment",
       "do": "add `mssfix 1420 mtu` (OpenVPN 2.6) so TCP inside the tunnel never needs fragmenting"}


def fast(mbit: str) -> dict[str, str]:
    return {"saw": f"a fast link ({mbit} Mbit/s) with socket buffers left to the OS",
            "do": 'add `sndbuf 524288`, `rcvbuf 524288`, `push "sndbuf 524288"` and `push "rcvbuf 524288"`'}


@pytest.mark.parametrize("inst, iface, drops, conf, rate, hints", [
    (SLOW, {"tx_queue_len": 500}, 120, None, None, [QUEUE]),
    (SLOW, {"tx_queue_len": 999}, 1, None, None, [{**QUEUE, "saw": QUEUE["saw"].replace("120", "1").replace(
        "500", "999")}]),
    (SLOW, {"tx_queue_len": 1000}, 120, None, None, []),
    (SLOW, {}, 120, None, None, []),
    (SLOW, {"tx_queue_len": 500}, 0, None, None, []),
    (SLOW, {"tx_queue_len": 500}, -3, None, None, []),
    (SLOW, {}, None, {"dev": ["tun"]}, None, [MSS]),
    (SLOW, {}, None, {"mssfix": ["1400"]}, None, []),
    (SLOW, {}, None, {"tun-mtu": ["1400"]}, None, []),
    (SLOW, {}, None, {"fragment": ["1300"]}, None, []),
    (Instance(name="x", config_file="/c.conf", path_mtu=1500), {}, None, {}, None, []),
    (Instance(name="x", link_mbps=50), {}, None, {}, None, [fast("50")]),
    (Instance(name="x", link_mbps=49), {}, None, {}, 5e6, []),
    (Instance(name="x"), {}, None, {}, 5e6 + 1, [fast("40")]),
    (Instance(name="x", link_mbps=100), {}, None, {"rcvbuf": ["524288"]}, None, []),
    (Instance(name="x", link_mbps=100), {}, None, None, None, []),
])
def test_tuning_hints_at_their_edges(inst: Instance, iface: dict[str, int], drops: int | None,
                                     conf: dict[str, list[str]] | None, rate: float | None,
                                     hints: list[dict[str, str]]) -> None:
    assert [h.model_dump() for h in tuning_hints(inst, iface, drops, 30.0, conf, rate)] == hints


def test_a_hint_without_a_config_file_says_where_in_words() -> None:
    got = tuning_hints(Instance(name="x", interface="tun1"), {"tx_queue_len": 10}, 5, None, None, None)
    assert [h.model_dump() for h in got] == [{"saw": "5 packets dropped on tun1 in the last 0.0s with a transmit queue of 10",
                    "do": "raise the tun queue: add `txqueuelen 1000` to the instance's config (or `ip link set tun1 "
                          "txqueuelen 1000` now)"}]


def test_a_tun_whose_counters_went_back_was_recreated_and_is_not_a_negative_drop(tmp_path: Path) -> None:
    from collectors.findings import Judging
    from collectors.network.openvpn.collector import OpenvpnCollector
    from collectors.network.openvpn.demo import write_scene
    from collectors.network.openvpn.findings import findings

    inst = Instance(name="site-b", status_file="/run/openvpn/site-b.status", interface="tun0")
    c = OpenvpnCollector(tmp_path, [inst])
    write_scene(tmp_path, 190.0)  # dropping
    c.collect()
    write_scene(tmp_path, 10.0)  # OpenVPN restarted: the tun's counters start again
    got = c.collect().state
    assert got.instances[0].drops_delta is None and got.instances[0].tx_rate_bytes is None
    assert findings(got, Judging()) == []
