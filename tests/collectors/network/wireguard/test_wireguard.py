"""WireGuard from `wg show all dump` (fixtures written from wg(8)'s documented format: WireGuard
cannot run here): every peer with its handshake age, bytes, endpoint and allowed IPs, private and
preshared keys never kept nor quoted; a watched peer's stale handshake is the alert, a roaming
peer's new endpoint an event; no wg is source absent."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.base import CommandNotFound, CommandResult, NoData, ParseError
from collectors.findings import Judging
from collectors.network.wireguard.collector import WireguardCollector
from collectors.network.wireguard.config import WireguardConfig
from collectors.network.wireguard.dump import parse_dump
from collectors.network.wireguard.findings import findings

DUMP = (Path(__file__).parents[3] / "fixtures" / "wireguard" / "two-interfaces.dump").read_text()
NOW = 1_795_600_010.0
PHONE = "HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw="


def test_every_interface_and_peer_is_read_and_no_secret_kept() -> None:
    wg0, wg1 = parse_dump(DUMP)
    assert (wg0.name, wg0.listen_port, len(wg0.peers)) == ("wg0", 51820, 3)
    site, phone, never = wg0.peers
    assert (site.endpoint, site.allowed_ips, site.keepalive) == ("203.0.113.7:51820",
                                                                 ["10.8.0.2/32", "192.168.20.0/24"], 25)
    assert (phone.latest_handshake, phone.rx_bytes, phone.tx_bytes, phone.keepalive) == (1795599700.0, 42000000,
                                                                                         150000000, None)
    assert (never.endpoint, never.latest_handshake) == (None, None)
    assert wg1.listen_port is None and wg1.peers[0].endpoint == "[2001:db8::1]:51820"
    assert "cHJpdmF0ZSBr" not in repr(parse_dump(DUMP)) and "c2VjcmV0" not in repr(parse_dump(DUMP))


@pytest.mark.parametrize("line", ["wg0\tkey\t(none)\t(none)", "wg0\tk\t(none)\t(none)\t(none)\tsoon\t0\t0\toff"])
def test_a_line_of_another_shape_is_an_error_quoting_it_without_its_keys(line: str) -> None:
    with pytest.raises(ParseError, match="wg dump") as err:
        parse_dump(line)
    assert "soon" in str(err.value) or "4 tab-separated" in str(err.value)


def run(cfg: dict[str, object], text: str = DUMP, rc: int = 0, missing: bool = False) -> WireguardCollector:
    def runner(argv, timeout):  # type: ignore[no-untyped-def]
        assert argv[-3:] == ["show", "all", "dump"]
        if missing:
            raise CommandNotFound("wg: not found")
        return CommandResult(tuple(argv), rc, text.encode(), b"Unable to access interface: Operation not permitted"
                             if rc else b"")
    return WireguardCollector(WireguardConfig.model_validate(cfg), runner, clock=lambda: NOW)


def test_a_watched_peer_past_stale_after_is_the_alert_and_an_unwatched_one_is_not() -> None:
    r = run({"peers": [{"key": PHONE, "name": "phone", "expect": True}]}).collect()
    peers = {p.name or p.key[:8]: p for p in r.state.peers}  # type: ignore[union-attr]
    assert peers["phone"].handshake_age == 310 and peers["phone"].stale  # 310 s > 180 s
    assert not peers["xTIBA5rb"].stale and peers["xTIBA5rb"].watched  # keepalive: watched, fresh (10 s)
    assert not peers["TrMvSoP4"].watched and not peers["TrMvSoP4"].stale  # never, but not expected
    assert peers["pRdC1t5o"].stale is False
    (f,) = findings(r.state, Judging(now=NOW))  # type: ignore[arg-type]
    assert (f.rule, f.subject) == ("wireguard_handshake_stale", "wg0/phone")
    assert f.text == "WireGuard peer phone (HIgo9xNz…) on wg0: last handshake 5 min 10 s ago, stale after 3 min 0 s"
    ends = {e.key: e.attrs["endpoint"] for e in r.entities}
    assert ends["wg0/phone"] == "198.51.100.23:40112"  # its endpoint is in the inventory: a change is an event
    samples = {(s.metric, dict(s.labels)["peer"]): s.value for s in r.samples}
    assert samples[("rackpulse_wireguard_peer_stale", "phone")] == 1
    assert samples[("rackpulse_wireguard_peer_receive_bytes_total", "xTIBA5rb")] == 8_200_000_000


def test_no_wg_is_source_absent_and_a_refusal_says_what_it_needs() -> None:
    with pytest.raises(NoData):
        run({}, missing=True).collect()
    with pytest.raises(NoData, match="no WireGuard interface"):
        run({}, text="").collect()
    with pytest.raises(Exception, match="CAP_NET_ADMIN"):
        run({}, rc=1).collect()


def test_a_peer_key_in_the_config_must_look_like_one() -> None:
    with pytest.raises(ValueError):
        WireguardConfig.model_validate({"peers": [{"key": "not a key", "name": "phone"}]})


def test_an_expected_peer_that_never_handshook_is_stale_not_fresh() -> None:
    """The peer the user said must be up has never completed a handshake: that is the worst
    staleness there is, not "fresh"."""
    never = "TrMvSoP4jYQlY6RIzBgbssQqY3vxI2Pi+y71lOWWXX0="
    r = run({"peers": [{"key": never, "name": "laptop", "expect": True}]}).collect()
    peers = {p.name or p.key[:8]: p for p in r.state.peers}  # type: ignore[union-attr]
    assert peers["laptop"].watched and peers["laptop"].handshake_age is None and peers["laptop"].stale
    found = {f.subject: f.text for f in findings(r.state, Judging(now=NOW))}  # type: ignore[arg-type]
    assert "last handshake never" in found["wg0/laptop"]
    samples = {(s.metric, dict(s.labels)["peer"]): s.value for s in r.samples}
    assert samples[("rackpulse_wireguard_peer_stale", "laptop")] == 1
