"""Probes: fping's outputs parsed, then real fping, a namespace that loses pings (nftables),
and real HTTP, HTTPS and TLS servers with certificates made here (one expiring in 10 days)."""

from __future__ import annotations

import datetime as dt
import http.server
import socket
import ssl
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from collectors.base import CollectorError, NoData
from collectors.findings import Judging
from collectors.probes.checks.collector import ProbesCollector
from collectors.probes.checks.config import ProbesConfig
from collectors.probes.checks.findings import findings, view
from collectors.probes.checks.fping import PingResult, parse_fping
from tests.agent_hosts import free_port
from tests.paths import FIXTURES

FIX = FIXTURES / "fping"


@pytest.mark.parametrize(("name", "expected"), [
    ("openwisp-monitoring__fping__reachable.stderr", PingResult("10.40.0.1", 5, 5, (), 0.04, 0.08, 0.15)),
    ("openwisp-monitoring__fping__unreachable.stderr", PingResult("192.168.255.255", 3, 0)),
    ("librenms__fping__up.stderr", PingResult("192.168.1.3", 3, 3, (), 0.62, 0.71, 0.93)),
    ("librenms__fping__partial-down.stderr", PingResult("192.168.1.7", 5, 3, (), 0.13, 0.23, 0.32)),
    ("librenms__fping__down.stderr", PingResult("192.168.53.1", 3, 0)),
    ("loopback-C5.stderr", PingResult("127.0.0.1", 5, 5, (0.036, 0.066, 0.067, 0.042, 0.040), 0.036, 0.0502, 0.067)),
])
def test_fping_summary_and_per_ping_lines_parse_to_whole_records(name: str, expected: PingResult) -> None:
    assert parse_fping((FIX / name).read_text()) == {expected.target: expected}


def test_per_ping_lines_count_lost_pings_and_give_a_p95() -> None:
    got = parse_fping("10.0.0.1 : 0.10 - 0.30 - 0.20\nICMP Host Unreachable from 10.0.0.254 for ICMP Echo sent to x\n")
    r = got["10.0.0.1"]
    assert (r.sent, r.received, r.loss, r.min_ms, r.max_ms, r.p95_ms) == (5, 3, 0.4, 0.10, 0.30, 0.30)
    assert parse_fping("h : - - -")["h"].loss == 1.0 and parse_fping("h : - - -")["h"].p95_ms is None
    assert PingResult("h", 0, 0).loss == 1.0


@pytest.mark.parametrize("text", ["", "fping: option requires an argument -- 'z'", "10.0.0.1 : 0.1 abc", "garbage\n"])
def test_a_text_without_a_result_line_is_an_error_quoting_it(text: str) -> None:
    with pytest.raises(CollectorError, match="fping printed nothing" if not text.strip() else "no result line"):
        parse_fping(text)


def cfg(**probes: Any) -> ProbesConfig:
    return ProbesConfig(**probes)


def collect(config: ProbesConfig) -> tuple[dict[str, dict[str, Any]], list[str], Any]:
    result = ProbesCollector(config).collect()
    found = findings(result.state, Judging())
    return {p.name: p for p in result.state.probes}, [f.text for f in found], result


def test_no_probes_is_no_data_not_a_failure() -> None:
    with pytest.raises(NoData):
        ProbesCollector(cfg()).collect()


@pytest.mark.peers
def test_real_fping_reaches_loopback_and_reports_loss_and_round_trips() -> None:
    probes, texts, result = collect(cfg(ping=[{"name": "lo", "target": "127.0.0.1", "count": 5, "interval_ms": 20}]))
    lo = probes["lo"]
    assert lo.ok and (lo.sent, lo.received, lo.loss) == (5, 5, 0.0) and len(lo.rtts_ms) == 5
    assert 0 < lo.rtt_ms.min <= lo.rtt_ms.avg <= lo.rtt_ms.p95 <= lo.rtt_ms.max < 100
    assert texts == []
    metrics = {(s.metric, dict(s.labels).get("stat")) for s in result.samples}
    assert {("rackpulse_probe_success", None), ("rackpulse_probe_loss_ratio", None), ("rackpulse_probe_rtt_seconds", "p95"),
            ("rackpulse_probe_duration_seconds", None)} <= metrics


