"""Prometheus remote write 1.0 from the database to a real Prometheus the test starts with
--web.enable-remote-write-receiver, read back through its HTTP API: every stored sample with its
labels, resumed from the watermark after the receiver was down (nothing lost, nothing twice),
and a receiver that refuses a batch for good does not stop the rest."""

from __future__ import annotations

import json
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from app.config import RemoteWriteConfig
from app.export.remote_write import RemoteWrite, encode_write_request
from app.storage.db import make_engine, upgrade
from app.storage.store import Store
from collectors.base import Sample
from tests.peers import free_port


class Prometheus:
    def __init__(self, folder: Path) -> None:
        self.folder, self.port = folder, free_port()
        (folder / "prometheus.yml").write_text("global:\n  scrape_interval: 1h\n")
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(["prometheus", f"--config.file={self.folder / 'prometheus.yml'}",
                                      f"--storage.tsdb.path={self.folder / 'data'}",
                                      f"--web.listen-address=127.0.0.1:{self.port}",
                                      "--web.enable-remote-write-receiver"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=1)
                return
            except OSError:
                time.sleep(0.1)
        raise AssertionError("prometheus did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(30)
            self.proc = None

    @property
    def write_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v1/write"

    def query(self, expr: str, at: float) -> list[dict[str, Any]]:
        q = urllib.parse.urlencode({"query": expr, "time": f"{at:.3f}"})
        doc = json.load(urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/v1/query?{q}", timeout=10))
        return list(doc["data"]["result"])


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[Prometheus]:
    p = Prometheus(tmp_path)
    p.start()
    yield p
    p.stop()


def store(tmp_path: Path) -> Store:
    url = f"sqlite:///{tmp_path / 'rp.db'}"
    upgrade(url)
    return Store(make_engine(url), "nas")


def write(st: Store, ts: int, temp: float, degraded: float = 0) -> None:
    with st.engine.begin() as c:
        st.write_samples(c, ts, [Sample.of("rackpulse_disk_temperature_celsius", temp, serial="ZA1049HK"),
                                 Sample.of("rackpulse_md_array_degraded", degraded, array="md0")])


def sender(url: str, st: Store, **kw: Any) -> RemoteWrite:
    return RemoteWrite(RemoteWriteConfig(url=url, **kw), st.engine)


def test_every_stored_sample_reaches_prometheus_with_its_labels(prometheus: Prometheus, tmp_path: Path) -> None:
    st = store(tmp_path)
    now = int(time.time())
    for i in range(60):  # the last ten minutes, every 10 s
        write(st, now - 600 + i * 10, 30 + i * 0.1, degraded=1 if i >= 50 else 0)
    rw = sender(prometheus.write_url, st)
    assert rw.tick(now=now + 20) == 120 and rw.stats.failures == 0
    got = prometheus.query('rackpulse_disk_temperature_celsius{host="nas",serial="ZA1049HK"}[15m]', now + 20)
    assert len(got) == 1 and len(got[0]["values"]) == 60
    assert got[0]["values"][0] == [now - 600, "30"] and got[0]["values"][-1][1] == "35.9"
    (deg,) = prometheus.query("rackpulse_md_array_degraded", now - 5)
    assert deg["metric"] == {"__name__": "rackpulse_md_array_degraded", "host": "nas", "array": "md0"}
    assert deg["value"][1] == "1"


def test_a_receiver_that_was_down_is_caught_up_from_the_watermark(prometheus: Prometheus, tmp_path: Path) -> None:
    st = store(tmp_path)
    now = int(time.time())
    for i in range(30):
        write(st, now - 900 + i * 10, 20.0 + i)
    rw = sender(prometheus.write_url, st)
    assert rw.tick(now=now - 600) == 60  # up to now - 610: the 30 samples written so far
    mark = rw.stats.watermark
    prometheus.stop()
    for i in range(30, 60):  # written while the receiver is down
        write(st, now - 900 + i * 10, 20.0 + i)
    assert rw.tick(now=now - 250) == 0 and rw.stats.failures == 1 and rw.stats.watermark == mark
    assert "Connection refused" in (rw.stats.last_error or "")
    assert rw.tick(now=now - 249) == 0  # backing off: not even tried
    prometheus.start()
    again = sender(prometheus.write_url, st)  # rackpulse restarted meanwhile: the watermark is in the database
    assert again.load_watermark(time.time()) == mark
    assert again.tick(now=now + 20) == 60
    (series,) = prometheus.query('rackpulse_disk_temperature_celsius[20m]', now + 20)
    values = [float(v) for _, v in series["values"]]
    assert values == [20.0 + i for i in range(60)]  # all of them, once, in order


class Refusing(BaseHTTPRequestHandler):
    """A receiver that refuses the first request for good (400) and takes the rest."""

    seen: list[int] = []

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        Refusing.seen.append(len(Refusing.seen))
        self.send_response(400 if len(Refusing.seen) == 1 else 204)
        self.end_headers()
        if len(Refusing.seen) == 1:
            self.wfile.write(b"out of order sample")

    def log_message(self, *args: Any) -> None:
        pass


def test_a_batch_refused_for_good_is_skipped_and_said_and_the_rest_is_sent(tmp_path: Path) -> None:
    server = HTTPServer(("127.0.0.1", 0), Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        st = store(tmp_path)
        now = int(time.time())
        for i in range(60):
            write(st, now - 600 + i * 10, 30.0)
        rw = sender(f"http://127.0.0.1:{server.server_port}/api/v1/write", st, batch_samples=100)
        sent = rw.tick(now=now + 20)
        assert rw.stats.dropped > 0 and sent + rw.stats.dropped == 120
        assert rw.stats.last_error == "HTTP 400: out of order sample" and rw.stats.failures == 0
    finally:
        server.shutdown()


def test_the_protobuf_is_what_prompb_describes() -> None:
    body = encode_write_request([([("host", "nas"), ("__name__", "up")], [(1000, 1.0)])])
    # TimeSeries (1) { Label (1) { name "__name__", value "up" } Label { host nas } Sample (2) { 1.0 @ 1000 } },
    # labels sorted by name
    assert body.hex() == ("0a2b" "0a0e" "0a085f5f6e616d655f5f" "1202" "7570" "0a0b" "0a04686f7374" "1203" "6e6173"
                          "120c" "09000000000000f03f" "10e807")


def test_serve_sends_to_the_configured_receiver(prometheus: Prometheus, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from app.config import load_config
    from app.web.app import create_app
    from collectors import plugins

    st = store(tmp_path)
    now = int(time.time())
    for i in range(10):
        write(st, now - 300 + i * 10, 40.0)
    off = {name: {"enabled": False} for name in plugins()}
    cfg = load_config(None, {"host": "nas", "host_root": str(tmp_path), "storage": {"url": f"sqlite:///{tmp_path}/rp.db"},
                             "collectors": off,
                             "export": {"remote_write": [{"url": prometheus.write_url, "interval": 0.2}]}})
    with TestClient(create_app(cfg)) as client:
        rw = client.app.state.remote_writes[0]  # type: ignore[attr-defined]
        deadline = time.time() + 30
        while rw.stats.samples_sent < 20 and time.time() < deadline:
            time.sleep(0.1)
    assert rw.stats.samples_sent == 20
    assert len(prometheus.query("rackpulse_disk_temperature_celsius[10m]", time.time())[0]["values"]) == 10


def test_an_unreadable_password_file_is_said_and_retried_not_a_crash(tmp_path: Path) -> None:
    st = store(tmp_path)
    now = int(time.time())
    write(st, now - 60, 30.0)
    rw = sender("http://127.0.0.1:9/api/v1/write", st,
                basic_auth={"username": "rp", "password_file": str(tmp_path / "missing.pw")})
    assert rw.tick(now=now) == 0 and rw.stats.failures == 1
    assert "basic_auth password_file" in (rw.stats.last_error or "") and "missing.pw" in (rw.stats.last_error or "")
