"""A server and two agents as real processes on loopback: the server is killed mid-stream
and restarted, and nothing is lost or stored twice; a revoked agent is refused while the
other goes on. Runs against SQLite and the real PostgreSQL."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from sqlalchemy import func, select

from app.agent.push import JITTER, MAX_BACKOFF
from app.demo.agent import SEND_TIMEOUT
from app.storage.db import make_engine
from app.storage.models import agent, collector_run, sample, series
from tests.agent_hosts import (
    agent_config,
    free_port,
    get_json,
    issue_token,
    rackpulse,
    server_config,
    stop,
    wait_for,
    wait_while_moving,
)
from tests.states import enabled_in


def runs_by_host(db_url: str) -> dict[str, dict[str, list[float]]]:
    engine = make_engine(db_url)
    try:
        with engine.connect() as c:
            rows = c.execute(select(collector_run.c.host, collector_run.c.collector, collector_run.c.started)).all()
    finally:
        engine.dispose()
    out: dict[str, dict[str, list[float]]] = {}
    for host, coll, started in rows:
        out.setdefault(host, {}).setdefault(coll, []).append(started)
    return out


def runs_and_last_seq(db_url: str, host: str) -> tuple[int, int]:
    """How many runs of ``host`` the server holds and the agent's last_seq, read in ONE statement.

    A stopped agent's send may still be in flight at the server (its sender is a daemon thread),
    and the server commits that batch's runs and last_seq together. Two separate SELECTs can fall
    on either side of the commit: CI once read last_seq 24 and then 26 runs. One statement sees
    one snapshot, in PostgreSQL and in SQLite."""
    runs = (select(func.count()).select_from(collector_run).where(collector_run.c.host == host)
            .scalar_subquery())
    engine = make_engine(db_url)
    try:
        with engine.connect() as c:
            n, last = c.execute(select(runs, agent.c.last_seq).where(agent.c.host == host)).one()
    finally:
        engine.dispose()
    return int(n), int(last)


def test_killing_the_server_mid_stream_loses_nothing_and_stores_nothing_twice(tmp_path: Path, db_url: str) -> None:
    port, p1, p2 = free_port(), free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    scfg = server_config(tmp_path / "server.toml", db_url, port)
    tokens = {h: issue_token(scfg, h) for h in ("nas1", "ceph1")}
    ports = {"nas1": p1, "ceph1": p2}
    log = tmp_path / "processes.log"
    server = rackpulse("serve", "--config", str(scfg), log=log)
    agents = {}
    try:
        wait_for(lambda: get_json(base + "/healthz"), what="server up")
        for host, token in tokens.items():
            (tmp_path / f"{host}.token").write_text(token + "\n")
            # every 2 s: two agents at 1 s (a dozen collectors each) out-produced what a loaded
            # CI machine ingested after the outage, and the backlog never drained
            cfg = agent_config(tmp_path / host, host, interval=2.0, listen_port=ports[host])
            agents[host] = rackpulse("agent", "--config", str(cfg), "--server", base,
                                     "--token-file", str(tmp_path / f"{host}.token"), log=log)

        # every collector the agent's config enables, heartbeats, containers and systemd too: an
        # agent here has none of those (no engine socket, no systemd running), and "none" is stored
        # as a run like any
        collectors = enabled_in(cfg)
        assert {"mdraid", "smart", "bonding", "hwmon", "host"} <= collectors

        def every_collector_stored(since: float) -> bool:
            """Each host has at least two runs of every collector that started after ``since``."""
            runs = runs_by_host(db_url)
            return all(sum(t > since for t in runs.get(h, {}).get(c, [])) >= 2 for h in tokens for c in collectors)

        # Before the kill, every collector's runs must already be on the server: the outage then
        # falls between stored runs, and a lost stretch would show as a hole.
        wait_for(lambda: every_collector_stored(0.0), what="both agents' runs stored")

        # Mid-stream: SIGKILL, no goodbye. The agents keep collecting into their outboxes.
        killed_at = time.time()
        stop(server, signal.SIGKILL)
        for host, p in ports.items():
            wait_for(lambda p=p: (h := get_json(f"http://127.0.0.1:{p}/healthz"))["outbox"]["records"] >= 25
                     and not h["delivering"], what=f"{host} spooling")
        # The backlog: everything spooled up to now. Drained means all of it is delivered; the
        # outbox need not be empty at that moment, since the agents go on collecting every second
        # (on a loaded machine a send takes long enough for new runs to wait behind it).
        backlog = {h: get_json(f"http://127.0.0.1:{p}/healthz")["outbox"]["newest_seq"] for h, p in ports.items()}
        server = rackpulse("serve", "--config", str(scfg), log=log)
        # Up first: an agent's try while the server still boots fails and waits one more backoff,
        # which no wait below should count as the backlog standing still
        wait_for(lambda: get_json(base + "/healthz"), what="server up again")

        def drained(host: str) -> bool:
            # the restarted server binds the port the killed one had: a test running beside this
            # one (pytest -n) may have taken it meanwhile; said at once, not after the deadline
            assert server.poll() is None, f"the restarted server exited: {log.read_text()[-800:]}"
            h = get_json(f"http://127.0.0.1:{ports[host]}/healthz")
            waiting = h["outbox"]["oldest_seq"]
            return bool(h["delivering"]) and (waiting == 0 or waiting > backlog[host])

        def outboxes() -> tuple[int, ...]:
            return tuple(get_json(f"http://127.0.0.1:{p}/healthz")["outbox"]["oldest_seq"] for p in ports.values())

        # The agent's next try comes at most one longest backoff after the server is up; then it sends its
        # backlog, 10,000 records a batch, halved while the server answers slower than the agent's
        # timeout. How long the whole backlog takes is the machine's speed (a loaded CI machine's
        # PostgreSQL took minutes); what is a failure is a backlog that stops moving.
        stall = MAX_BACKOFF * (1 + JITTER) + SEND_TIMEOUT * 3
        for host in ports:
            wait_while_moving(lambda host=host: drained(host), outboxes, stall, what=f"{host} drained")
        back_at = time.time()
        # ...and runs after the backlog, so that the outage lies inside what is checked.
        wait_while_moving(lambda: every_collector_stored(back_at), outboxes, stall,
                          what="runs after the restart stored")
        for proc in agents.values():
            stop(proc)
        # What the agents still had in flight when stopped is in their outboxes; everything
        # delivered must be complete and single.
        runs = runs_by_host(db_url)
        assert set(runs) == {"nas1", "ceph1"}
        for host, by_coll in runs.items():
            assert set(by_coll) == collectors, host
            for coll, started in by_coll.items():
                assert len(started) == len(set(started)), f"{host}/{coll}: a run stored twice"
                started.sort()
                assert started[0] < killed_at and started[-1] > back_at, f"{host}/{coll}: runs do not span the outage"
        engine = make_engine(db_url)
        with engine.connect() as c:
            # one temperature sample per smart run, per disk: no sample lost with its run
            sid = c.execute(select(series.c.id).where(series.c.host == "nas1", series.c.metric ==
                                                      "rackpulse_disk_temperature_celsius")).scalars().first()
            temps = c.execute(select(sample.c.ts).where(sample.c.series_id == sid)).scalars().all()
            rows = {r.host: r for r in c.execute(select(agent))}
        engine.dispose()
        assert len(temps) == len({int(t) for t in runs["nas1"]["smart"]})
        assert rows["nas1"].last_seq > 0 and rows["nas1"].version
        # exact: each outbox record is one run, numbered from 1 and delivered in order, so the
        # server holds exactly last_seq runs of each agent: none lost, none twice
        for host in ("nas1", "ceph1"):
            n, last = runs_and_last_seq(db_url, host)
            assert n == last, host
        page = wait_for(lambda: get_json(base + "/h/ceph1/api/state"), what="ceph1 state")
        assert page["host"] == "ceph1" and page["arrays"] and page["disks"]
    finally:
        for proc in agents.values():
            stop(proc)
        stop(server)


def test_a_revoked_agent_is_refused_and_keeps_its_runs_while_the_other_goes_on(tmp_path: Path, sqlite_url: str) -> None:
    port, p1, p2 = free_port(), free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    scfg = server_config(tmp_path / "server.toml", sqlite_url, port)
    log = tmp_path / "processes.log"
    server = rackpulse("serve", "--config", str(scfg), log=log)
    procs = {}
    try:
        wait_for(lambda: get_json(base + "/healthz"), what="server up")
        for host, p in (("good", p1), ("bad", p2)):
            (tmp_path / f"{host}.token").write_text(issue_token(scfg, host))
            cfg = agent_config(tmp_path / host, host, listen_port=p)
            procs[host] = rackpulse("agent", "--config", str(cfg), "--server", base, "--token-file",
                                    str(tmp_path / f"{host}.token"), log=log)
        wait_for(lambda: all(h["batches"] for h in get_json(base + "/api/hosts") if h["agent"]), what="both in")
        import subprocess
        import sys

        from tests.agent_hosts import ROOT

        subprocess.run([sys.executable, "-m", "app.cli", "agents", "revoke", "bad", "--config", str(scfg)],
                       cwd=ROOT, check=True, capture_output=True)
        wait_for(lambda: not get_json(f"http://127.0.0.1:{p2}/healthz")["delivering"], what="bad refused")
        bad = get_json(f"http://127.0.0.1:{p2}/healthz")
        before = {h["host"]: h["batches"] for h in get_json(base + "/api/hosts") if h["agent"]}
        wait_for(lambda: get_json(f"http://127.0.0.1:{p2}/healthz")["outbox"]["records"] > bad["outbox"]["records"],
                 what="bad keeps spooling")
        after = wait_for(lambda: (a := {h["host"]: h for h in get_json(base + "/api/hosts") if h["agent"]})
                         and a["good"]["batches"] > before["good"] + 2 and a, what="good goes on")
        assert after["bad"]["batches"] == before["bad"] and after["bad"]["status"] == "token revoked"
        assert "revoked" in log.read_text()
        # an agent that stops reporting is an alert on the server (silent_after = 5 s here)
        stop(procs["good"])
        fired = wait_for(lambda: [a for h in ("good", "bad") for a in get_json(f"{base}/h/{h}/api/alerts")["active"]
                                  if a["rule"] == "agent_silent" and a["state"] == "firing"], timeout=30,
                         what="agent_silent")
        assert [a["subject"] for a in fired] == ["good"]  # a revoked agent is not "silent"
        assert fired[0]["summary"].startswith("agent good has not reported for")
    finally:
        for proc in procs.values():
            stop(proc)
        stop(server)


def test_while_the_servers_postgresql_refuses_connections_batches_wait_and_then_arrive(tmp_path: Path,
                                                                                     pg_url: str) -> None:
    from sqlalchemy import create_engine, text

    from tests.conftest import PG_ADMIN_URL

    name = pg_url.rsplit("/", 1)[1]
    port, ap = free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    scfg = server_config(tmp_path / "server.toml", pg_url, port)
    (tmp_path / "t").write_text(issue_token(scfg, "nas1"))
    log = tmp_path / "processes.log"
    server = rackpulse("serve", "--config", str(scfg), log=log)
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    agent_proc = None
    try:
        wait_for(lambda: get_json(base + "/healthz"), what="server up")
        cfg = agent_config(tmp_path / "nas1", "nas1", listen_port=ap)
        agent_proc = rackpulse("agent", "--config", str(cfg), "--server", base, "--token-file", str(tmp_path / "t"),
                               log=log)
        wait_for(lambda: get_json(base + "/api/hosts")[1]["batches"] >= 2, what="first batches")
        with admin.connect() as c:  # the database goes away under the running server
            c.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false'))
            c.execute(text(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"))
        health = f"http://127.0.0.1:{ap}/healthz"
        wait_for(lambda: (h := get_json(health))["outbox"]["records"] >= 10 and not h["delivering"],
                 what="agent spooling while the database is away")
        assert get_json(base + "/healthz")["status"] == "ok"  # the server itself stays up
        # said once per failure, with no secret in it. Waited for: on a loaded machine the agent's
        # send can time out before the server has failed to reach the database; its next try comes
        # within one longest backoff
        wait_for(lambda: "ingest: storage failed" in log.read_text(), timeout=MAX_BACKOFF * (1 + JITTER) + 30,
                 what="the server saying its storage failed")
        assert "rpa_" not in log.read_text()
        backlog = get_json(health)["outbox"]["newest_seq"]
        with admin.connect() as c:
            c.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true'))

        def drained() -> bool:  # the backlog delivered: what waits now was collected after it
            h = get_json(health)
            waiting = h["outbox"]["oldest_seq"]
            return bool(h["delivering"]) and (waiting == 0 or waiting > backlog)
        wait_while_moving(drained, lambda: get_json(health)["outbox"]["oldest_seq"],
                          MAX_BACKOFF * (1 + JITTER) + SEND_TIMEOUT * 2, what="drained after the database came back")
        stop(agent_proc)
        n, last = runs_and_last_seq(pg_url, "nas1")
        assert n == last and last >= 15  # every record the agent made and sent, once
    finally:
        with admin.connect() as c:
            c.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true'))
        admin.dispose()
        if agent_proc is not None:
            stop(agent_proc)
        stop(server)