@pytest.mark.peers
def test_a_missing_source_interface_is_fpings_own_error_and_a_missing_fping_fails_the_collector() -> None:
    probes, texts, _ = collect(cfg(ping=[{"name": "wwan", "target": "127.0.0.1", "interface": "nosuch0", "count": 1}],
                                   tcp=[{"name": "x", "host": "127.0.0.1", "port": free_port()}]))
    assert not probes["wwan"].ok and "No such device" in probes["wwan"].error
    with pytest.raises(CollectorError, match="command not found: 'no-fping-here'"):
        ProbesCollector(cfg(fping=["no-fping-here"], ping=[{"name": "a", "target": "127.0.0.1"}])).collect()


@pytest.fixture
def lossy_namespace() -> Iterator[str]:
    """A network namespace whose loopback drops about 3 in 10 pings (nftables' numgen random)."""
    ns = f"rp-loss-{uuid.uuid4().hex[:6]}"
    run = lambda *a: subprocess.run(a, check=True, capture_output=True, timeout=20)  # noqa: E731
    run("ip", "netns", "add", ns)
    try:
        run("ip", "-n", ns, "link", "set", "lo", "up")
        run("ip", "netns", "exec", ns, "nft", "add", "table", "inet", "t")
        run("ip", "netns", "exec", ns, "nft", "add", "chain", "inet", "t", "in",
            "{ type filter hook input priority 0; }")
        run("ip", "netns", "exec", ns, "nft", "add", "rule", "inet", "t", "in", "icmp", "type", "echo-request",
            "numgen", "random", "mod", "10", "<", "3", "drop")
        yield ns
    finally:
        subprocess.run(["ip", "netns", "delete", ns], capture_output=True, timeout=20)


@pytest.mark.peers
def test_pings_lost_inside_a_namespace_are_counted_and_raise_probe_loss(lossy_namespace: str) -> None:
    config = cfg(fping=["ip", "netns", "exec", lossy_namespace, "fping"],
                 ping=[{"name": "3g-bond", "target": "127.0.0.1", "count": 60, "interval_ms": 10, "loss_warning": 0.1}])
    probes, texts, _ = collect(config)
    p = probes["3g-bond"]
    assert p.ok and p.sent == 60 and 0.1 <= p.loss <= 0.6, p  # 3 in 10 expected; 60 pings keep it near
    assert len(p.rtts_ms) == p.received
    assert any(t.startswith("ping 3g-bond (127.0.0.1) lost ") and t.endswith("% of 60 pings") for t in texts), texts


# -- HTTP, TCP and TLS against servers started here ------------------------------------------------


