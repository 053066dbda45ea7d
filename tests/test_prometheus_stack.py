"""The Prometheus / Alertmanager / Grafana side: rule files checked and unit-tested with
promtool, a real Prometheus scraping a running `rackpulse demo` and a real Alertmanager
delivering the resulting alert; the Grafana dashboard and the compose file validated."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from app.agent.push import AGENT_METRICS
from app.data.watch import SPECS as DATA_SPECS
from app.energy.watch import SPECS as ENERGY_SPECS
from app.ingest.agents import SERVER_METRICS
from app.scheduler import SELF_METRICS
from collectors import plugins
from tests.alerting.sink import Sink
from tests.peers import free_port

ROOT = Path(__file__).parent.parent
DEPLOY = ROOT / "deploy"


def run(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=120, cwd=cwd)


def test_the_rule_file_passes_promtool_check_and_its_unit_tests() -> None:
    r = run("promtool", "check", "rules", "rackpulse-rules.yml", cwd=DEPLOY / "prometheus")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS: 48 rules found" in r.stdout
    r = run("promtool", "test", "rules", "rackpulse-rules.test.yml", cwd=DEPLOY / "prometheus")
    assert r.returncode == 0 and "SUCCESS" in r.stdout, r.stdout + r.stderr


def test_the_prometheus_and_alertmanager_configs_are_valid() -> None:
    r = run("promtool", "check", "config", "--syntax-only", str(DEPLOY / "prometheus/prometheus.yml"))
    assert r.returncode == 0, r.stdout + r.stderr
    r = run("amtool", "check-config", str(DEPLOY / "alertmanager/alertmanager.yml"))
    assert r.returncode == 0, r.stdout + r.stderr


def all_metric_names() -> set[str]:
    names = set(SELF_METRICS) | set(SERVER_METRICS) | set(AGENT_METRICS) | set(ENERGY_SPECS) | set(DATA_SPECS)
    for plugin in plugins().values():
        names |= set(plugin.collector.metrics)
    return names


def test_every_rule_and_dashboard_query_uses_metrics_rackpulse_exports() -> None:
    known = all_metric_names()
    rules = yaml.safe_load((DEPLOY / "prometheus/rackpulse-rules.yml").read_text())
    exprs = [r["expr"] for g in rules["groups"] for r in g["rules"]]
    dash = json.loads((DEPLOY / "grafana/rackpulse.json").read_text())
    exprs += [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    used = {m for e in exprs for m in re.findall(r"\b(rackpulse_[a-z0-9_]+)", e)}
    assert used and used <= known, sorted(used - known)
    sections = {p["title"] for p in dash["panels"] if p["type"] == "row"}
    assert sections == {"Disks and arrays", "Network", "Heat pump", "Power", "Storage beyond md", "Energy"}


def test_the_compose_file_wires_the_stack_without_privileged_containers() -> None:
    doc = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = doc["services"]
    assert set(services) == {"rackpulse", "prometheus", "alertmanager", "grafana"}
    for name, svc in services.items():
        assert not svc.get("privileged"), name
        for port in svc.get("ports", []):
            assert port.startswith("127.0.0.1:"), f"{name} publishes {port} beyond loopback"
        for vol in svc.get("volumes", []):
            src = vol.split(":")[0]
            if src.startswith("./"):
                assert (ROOT / src).exists(), f"{name}: {src} missing"
    assert {"/proc:/host/proc:ro", "/sys:/host/sys:ro", "/dev:/host/dev:ro"} <= set(services["rackpulse"]["volumes"])
    assert set(services["rackpulse"]["cap_add"]) == {"SYS_RAWIO", "SYS_ADMIN"}
    assert "devices" not in services["rackpulse"]  # the user's disks, not a /dev/sda that may not exist


def test_the_shipped_compose_config_keeps_the_database_in_the_volume_and_asks_for_a_login(tmp_path: Path) -> None:
    """The container's files are read-only: a relative sqlite:///rackpulse.db could not be written."""
    from app.config import ConfigError, load_config
    from app.serve_checks import check_serve

    doc = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    svc = doc["services"]["rackpulse"]
    mounted = {v.split(":")[0]: v.split(":")[1] for v in svc["volumes"]}
    cfg = load_config(ROOT / "deploy/compose/rackpulse.toml")
    db = cfg.storage.url.removeprefix("sqlite:///")
    volume_dir = next(d for src, d in mounted.items() if src == "rackpulse-data")
    assert db.startswith(volume_dir + "/") and svc["read_only"] is True
    assert str(cfg.host_root) == "/host" and mounted["./deploy/compose/rackpulse.toml"] == svc["environment"]["RACKPULSE_CONFIG"]
    assert "rackpulse" in cfg.web.allowed_hosts
    # beyond loopback without a hash: serve refuses, saying what to set
    with pytest.raises(ConfigError, match="login is required"):
        check_serve(cfg.model_copy(update={"storage": cfg.storage.model_copy(update={"url": f"sqlite:///{tmp_path / 'x.db'}"})}))


