"""`rackpulse backup` and `rackpulse restore`: a round trip of a database with history, people and
alert state, on SQLite (its online backup, taken while the database is being written) and on the
real PostgreSQL (pg_dump and pg_restore); a restore never writes over a database that has data."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from sqlalchemy import MetaData, func, select

from app.demo.agent import to_toml
from app.people.users import Users
from app.storage.db import make_engine, upgrade
from app.storage.store import Store
from collectors.base import Sample
from tests.cli import run_cli

T0 = 1_800_000_000


def populated(url: str) -> None:
    upgrade(url)
    engine = make_engine(url)
    store = Store(engine, "nas")
    with engine.begin() as conn:
        for ts in range(T0 - 3 * 86400, T0, 600):
            store.write_samples(conn, ts, [Sample.of("rackpulse_disk_temperature_celsius", 30 + ts % 7, serial=f"Z{i}")
                                           for i in range(4)])
    store.make_rollups(now=T0)
    Users(engine).add("alice", "admin", "alice-password")
    from app.alerting.service import Alerting
    from app.scheduler import Snapshot

    snap = Snapshot(host="nas")
    snap.samples["x"] = [Sample.of("rackpulse_test_bad", 1, thing="a")]
    from app.alerting.conditions import MetricRule
    from app.alerting.engine import Rule

    bad = MetricRule(Rule("bad", "critical"), "rackpulse_test_bad", ">", 0)
    Alerting(engine, "nas", user_rules=[bad]).tick(snap, T0, deliver=False)
    engine.dispose()


def counts(url: str) -> dict[str, int]:
    engine = make_engine(url)
    meta = MetaData()
    with engine.connect() as conn:
        meta.reflect(conn)
        out = {name: int(conn.execute(select(func.count()).select_from(t)).scalar_one())
               for name, t in meta.tables.items()}
    engine.dispose()
    return out


def config(tmp_path: Path, name: str, url: str) -> str:
    path = tmp_path / f"{name}.toml"
    path.write_text(to_toml({"host": "nas", "storage": {"url": url}}))
    return str(path)


def test_a_sqlite_backup_taken_while_it_is_written_restores_every_row(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'live.db'}"
    populated(url)
    before = counts(url)
    assert before["sample_block"] > 10 and before["web_user"] == 1 and before["alert"] == 1 and before["rollup_5m"] > 0
    engine = make_engine(url)
    store, stop = Store(engine, "nas"), threading.Event()

    def writer() -> None:  # the server keeps writing while the backup runs
        ts = T0
        while not stop.is_set():
            with engine.begin() as conn:
                store.write_samples(conn, ts, [Sample.of("rackpulse_other", 1.0)])
            ts += 1

    t = threading.Thread(target=writer)
    t.start()
    try:
        r = run_cli("backup", str(tmp_path / "nas.backup"), "--config", config(tmp_path, "live", url))
    finally:
        stop.set()
        t.join(30)
        engine.dispose()
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "nas.backup").stat().st_mode & 0o077 == 0  # hashes are in it: the owner's only
    fresh = f"sqlite:///{tmp_path / 'restored.db'}"
    r = run_cli("restore", str(tmp_path / "nas.backup"), "--config", config(tmp_path, "fresh", fresh))
    assert r.returncode == 0, r.stderr
    after = counts(fresh)
    assert {k: v for k, v in after.items() if k != "sample" and k != "series"} == \
        {k: v for k, v in before.items() if k != "sample" and k != "series"}
    assert after["sample"] >= before["sample"]  # and what was written meanwhile, up to the backup's moment
    assert Users(make_engine(fresh)).verify("alice", "alice-password") is not None
    again = run_cli("restore", str(tmp_path / "nas.backup"), "--config", config(tmp_path, "fresh", fresh))
    assert again.returncode == 1 and "holds a database already" in again.stderr  # nothing overwritten
    assert run_cli("backup", str(tmp_path / "nas.backup"), "--config", config(tmp_path, "live", url)).returncode == 1


@pytest.mark.peers  # the real PostgreSQL server and its client tools
def test_a_postgresql_backup_restores_into_an_empty_database_with_its_chunks_and_views(pg_url: str,
                                                                                   tmp_path: Path) -> None:
    from sqlalchemy import text

    from tests.conftest import pg_database

    populated(pg_url)
    before = counts(pg_url)

    def points(url: str) -> int:  # rows and blocks alike (the compaction moves older samples into blocks)
        from app.storage import gorilla

        engine = make_engine(url)
        with engine.connect() as c:
            n = int(c.execute(text("SELECT count(*) FROM sample")).scalar_one())
            n += sum(gorilla.count(bytes(d)) for (d,) in c.execute(text("SELECT data FROM sample_block")))
            n += int(c.execute(text("SELECT count(*) FROM rollup_5m_all")).scalar_one())
        engine.dispose()
        return n

    assert points(pg_url) > 1000
    r = run_cli("backup", str(tmp_path / "pg.backup"), "--config", config(tmp_path, "pg", pg_url))
    assert r.returncode == 0, r.stderr
    with pg_database() as target:
        r = run_cli("restore", str(tmp_path / "pg.backup"), "--config", config(tmp_path, "target", target))
        assert r.returncode == 0, r.stderr
        assert counts(target) == before
        assert points(target) == points(pg_url)  # the blocks, the chunk tables and their views came along
        again = run_cli("restore", str(tmp_path / "pg.backup"), "--config", config(tmp_path, "target", target))
        assert again.returncode == 1 and "holds tables already" in again.stderr