def make_cert(tmp: Path, days: float, name: str = "localhost") -> tuple[Path, Path, Path]:
    """A CA and a server certificate for `name` and 127.0.0.1 that expires in `days`."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "rackpulse test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
          .not_valid_after(now + dt.timedelta(days=365))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    import ipaddress
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=days))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name),
                                                         x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False).sign(ca_key, hashes.SHA256()))
    paths = tmp / "ca.pem", tmp / "cert.pem", tmp / "key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return paths


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        status, body = (200, b"<h1>Nextcloud</h1> all fine") if self.path == "/" else (404, b"nope")
        if self.path == "/slow":
            time.sleep(3)
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def web(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """An HTTP server, an HTTPS server whose certificate expires in 10 days, and its CA."""
    ca, cert, key = make_cert(tmp_path, 10)
    servers = []
    plain = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tls = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
    for srv in (plain, tls):
        srv.daemon_threads = True
        threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True).start()
        servers.append(srv)
    try:
        yield {"http": plain.server_address[1], "https": tls.server_address[1], "ca": ca}
    finally:
        for srv in servers:
            srv.shutdown()
            srv.server_close()


def test_http_checks_status_and_text_and_say_why_they_fail(web: dict[str, Any]) -> None:
    base = f"http://127.0.0.1:{web['http']}"
    closed = free_port()
    probes, texts, result = collect(cfg(http=[
        {"name": "cloud", "url": base + "/", "expect_text": "Nextcloud"},
        {"name": "wrong-text", "url": base + "/", "expect_text": "Jellyfin"},
        {"name": "missing", "url": base + "/gone"},
        {"name": "refused", "url": f"http://127.0.0.1:{closed}/"},
        {"name": "slow", "url": base + "/slow", "timeout": 0.5},
    ]))
    assert probes["cloud"].ok and probes["cloud"].status == 200
    assert probes["wrong-text"].error == "the page does not contain 'Jellyfin'"
    assert probes["missing"].error == "status 404 Not Found, expected 200" and probes["missing"].status == 404
    assert probes["refused"].error == "connection refused"
    assert probes["slow"].error == "timed out"
    assert f"http missing ({base}/gone) is down: status 404 Not Found, expected 200" in texts
    codes = {dict(s.labels)["probe"]: s.value for s in result.samples if s.metric == "rackpulse_probe_http_status_code"}
    assert codes == {"cloud": 200, "wrong-text": 200, "missing": 404}


def test_a_certificate_expiring_in_10_days_is_read_and_raises_tls_expiring(web: dict[str, Any]) -> None:
    url = f"https://127.0.0.1:{web['https']}/"
    probes, texts, result = collect(cfg(
        http=[{"name": "self-signed", "url": url, "verify_tls": False},
              {"name": "untrusted", "url": url}],
        tcp=[{"name": "tls-port", "host": "127.0.0.1", "port": web["https"], "tls": True, "verify_tls": False},
             {"name": "plain-port", "host": "127.0.0.1", "port": web["http"]}]))
    expiry = probes["self-signed"].cert_expires
    assert probes["self-signed"].ok and 9.9 * 86400 < expiry - time.time() <= 10 * 86400
    assert probes["tls-port"].ok and probes["tls-port"].cert_expires == expiry
    assert probes["plain-port"].ok and probes["plain-port"].cert_expires is None
    assert not probes["untrusted"].ok and probes["untrusted"].error.startswith("certificate not trusted")
    day = time.strftime("%Y-%m-%d", time.gmtime(expiry))
    assert f"TLS certificate of self-signed ({url}) expires in 9 days ({day})" in texts
    assert sum("tls_expiring" in t or "TLS certificate" in t for t in texts) == 2  # http and tcp+tls
    stamps = {dict(s.labels)["probe"]: s.value for s in result.samples
              if s.metric == "rackpulse_probe_tls_cert_expiry_timestamp_seconds"}
    assert stamps == {"self-signed": expiry, "tls-port": expiry}
    lines = view(result.state, [])["probes"]  # type: ignore[arg-type]
    assert [line.cert_days for line in lines if line.probe.name == "self-signed"] == [9]  # type: ignore[attr-defined]


def test_a_server_that_accepts_and_never_speaks_times_out_and_the_other_probes_still_answer(web: dict[str, Any]) -> None:
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    try:
        port = silent.getsockname()[1]
        probes, _, _ = collect(cfg(
            tcp=[{"name": "mute-tls", "host": "127.0.0.1", "port": port, "tls": True, "timeout": 1}],
            http=[{"name": "mute-http", "url": f"http://127.0.0.1:{port}/", "timeout": 1},
                  {"name": "fine", "url": f"http://127.0.0.1:{web['http']}/"}]))
        assert probes["mute-tls"].error == "timed out" and probes["mute-http"].error == "timed out"
        assert probes["fine"].ok and probes["fine"].error is None
    finally:
        silent.close()


def test_two_probes_of_one_kind_may_not_share_a_name_nor_may_a_target_carry_options() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="probe names must be unique: a"):
        ProbesConfig(ping=[{"name": "a", "target": "10.0.0.1"}, {"name": "a", "target": "10.0.0.2"}])
    for target in ("-f /etc/shadow", "-f", "--file=x", "a b"):  # an argument smuggled into fping's command line
        with pytest.raises(ValidationError):
            ProbesConfig(ping=[{"name": "x", "target": target}])
    with pytest.raises(ValidationError):
        ProbesConfig(ping=[{"name": "x", "target": "10.0.0.1", "interface": "-I"}])
    assert ProbesConfig(ping=[{"name": "x", "target": "fe80::1%bond0"}]).ping[0].target == "fe80::1%bond0"
    with pytest.raises(ValidationError):
        ProbesConfig(http=[{"name": "x", "url": "file:///etc/passwd"}])
