"""The agent's sender against a real `rackpulse serve` on loopback: batches split to fit the
server's limit, a record the server can never take is set aside (the queue goes on), a
wrong token keeps everything spooled. And the agent's own /metrics without a server."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.agent.outbox import Outbox
from app.agent.push import Sender, SendError
from app.config import ConfigError
from app.storage.db import make_engine
from app.storage.models import collector_run, sample
from tests.agent_hosts import (
    agent_config,
    free_port,
    get_json,
    issue_token,
    rackpulse,
    server_config,
    stop,
    wait_for,
)

NOW = time.time()


def run(i: int, n: int = 50) -> dict:
    return {"kind": "run", "collector": "hwmon", "started": NOW - 600 + i, "duration": 0.1, "ok": True,
            "samples": [["rackpulse_hwmon_value", {"i": str(k)}, float(i)] for k in range(n)], "state": {"i": i},
            "entities": []}


@pytest.fixture
def server(tmp_path: Path, sqlite_url: str) -> Iterator[tuple[str, str, Path]]:
    port = free_port()
    cfg = server_config(tmp_path / "server.toml", sqlite_url, port, max_batch_bytes=60_000)
    token = issue_token(cfg, "ceph1")
    proc = rackpulse("serve", "--config", str(cfg), log=tmp_path / "server.log")
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: get_json(base + "/healthz"), what="server")
        yield base, token, tmp_path
    finally:
        stop(proc)


def stored(tmp_path: Path) -> tuple[int, int]:
    url = f"sqlite:///{tmp_path / 'rackpulse.db'}"
    engine = make_engine(url)
    with engine.connect() as c:
        n = (c.execute(select(func.count()).select_from(sample)).scalar(),
             c.execute(select(func.count()).select_from(collector_run)).scalar())
    engine.dispose()
    return n


def drain(sender: Sender) -> None:
    for _ in range(200):
        try:
            if not sender.send_once():
                return
        except SendError as exc:
            if exc.status not in (400, 413):
                raise


def test_batches_shrink_to_the_servers_limit_and_everything_arrives_in_order(server) -> None:
    base, token, tmp = server
    box = Outbox(tmp / "o.db", 10**8)
    for i in range(60):
        box.put(run(i))
    # the agent would send 4 MB batches; this server takes 60 KB, so 413 first, then halves
    sender = Sender(box, base, token, "ceph1", 4 * 1024 * 1024, 5.0)
    drain(sender)
    assert box.stats()["records"] == 0 and box.stats()["rejected"] == 0
    assert stored(tmp) == (60 * 50, 60)
    assert sender.sent_batches >= 2


def test_a_record_the_server_can_never_take_is_set_aside_and_the_rest_goes_on(server) -> None:
    base, token, tmp = server
    box = Outbox(tmp / "o.db", 10**8)
    box.put(run(1))
    box.put(run(2, n=3000))  # ~150 KB of JSON: over the server's 60 KB even alone
    box.put(run(3))
    sender = Sender(box, base, token, "ceph1", 4 * 1024 * 1024, 5.0)
    drain(sender)
    assert box.stats() == {"records": 0, "bytes": 0, "rejected": 1, "dropped_points": 0, "oldest_seq": 0, "newest_seq": 0}
    assert stored(tmp) == (100, 2)


def test_a_disk_that_failed_during_a_long_outage_is_still_an_event_after_the_outbox_folded(server) -> None:
    from app.storage.models import entity_event

    base, token, tmp = server
    box = Outbox(tmp / "o.db", 30_000)
    t0 = (NOW - 6 * 3600) // 3600 * 3600
    for i in range(6 * 120):  # six hours at 30 s while the server was away; the disk fails at 1 h
        rec = run(0, n=10)
        rec["started"] = t0 + 30 * i
        rec["collector"] = "smart"
        rec["entities"] = [["disk", "S1", {"health": "ok" if i < 120 else "failing", "bay": "bay 3"}]]
        box.put(rec)
    assert any(p.kind == "event" for p in box.take(10**9))  # folding happened and kept the change
    drain(Sender(box, base, token, "ceph1", 4 * 1024 * 1024, 5.0))
    assert box.stats()["records"] == 0
    engine = make_engine(f"sqlite:///{tmp / 'rackpulse.db'}")
    with engine.connect() as c:
        events = c.execute(select(entity_event.c.ts, entity_event.c.field, entity_event.c.new).where(
            entity_event.c.host == "ceph1", entity_event.c.key == "S1", entity_event.c.field == "health")).all()
    engine.dispose()
    assert (t0 + 30 * 120, "health", "failing") in [tuple(e) for e in events]


def test_a_wrong_token_keeps_everything_spooled(server) -> None:
    base, _, tmp = server
    box = Outbox(tmp / "o.db", 10**8)
    box.put(run(1))
    sender = Sender(box, base, "rpa_wrong", "ceph1", 10**6, 5.0)
    with pytest.raises(SendError) as e:
        sender.send_once()
    assert e.value.status == 401 and "unknown agent token" in str(e.value)
    assert box.stats()["records"] == 1 and stored(tmp) == (0, 0)


class NeverEmptyOutbox(Outbox):
    """A busy host: a new run lands while every batch is in flight, so the outbox is never
    empty at the moment the sender asks for the next one."""

    def ack(self, seq: int) -> None:
        # the new run lands before the ack, as it does while the batch is in flight: put after
        # the ack, a look at the outbox between the two found it empty (a red CI run)
        self.put(run(seq + 1000))
        super().ack(seq)


def test_an_agent_says_delivering_once_a_batch_gets_through_though_its_outbox_never_empties(server) -> None:
    import threading

    base, token, tmp = server
    box = NeverEmptyOutbox(tmp / "o.db", 10**8)
    for i in range(5):
        box.put(run(i))
    sender = Sender(box, base, token, "ceph1", 10**6, 5.0)
    sender.failing_since, sender.last_error = time.time(), "server unreachable"  # as after an outage
    thread = threading.Thread(target=sender.run, daemon=True)
    thread.start()
    try:
        # three batches through, each within the send timeout
        wait_for(lambda: sender.sent_batches >= 3, timeout=3 * 2 * sender.timeout, what="three batches")
        assert box.stats()["records"] >= 1  # still something waiting: the drain has not ended...
        assert sender.failing_since is None and sender.last_error is None  # ...and yet it delivers
    finally:
        sender.stop()
        thread.join(2 * sender.timeout)


def test_an_unreachable_server_is_a_send_error_not_a_crash(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "o.db", 10**8)
    box.put(run(1))
    sender = Sender(box, f"http://127.0.0.1:{free_port()}", "rpa_x", "ceph1", 10**6, 2.0)
    with pytest.raises(SendError, match="server unreachable"):
        sender.send_once()
    assert box.stats()["records"] == 1


def test_a_server_that_accepts_but_never_answers_times_out_and_keeps_the_runs(tmp_path: Path) -> None:
    import socket

    hung = socket.socket()
    hung.bind(("127.0.0.1", 0))
    hung.listen(8)  # the kernel completes the handshake; nobody ever reads or answers
    try:
        box = Outbox(tmp_path / "o.db", 10**8)
        box.put(run(1))
        sender = Sender(box, f"http://127.0.0.1:{hung.getsockname()[1]}", "rpa_x", "ceph1", 10**6, 0.5)
        # connected and sent, no answer: a busy server, not an absent one (the next batch is smaller)
        with pytest.raises(SendError, match="server too slow: no answer within 0.5s") as caught:
            sender.send_once()
        assert caught.value.slow
        box.put(run(2))  # collection goes on meanwhile: the outbox takes runs while a send hangs
        assert box.stats()["records"] == 2 and sender._conn is None  # a fresh connection next time
        box.put(run(3))
        with pytest.raises(SendError, match="too slow"):
            sender.send_once()  # two records, no answer: the next batch takes one
        assert sender.max_records == 1 and box.stats()["records"] == 3
    finally:
        hung.close()


def test_a_server_url_that_is_not_http_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="use http://host:port or https://host:port"):
        Sender(Outbox(tmp_path / "o.db", 1000), "ftp://x", "t", "h", 1000, 1.0)


def test_the_agent_alone_serves_this_hosts_metrics_for_prometheus(tmp_path: Path) -> None:
    port = free_port()
    cfg = agent_config(tmp_path / "nas", "nas1", listen_port=port)
    proc = rackpulse("agent", "--config", str(cfg), log=tmp_path / "agent.log")
    try:
        import urllib.request

        def scrape() -> str:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:  # noqa: S310
                return r.read().decode()

        text = wait_for(lambda: (t := scrape()) and "rackpulse_md_array_degraded" in t
                        and "rackpulse_disk_temperature_celsius" in t and t, what="metrics")
        assert 'rackpulse_collector_up{host="nas1",collector="mdraid"} 1' in text
        assert 'rackpulse_disk_temperature_celsius{host="nas1"' in text
        assert not (tmp_path / "nas" / "outbox.db").exists() or "outbox" not in text
    finally:
        stop(proc, signal.SIGTERM)


def test_heartbeat_jobs_in_an_agents_config_are_left_to_the_server_and_said_so(tmp_path: Path) -> None:
    port = free_port()
    cfg = agent_config(tmp_path / "nas", "nas1", listen_port=port)
    text = cfg.read_text()
    assert "checks = []" in text  # the demo's agent has no jobs of its own
    cfg.write_text(text.replace("checks = []", "") + '\n[[collectors.heartbeats.checks]]\nname = "nightly-backup"\n'
                   'every = 60\n')
    log = tmp_path / "agent.log"
    proc = rackpulse("agent", "--config", str(cfg), log=log)
    try:
        import urllib.request

        def scrape() -> str:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:  # noqa: S310
                return r.read().decode()

        metrics = wait_for(lambda: (t := scrape()) and 'collector="heartbeats"} 1' in t and t, what="heartbeats run")
        # no job judged here: its pings go to the server, and here it would only ever be "never pinged"
        assert "rackpulse_heartbeat_up{" not in metrics
        assert "1 job(s) in an agent's config are judged by the server" in log.read_text()
        assert "left out here: nightly-backup" in log.read_text()
    finally:
        stop(proc, signal.SIGTERM)


def test_an_agent_with_neither_server_nor_listen_says_what_is_missing(tmp_path: Path) -> None:
    cfg = agent_config(tmp_path / "nas", "nas1")
    proc = rackpulse("agent", "--config", str(cfg), log=tmp_path / "agent.log")
    assert proc.wait(30) == 2
    assert "nothing to do: give --server URL" in (tmp_path / "agent.log").read_text()


def make_tls(tmp: Path) -> tuple[Path, Path, Path, Path]:
    """A private CA, a server certificate for 127.0.0.1 signed by it, and an unrelated CA."""
    import datetime as dt
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    now = dt.datetime.now(dt.UTC)

    def ca(cn: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (x509.CertificateBuilder().subject_name(name(cn)).issuer_name(name(cn)).public_key(key.public_key())
                .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
                .not_valid_after(now + dt.timedelta(days=1))
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                             crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                .sign(key, hashes.SHA256()))
        return key, cert

    ca_key, ca_cert = ca("rackpulse test CA")
    _, other_cert = ca("someone else's CA")
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(name("127.0.0.1")).issuer_name(ca_cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = [tmp / n for n in ("ca.pem", "cert.pem", "key.pem", "other-ca.pem")]
    paths[0].write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    paths[3].write_bytes(other_cert.public_bytes(serialization.Encoding.PEM))
    return paths[0], paths[1], paths[2], paths[3]


def test_agents_push_over_https_to_a_server_with_a_private_ca_and_refuse_a_wrong_one(tmp_path: Path,
                                                                                        sqlite_url: str) -> None:
    ca, cert, key, other = make_tls(tmp_path)
    port = free_port()
    cfg = server_config(tmp_path / "server.toml", sqlite_url, port)
    cfg.write_text(cfg.read_text().replace("[web]\n", f'[web]\ntls_cert_file = "{cert}"\ntls_key_file = "{key}"\n'))
    token = issue_token(cfg, "ceph1")
    proc = rackpulse("serve", "--config", str(cfg), log=tmp_path / "server.log")
    base = f"https://127.0.0.1:{port}"
    try:
        box = Outbox(tmp_path / "o.db", 10**8)
        box.put(run(1))
        wrong = Sender(box, base, token, "ceph1", 10**6, 5.0, ca_file=str(other))
        wait_for(lambda: _refused(wrong), what="TLS server up")
        with pytest.raises(SendError, match="CERTIFICATE_VERIFY_FAILED"):
            wrong.send_once()
        assert box.stats()["records"] == 1
        right = Sender(box, base, token, "ceph1", 10**6, 5.0, ca_file=str(ca))
        assert right.send_once() == 1
        assert box.stats()["records"] == 0
        right.close()
        wrong.close()
    finally:
        stop(proc)


def _refused(sender: Sender) -> bool:
    """True once the server answers TLS at all (a verify failure, not a refused connection)."""
    try:
        sender.send_once()
    except SendError as exc:
        return "CERTIFICATE_VERIFY_FAILED" in str(exc)
    return True


def test_a_keep_alive_connection_the_server_dropped_is_replaced_without_an_error(tmp_path: Path) -> None:
    import http.server
    import threading

    got: list[int] = []

    class OneShot(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # answers as if keep-alive, then hangs up (an idle timeout)

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers["Content-Length"]))
            got.append(1)
            body = b'{"status": "ok"}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True

        def log_message(self, *args: object) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), OneShot)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        box = Outbox(tmp_path / "o.db", 10**8)
        sender = Sender(box, f"http://127.0.0.1:{srv.server_address[1]}", "rpa_x", "h", 10**6, 5.0)
        for i in range(3):
            box.put(run(i))
            assert sender.send_once() == 1  # no SendError although each connection was dropped
        assert len(got) == 3 and box.stats()["records"] == 0
    finally:
        srv.shutdown()
        srv.server_close()


def test_an_agent_that_hangs_up_mid_batch_is_one_line_in_the_log_not_a_traceback(server) -> None:
    """An agent past its timeout on a loaded server closes the connection before its body is
    sent; it keeps the batch and sends it again. The server logged a whole traceback each time."""
    import socket

    base, token, tmp_path = server
    port = int(base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(f"POST /api/v1/ingest HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
                  "Content-Encoding: gzip\r\nContent-Length: 50000\r\n\r\n".encode() + b"\x1f\x8b" * 100)
    log = tmp_path / "server.log"
    wait_for(lambda: "hung up before its batch arrived" in log.read_text(), what="the hang-up logged")
    assert "Traceback" not in log.read_text() and "Exception in ASGI application" not in log.read_text()
    assert get_json(base + "/healthz")["status"] == "ok"


class RefusesOnLength:
    """A server that answers 413 to a batch over `limit` bytes from its Content-Length alone and
    closes without reading it (as uvicorn does for our ingest route): the agent, still writing,
    gets a reset. Batches within the limit are read and taken."""

    def __init__(self, limit: int) -> None:
        import socket
        import threading

        self.limit, self.taken, self.refused = limit, 0, 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            conn, _ = self.sock.accept()
            with conn:
                head = b""
                while b"\r\n\r\n" not in head:
                    head += conn.recv(65536)
                head, _, body = head.partition(b"\r\n\r\n")
                length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length:"))
                if length > self.limit:
                    self.refused += 1
                    answer, status = b'{"error":"batch is larger than the server\'s limit"}', b"413 Payload Too Large"
                else:
                    while len(body) < length:
                        body += conn.recv(65536)
                    self.taken += 1
                    answer, status = b'{"accepted":1}', b"200 OK"
                conn.sendall(b"HTTP/1.1 " + status + b"\r\nContent-Type: application/json\r\nContent-Length: "
                             + str(len(answer)).encode() + b"\r\nConnection: close\r\n\r\n" + answer)


def test_a_413_sent_before_the_batch_was_read_halves_the_batch_instead_of_reading_as_unreachable(tmp_path: Path) -> None:
    import random

    box = Outbox(tmp_path / "o.db", 10**8)
    rng = random.Random(7)
    for i in range(8):  # numbers that do not compress: each record ~0.5 MB gzipped
        box.put({**run(i, n=0), "samples": [["rackpulse_hwmon_value", {"i": str(k)}, rng.random()]
                                              for k in range(20_000)]})
    refuser = RefusesOnLength(limit=1_500_000)
    sender = Sender(box, refuser.url, "t" * 40, "ceph1", 64 * 1024 * 1024, 10.0)
    with pytest.raises(SendError) as first:
        sender.send_once()
    assert first.value.status == 413, first.value  # read as the server's answer, not "unreachable"
    drain(sender)
    assert refuser.refused >= 1 and box.stats()["records"] == 0 and box.stats()["rejected"] == 0