def test_docker_compose_accepts_the_compose_file() -> None:
    # Debian's docker-compose validates and interpolates the file; no engine is needed for `config`.
    r = run("docker-compose", "-f", str(ROOT / "docker-compose.yml"), "config", "-q", cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr


def wait_http(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:  # noqa: S310 - loopback
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{url} never answered")


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[dict[str, object]]:
    """rackpulse demo (fast story) + Prometheus + Alertmanager -> a webhook receiver."""
    procs: list[subprocess.Popen[bytes]] = []
    receiver = Sink()
    base = Path(tempfile.mkdtemp(prefix="rackpulse-prom-"))
    rp, prom, am = free_port(), free_port(), free_port()
    rules = yaml.safe_load((DEPLOY / "prometheus/rackpulse-rules.yml").read_text())
    (base / "rules.yml").write_text(yaml.safe_dump(rules))
    (base / "prometheus.yml").write_text(yaml.safe_dump({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(base / "rules.yml")],
        "alerting": {"alertmanagers": [{"static_configs": [{"targets": [f"127.0.0.1:{am}"]}]}]},
        "scrape_configs": [{"job_name": "rackpulse", "static_configs": [{"targets": [f"127.0.0.1:{rp}"]}]}]}))
    (base / "alertmanager.yml").write_text(yaml.safe_dump({
        "route": {"receiver": "test", "group_by": ["alertname"], "group_wait": "1s", "group_interval": "2s"},
        "receivers": [{"name": "test", "webhook_configs": [{"url": receiver.url, "send_resolved": True}]}]}))
    (base / "am").mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        procs.append(subprocess.Popen([sys.executable, "-m", "app.cli", "demo", "--port", str(rp), "--speed", "3",
                                       "--interval", "1", "--dir", str(base / "demo")], cwd=ROOT, env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
        procs.append(subprocess.Popen(["prometheus-alertmanager", f"--config.file={base / 'alertmanager.yml'}",
                                       f"--storage.path={base / 'am'}", f"--web.listen-address=127.0.0.1:{am}",
                                       "--cluster.listen-address="],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        procs.append(subprocess.Popen(["prometheus", f"--config.file={base / 'prometheus.yml'}",
                                       f"--storage.tsdb.path={base / 'data'}",
                                       f"--web.listen-address=127.0.0.1:{prom}"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_http(f"http://127.0.0.1:{rp}/healthz")
        wait_http(f"http://127.0.0.1:{am}/-/ready")
        wait_http(f"http://127.0.0.1:{prom}/-/ready")
        yield {"prometheus": prom, "receiver": receiver}
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGTERM) if p is procs[0] else p.terminate()
            except ProcessLookupError:
                pass
        for p in procs:
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
        receiver.close()
        shutil.rmtree(base, ignore_errors=True)


def test_prometheus_scrapes_rackpulse_and_alertmanager_delivers_the_degraded_array(stack: dict) -> None:  # type: ignore[type-arg]
    prom, receiver = stack["prometheus"], stack["receiver"]
    deadline = time.monotonic() + 90
    by_host: dict[str, int] = {}
    # Wait for the demo's own disks: its agent host (ceph-node1) may reach the scrape first.
    while time.monotonic() < deadline and "demo-nas" not in by_host:
        q = urllib.request.urlopen(f"http://127.0.0.1:{prom}/api/v1/query?query=rackpulse_disk_health", timeout=5)  # noqa: S310
        by_host = {}
        for s in json.load(q)["data"]["result"]:
            by_host[s["metric"]["host"]] = by_host.get(s["metric"]["host"], 0) + 1
        time.sleep(0.5)
    # the demo's own 14 disks; its second host (ceph-node1, through an agent) comes through the same scrape
    assert by_host.get("demo-nas") == 14 and set(by_host) <= {"demo-nas", "ceph-node1"}
    while time.monotonic() < deadline:
        names = {a["labels"]["alertname"] for m in receiver.json() for a in m.get("alerts", [])}
        if "RackpulseArrayDegraded" in names:
            break
        time.sleep(0.5)
    alerts = [a for m in receiver.json() for a in m["alerts"] if a["labels"]["alertname"] == "RackpulseArrayDegraded"]
    assert alerts and alerts[0]["labels"]["array"] == "md0" and alerts[0]["status"] == "firing"
    assert alerts[0]["annotations"]["summary"] == "demo-nas: md0 degraded"


def test_promtool_check_metrics_passes_on_the_demos_whole_metrics(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every family the demo shows at two moments of its story (a disk failing and a RAID drive
    rebuilding; the UPS on battery): counters end in _total, units are base units (bytes)."""
    from fastapi.testclient import TestClient

    from tests.test_web import demo_app

    for t in (80.0, 185.0):
        app = demo_app(tmp_path_factory.mktemp("demo"), t, runs=2, shared=False)
        with TestClient(app, base_url="http://127.0.0.1") as client:
            text = client.get("/metrics").text
        assert "rackpulse_megaraid_pd_media_errors_total" in text and "rackpulse_zfs_vdev_errors_total" in text
        check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True,
                               timeout=60)
        assert check.returncode == 0, (t, check.stdout + check.stderr)


def test_promtool_accepts_every_declared_metric_of_every_plug_in() -> None:
    """One sample of each metric every installed plug-in declares (the demo shows only some:
    btrfs, PSI, HTTP status codes ...), as /metrics renders them."""
    from app.exposition import merge, render_families
    from collectors import plugins
    from collectors.base import Sample

    parts = []
    for p in plugins().values():
        samples = [Sample.of(m, 1, x="1") for m in p.collector.metrics]
        parts.append(render_families(samples, p.collector.metrics, "nas"))
    text = merge(parts).decode()
    # one family per metric: the ones plug-ins share (collectors/energy.py: every source's watts and
    # energy) merged into one, as Prometheus wants
    assert text.count("# HELP ") == len({m for p in plugins().values() for m in p.collector.metrics})
    check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
