"""`rackpulse db copy` (SQLite -> the real PostgreSQL) and `rackpulse agents issue|list|revoke`."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import func, select

from app.ingest import agents
from app.storage.db import make_engine, upgrade
from app.storage.models import agent, alert_event, entity, rollup_5m, sample, series
from app.storage.store import Store
from collectors.base import CollectResult, Entity, Sample
from tests.cli import run_cli

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, stdin=stdin)


def seed(url: str) -> None:
    upgrade(url)
    engine = make_engine(url)
    now = time.time()
    for host in ("nas1", "ceph1"):
        store = Store(engine, host)
        for i in range(50):
            store.write_run("smart", now - 3600 + 30 * i, 0.1, True, None, CollectResult(
                samples=[Sample.of("rackpulse_disk_temperature_celsius", 30 + i % 5, serial="ZA1049HK")],
                entities=[Entity("disk", "ZA1049HK", {"bay": "shelf 1, bay 7", "i": i // 25})]))
        store.make_rollups(now=now)
    agents.issue(engine, "ceph1")
    with engine.begin() as c:
        c.execute(alert_event.insert().values(host="nas1", rule="disk_failing", subject="ZA1049HK", ts=now,
                                              kind="firing", severity="critical", summary="s", labels="{}"))
    engine.dispose()


def count_all(url: str) -> dict[str, int]:
    engine = make_engine(url)
    with engine.connect() as c:
        out = {t.name: c.execute(select(func.count()).select_from(t)).scalar()
               for t in (series, sample, rollup_5m, entity, agent, alert_event)}
    engine.dispose()
    return out


def test_db_copy_moves_every_row_from_sqlite_to_postgresql_and_the_copy_keeps_working(tmp_path: Path,
                                                                                       pg_url: str) -> None:
    src = f"sqlite:///{tmp_path / 'old.db'}"
    seed(src)
    before = count_all(src)
    r = cli("db", "copy", "--from", src, "--to", pg_url)
    assert r.returncode == 0, r.stderr
    assert "  sample: 100 rows" in r.stdout and r.stdout.splitlines()[-1].startswith("copied ")
    assert count_all(pg_url) == before
    assert before["sample"] == 100 and before["agent"] == 1
    # the copy is a working database: history reads, new series and runs get fresh ids
    engine = make_engine(pg_url)
    store = Store(engine, "nas1")
    sid = store.find_series("rackpulse_disk_temperature_celsius", serial="ZA1049HK")
    assert sid is not None and len(store.history(sid, int(time.time()) - 7200, int(time.time()) + 1)) == 50
    store.write_run("smart", time.time(), 0.1, True, None, CollectResult(
        samples=[Sample.of("rackpulse_disk_new", 1, serial="X")], entities=[Entity("disk", "X", {})]))
    assert agents.issue(engine, "newhost").startswith("rpa_")
    engine.dispose()
    # a second copy into the same database is refused: it would mix two histories
    again = cli("db", "copy", "--from", src, "--to", pg_url)
    assert again.returncode == 2 and "already holds series" in again.stderr


def test_agents_issue_list_and_revoke_from_the_command_line(tmp_path: Path) -> None:
    cfg = tmp_path / "server.toml"
    cfg.write_text(f'[storage]\nurl = "sqlite:///{tmp_path / "s.db"}"\n')
    issued = cli("agents", "issue", "ceph1", "--config", str(cfg))
    assert issued.returncode == 0
    token = issued.stdout.strip().splitlines()[-1]
    assert token.startswith("rpa_") and token not in (tmp_path / "s.db").read_bytes().decode(errors="replace")
    listed = cli("agents", "list", "--config", str(cfg))
    assert listed.stdout.startswith("ceph1\t-\tnever reported")
    assert cli("agents", "revoke", "ceph1", "--config", str(cfg)).returncode == 0
    assert "revoked" in cli("agents", "list", "--config", str(cfg)).stdout
    gone = cli("agents", "revoke", "ceph1", "--config", str(cfg))
    assert gone.returncode == 1 and "no live token for host 'ceph1'" in gone.stderr
    assert cli("agents", "issue", "--config", str(cfg)).returncode == 2


def test_stopping_the_demo_with_a_plain_kill_stops_its_agent_too(tmp_path: Path) -> None:
    import signal

    from tests.agent_hosts import DEMO_READY, free_port, get_json, wait_for

    port = free_port()
    demo = subprocess.Popen([sys.executable, "-m", "app.cli", "demo", "--port", str(port), "--dir", str(tmp_path)],
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        hosts = wait_for(lambda: [h for h in get_json(f"http://127.0.0.1:{port}/api/hosts") if h["agent"]
                                  and h["batches"]], timeout=DEMO_READY, what="the demo's agent reporting")
        assert hosts[0]["host"] == "ceph-node1"
        agent_pids = [int(p) for p in subprocess.run(["pgrep", "-f", f"{tmp_path}/ceph-node1/agent.toml"],
                                                     capture_output=True, text=True).stdout.split()]
        assert agent_pids
        demo.send_signal(signal.SIGTERM)  # the demo only, not its process group
        demo.wait(30)

        def agent_gone() -> bool:
            left = subprocess.run(["pgrep", "-f", f"{tmp_path}/ceph-node1/agent.toml"], capture_output=True, text=True)
            return left.stdout.strip() == ""

        deadline = time.monotonic() + 15  # the agent gets TERM from the demo's exit handler, then exits
        while not agent_gone() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert agent_gone(), "the demo's agent outlived it"
    finally:
        if demo.poll() is None:
            demo.kill()


def test_db_copy_knows_every_table_of_the_schema() -> None:
    # A table left out of the copy's list is silently lost in a move to PostgreSQL (monitors and
    # heartbeats once were).
    from app.storage import models
    from app.storage.dbcopy import ORDER

    assert set(ORDER) == set(models.metadata.tables)


def test_agents_issue_refuses_a_host_beyond_max_hosts_until_one_is_revoked(tmp_path: Path) -> None:
    cfg = tmp_path / "server.toml"
    cfg.write_text(f'[storage]\nurl = "sqlite:///{tmp_path / "s.db"}"\n[agents]\nmax_hosts = 2\n')
    assert cli("agents", "issue", "a", "--config", str(cfg)).returncode == 0
    assert cli("agents", "issue", "b", "--config", str(cfg)).returncode == 0
    third = cli("agents", "issue", "c", "--config", str(cfg))
    assert third.returncode == 2 and "agents.max_hosts = 2" in third.stderr
    assert cli("agents", "issue", "b", "--config", str(cfg)).returncode == 0  # a known host is re-issued
    assert cli("agents", "revoke", "a", "--config", str(cfg)).returncode == 0
    assert cli("agents", "issue", "c", "--config", str(cfg)).returncode == 0


def test_users_and_tokens_are_managed_from_the_command_line_and_audited(tmp_path: Path) -> None:
    from app.people.audit import entries
    from app.people.users import Users

    cfg = tmp_path / "server.toml"
    url = f"sqlite:///{tmp_path / 's.db'}"
    cfg.write_text(f'[storage]\nurl = "{url}"\n')
    assert cli("users", "add", "alice", "--role", "admin", "--config", str(cfg), stdin="a-long-password\n").returncode == 0
    assert cli("users", "add", "bob", "--config", str(cfg), stdin="short\n").returncode == 2  # too short: nobody added
    assert cli("users", "add", "bob", "--config", str(cfg), stdin="bob-password\n").returncode == 0
    assert cli("users", "list", "--config", str(cfg)).stdout.splitlines()[1].startswith("bob\tviewer\tpassword only")
    assert cli("users", "role", "bob", "--role", "admin", "--config", str(cfg)).returncode == 0
    assert cli("users", "passwd", "bob", "--config", str(cfg), stdin="a-new-password\n").returncode == 0
    engine = make_engine(url)
    assert Users(engine).verify("bob", "a-new-password") is not None
    last = cli("users", "role", "alice", "--role", "viewer", "--config", str(cfg))
    assert last.returncode == 0  # bob is an admin too now
    gone = cli("users", "role", "bob", "--role", "viewer", "--config", str(cfg))
    assert gone.returncode == 2 and "last admin" in gone.stderr
    made = cli("tokens", "create", "ansible", "--scope", "write", "--expires", "90d", "--config", str(cfg))
    token = made.stdout.strip().splitlines()[-1]
    assert token.startswith("rpt_") and token not in (tmp_path / "s.db").read_bytes().decode(errors="replace")
    assert "ansible\t(command line)\twrite\tactive" in cli("tokens", "list", "--config", str(cfg)).stdout
    assert cli("tokens", "revoke", "ansible", "--config", str(cfg)).returncode == 0
    assert "ansible\t(command line)\twrite\trevoked" in cli("tokens", "list", "--config", str(cfg)).stdout
    assert cli("tokens", "create", "x", "--expires", "soon", "--config", str(cfg)).returncode == 2
    actions = [e["action"] for e in entries(engine)]
    engine.dispose()
    assert {"users add", "users role", "users passwd", "tokens create", "tokens revoke"} <= set(actions)
