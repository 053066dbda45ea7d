"""Containers through the Engine API: recorded answers served by a real HTTP server on a unix
socket for what cannot run here (running, healthy, unhealthy, restarting, OOM-killed), each rule
firing on the container it should; and a hung or absent engine."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from collectors.base import CollectorError, NoData
from collectors.findings import Judging
from collectors.host.containers.collector import ContainersCollector
from collectors.host.containers.config import ContainersConfig
from collectors.host.containers.engine import cpu_ratio, parse_inspect, parse_list, parse_stats
from collectors.host.containers.findings import findings, view
from tests.collectors.host.containers.engine_server import RECORDED, EngineServer


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[EngineServer]:
    server = EngineServer(tmp_path)
    yield server
    server.stop()


def collector(server: EngineServer, **cfg: object) -> ContainersCollector:
    return ContainersCollector(ContainersConfig(socket=str(server.socket), **cfg))  # type: ignore[arg-type]


def test_the_list_names_each_container_with_its_compose_project_and_service() -> None:
    got = [(c.name, c.state, c.labels.get("com.docker.compose.project")) for c in
           parse_list((RECORDED / "containers.json").read_bytes())]
    assert got == [("media-jellyfin-1", "running", "media"), ("media-sonarr-1", "running", "media"),
                   ("media-postgres-1", "exited", "media"), ("media-worker-1", "restarting", "media"),
                   ("backup-once", "exited", None)]


def test_inspect_reads_health_its_last_output_exit_code_oom_restarts_and_policy() -> None:
    sonarr = parse_inspect((RECORDED / "inspect-8a7b6c5d4e3f.json").read_bytes())
    assert (sonarr.health, sonarr.failing_streak, sonarr.restart_policy) == ("unhealthy", 7, "unless-stopped")
    assert sonarr.health_log == "curl: (7) Failed to connect to localhost port 8989 after 0 ms: Couldn't connect to server"
    pg = parse_inspect((RECORDED / "inspect-c0ffee001122.json").read_bytes())
    assert (pg.state, pg.exit_code, pg.oom_killed, pg.restart_count) == ("exited", 137, True, 1)
    assert pg.finished_at == pytest.approx(1795640112.5)  # 2026-11-25T20:55:12.5Z, nanoseconds cut to micro
    jelly = parse_inspect((RECORDED / "inspect-3f1c2a9b7d4e.json").read_bytes())
    assert jelly.finished_at is None  # the zero time 0001-01-01 is "never"


def test_memory_leaves_out_the_page_cache_and_cpu_comes_from_two_readings() -> None:
    first = parse_stats((RECORDED / "stats-3f1c2a9b7d4e.json").read_bytes())
    assert first.memory_bytes == 600_000_000 and first.memory_limit_bytes == 16_671_821_824
    later = first.__class__(first.cpu_total_ns + 2e9, first.system_ns + 8e9, 4, first.memory_bytes,  # type: ignore[operator]
                            first.memory_limit_bytes)
    assert cpu_ratio(later, first) == pytest.approx(1.0)  # 2 s of CPU in 2 s on a 4-CPU host: one core
    assert cpu_ratio(first, None) is None and cpu_ratio(first, later) is None  # a restarted counter


def test_each_rule_fires_on_the_container_it_is_about(engine: EngineServer) -> None:
    state = collector(engine).collect().state
    said = sorted((f.rule, f.subject, f.text) for f in findings(state, Judging()))  # type: ignore[arg-type]
    assert said == [
        ("container_exited", "media-postgres-1", "container media-postgres-1 (media/postgres) exited with code 137 "
                                                 "(restart policy unless-stopped: it should be running)"),
        ("container_oom", "media-postgres-1", "container media-postgres-1 (media/postgres) was killed for lack of "
                                              "memory (OOM)"),
        ("container_unhealthy", "media-sonarr-1", "container media-sonarr-1 (media/sonarr) is unhealthy (7 checks "
                                                  "failed in a row): curl: (7) Failed to connect to localhost port "
                                                  "8989 after 0 ms: Couldn't connect to server"),
    ]  # backup-once exited 3 under policy "no": a job that ended, not a failure


def test_restarts_within_ten_minutes_past_the_limit_are_container_restarting(engine: EngineServer) -> None:
    now = [1_800_000_000.0]
    c = collector(engine)
    c.clock = lambda: now[0]
    c.collect()
    for count in (16, 18):  # three minutes apart
        now[0] += 180
        engine.change("inspect-d15ea5e0d15e.json", lambda d, n=count: d.update(RestartCount=n))
        state = c.collect().state
    worker = next(x for x in state.containers if x.name == "media-worker-1")  # type: ignore[union-attr]
    assert worker.restarts_10m == 4
    assert [f.text for f in findings(state, Judging()) if f.rule == "container_restarting"] == [  # type: ignore[arg-type]
        "container media-worker-1 (media/worker) restarted 4 times in 10 minutes (18 in all)"]
    now[0] += 700  # ten quiet minutes later
    assert not [f for f in findings(c.collect().state, Judging()) if f.rule == "container_restarting"]  # type: ignore[arg-type]


def test_the_page_groups_containers_by_compose_project(engine: EngineServer) -> None:
    state = collector(engine).collect().state
    groups = view(state, findings(state, Judging()))["groups"]  # type: ignore[arg-type]
    assert [(p, [c.service or c.name for c, _ in rows]) for p, rows in groups] == [
        ("media", ["jellyfin", "postgres", "sonarr", "worker"]), ("", ["backup-once"])]


def test_only_get_requests_are_sent_and_running_containers_get_one_shot_stats(engine: EngineServer) -> None:
    r = collector(engine).collect()
    assert {m for m, _ in engine.requests} == {"GET"}
    stats = sorted(p for _, p in engine.requests if "/stats" in p)
    assert stats == ["/v1.41/containers/3f1c2a9b7d4e5f60718293a4b5c6d7e8f90112233445566778899aabbccddeef0/stats"
                     "?stream=false&one-shot=true",
                     "/v1.41/containers/8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b/stats"
                     "?stream=false&one-shot=true"]
    got = {(s.metric, dict(s.labels).get("container")): s.value for s in r.samples}
    assert got[("rackpulse_container_memory_bytes", "media-jellyfin-1")] == 600_000_000
    assert got[("rackpulse_container_healthy", "media-sonarr-1")] == 0
    assert r.state.engine == "Engine 27.3.1"  # type: ignore[union-attr]


def test_no_engine_socket_is_source_absent(tmp_path: Path) -> None:
    with pytest.raises(NoData, match="no container engine socket"):
        ContainersCollector(ContainersConfig(socket=str(tmp_path / "none.sock"))).collect()


def test_a_hung_engine_fails_the_run_within_its_command_timeout(tmp_path: Path) -> None:
    server = EngineServer(tmp_path, hang=True)
    cfg = ContainersConfig(socket=str(server.socket), command_timeout=0.5)
    started = time.monotonic()
    try:
        with pytest.raises(CollectorError, match="timed out after 0.5 s"):
            ContainersCollector(cfg).collect()
    finally:
        server.stop()
    assert time.monotonic() - started < cfg.timeout  # within the run's own budget, not the engine's 30 s


def test_a_container_the_engine_failed_to_restart_or_that_podman_says_was_not_stopped_stays_critical() -> None:
    """Stopped on request is a warning; an exit the engine could not repair is not: State.Error set
    (Docker could not restart it), or Podman 5's StoppedByUser false."""
    from collectors.host.containers.collector import stopped_on_request

    doc = json.loads((RECORDED / "inspect-c0ffee001122.json").read_text())
    doc["State"]["OOMKilled"] = False
    assert stopped_on_request(parse_inspect(json.dumps(doc)))  # exited, unless-stopped, no error: someone stopped it
    failed = {**doc, "State": {**doc["State"], "Error": "driver failed programming external connectivity"}}
    assert not stopped_on_request(parse_inspect(json.dumps(failed)))
    podman5 = {**doc, "State": {**doc["State"], "StoppedByUser": False}}
    assert not stopped_on_request(parse_inspect(json.dumps(podman5)))
    assert stopped_on_request(parse_inspect(json.dumps({**doc, "State": {**doc["State"], "StoppedByUser": True}})))
