"""/metrics of a server with agents is one valid exposition: `promtool check metrics` (the real
one, from Debian's prometheus package) accepts it, each family appears once, gzip when asked."""

from __future__ import annotations

import gzip
import subprocess
import time
from pathlib import Path

from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from app.config import load_config
from app.ingest import agents
from app.scheduler import Scheduler, Snapshot
from app.storage.db import make_engine, upgrade
from app.web.app import create_app
from collectors.base import Collector, CollectResult, MetricSpec, Sample
from tests.test_agents import batch, body, post, run_record


class Disks(Collector):
    name = "smart"
    metrics = {"rackpulse_disk_temperature_celsius": MetricSpec("Drive temperature."),
               "rackpulse_disk_health": MetricSpec("0 ok, 1 warning, 2 failing.")}

    def collect(self) -> CollectResult:
        return CollectResult([Sample.of("rackpulse_disk_temperature_celsius", 31, serial="LOCAL1"),
                              Sample.of("rackpulse_disk_health", 0, serial="LOCAL1")])


def server_with_agents(tmp_path: Path) -> TestClient:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    upgrade(url)
    cfg = load_config(None, {"host": "server", "storage": {"url": url}})
    engine = make_engine(url)
    snap = Snapshot(host="server")
    import asyncio

    asyncio.run(Scheduler({"smart": Disks()}, {"smart": (30, 10)}, snap).run_all_once())
    tokens = {h: agents.issue(engine, h) for h in ("ceph1", "ceph2")}
    app = create_app(cfg, collect=False, snapshot=snap, migrate=False)
    client = TestClient(app, base_url="http://127.0.0.1")
    now = time.time()
    for host, token in tokens.items():
        r = post(client, token, body(batch([run_record(1, now - 10)], host=host)))
        assert r.status_code == 200, r.text
    return client


def test_promtool_accepts_the_metrics_of_a_server_with_agents(tmp_path: Path) -> None:
    with server_with_agents(tmp_path) as client:
        text = client.get("/metrics").text
    # The same family from the server and two agents: its header once, its samples together.
    assert text.count("# TYPE rackpulse_disk_temperature_celsius gauge") == 1
    lines = [line for line in text.splitlines() if line.startswith("rackpulse_disk_temperature_celsius{")]
    assert sorted(line.split('host="')[1].split('"')[0] for line in lines) == ["ceph1", "ceph2", "server"]
    first = text.index("# TYPE rackpulse_disk_temperature_celsius")
    block = text[first:].split("# HELP", 1)[0]
    assert all(line in block for line in lines)
    check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    assert {f.name for f in text_string_to_metric_families(text)} >= {"rackpulse_disk_temperature_celsius", "rackpulse_agent_batches"}


def test_metrics_with_agents_are_gzip_compressed_when_the_scraper_asks(tmp_path: Path) -> None:
    with server_with_agents(tmp_path) as client:
        plain = client.get("/metrics", headers={"Accept-Encoding": "identity"})
        raw = client.get("/metrics", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in plain.headers
    assert raw.headers["content-encoding"] == "gzip" and raw.text == plain.text
    assert len(gzip.compress(plain.content)) < len(plain.content)


def test_an_agent_named_like_the_server_cannot_take_metrics_down(tmp_path: Path) -> None:
    """Its series would repeat the server's own (same host label): Prometheus refuses such a scrape."""
    with server_with_agents(tmp_path) as client:
        engine = make_engine(f"sqlite:///{tmp_path / 'r.db'}")
        token = agents.issue(engine, "server")  # made behind the CLI's back, which refuses it
        r = post(client, token, body(batch([run_record(1, time.time() - 5)], host="server")))
        assert r.status_code == 200
        text = client.get("/metrics").text
    assert text.count('rackpulse_disk_temperature_celsius{host="server",serial="LOCAL1"}') == 1
    assert 'rackpulse_disk_temperature_celsius{host="server",serial="ZA1049HK"}' not in text
    check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_cli_refuses_an_agent_token_for_the_servers_own_host_name(tmp_path: Path) -> None:
    from tests.cli import run_cli

    cfg = tmp_path / "r.toml"
    cfg.write_text(f'host = "nas"\n[storage]\nurl = "sqlite:///{tmp_path / "r.db"}"\n')
    r = run_cli("agents", "issue", "nas", "--config", str(cfg))
    assert r.returncode == 2 and "this server's own host name" in r.stderr and "rpa_" not in r.stdout


def test_agent_metrics_prometheus_would_misread_are_refused_or_left_out_and_promtool_passes(tmp_path: Path) -> None:
    """An agent's undeclared metric is shown as a gauge: not when its name or labels say counter,
    histogram or summary (promtool fails the scrape), nor a name Prometheus keeps for itself."""
    with server_with_agents(tmp_path) as client:
        engine = make_engine(f"sqlite:///{tmp_path / 'r.db'}")
        token = agents.issue(engine, "ceph3")
        for name in ("__name__", "__meta_x"):
            b = batch([run_record(1, time.time() - 8)], host="ceph3")
            b["records"][0]["samples"] = [[name, {}, 1.0]]
            r = post(client, token, body(b))
            assert r.status_code == 400 and "reserved" in r.json()["error"], r.text
        b = batch([run_record(1, time.time() - 5, collector="smart"),
                   run_record(2, time.time() - 4, collector="hwmon")], host="ceph3")
        odd = [["rackpulse_odd_total", {}, 1.0], ["rackpulse_odd_bucket", {"le": "1"}, 2.0],
               ["rackpulse_odd_seconds", {"quantile": "0.5"}, 3.0], ["rackpulse_odd_gauge", {}, 5.0], ["rackpulse_fine", {}, 4.0]]
        b["records"][0]["samples"] += odd
        # The same series from two collectors of one agent: shown once.
        b["records"][1]["samples"] = list(b["records"][0]["samples"])
        assert post(client, token, body(b)).status_code == 200
        text = client.get("/metrics").text
    assert 'rackpulse_fine{host="ceph3"} 4' in text
    for name in ("rackpulse_odd_total", "rackpulse_odd_bucket", "rackpulse_odd_seconds", "rackpulse_odd_gauge"):
        assert name not in text
    assert text.count('rackpulse_disk_temperature_celsius{host="ceph3",serial="ZA1049HK"}') == 1
    check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr


def test_gzip_refused_with_q_0_is_not_sent() -> None:
    from app.web.api import accepts_gzip

    assert accepts_gzip("gzip") and accepts_gzip("br, gzip;q=0.5") and accepts_gzip("*")
    assert not accepts_gzip("gzip;q=0") and not accepts_gzip("gzip; q=0.0, identity")
    assert not accepts_gzip("identity") and not accepts_gzip("") and not accepts_gzip("*;q=0")
    assert not accepts_gzip("gzip;q=0, *")  # gzip named with q=0 wins over the wildcard
