"""Engines and migrations (app/storage/db.py) on a real SQLite file and the real PostgreSQL server:
SQLite gets WAL, NORMAL sync and foreign keys on every connection and a private file; a plain
postgresql:// URL means psycopg 3; a database written by a later rackpulse is refused in one
sentence naming both schemas; an upgrade takes PostgreSQL's advisory lock and gives it back."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from sqlalchemy import text

from app.storage.db import MIGRATE_LOCK, SchemaNewer, alembic_config, make_engine, newer_schema, upgrade
from tests.schema import stamp


def test_sqlite_connections_get_wal_normal_sync_and_foreign_keys(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'r.db'}")
    with engine.connect() as c:
        assert c.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert c.execute(text("PRAGMA synchronous")).scalar() == 1  # NORMAL
        assert c.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert c.execute(text("PRAGMA busy_timeout")).scalar() == 30000
    engine.dispose()


def test_a_new_sqlite_file_is_made_private_and_a_memory_database_makes_no_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "r.db"
    path.parent.mkdir()
    make_engine(f"sqlite:///{path}").dispose()
    assert path.exists() and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    before = set(Path.cwd().iterdir())
    engine = make_engine("sqlite:///:memory:")
    with engine.connect() as c:
        assert c.execute(text("select 1")).scalar() == 1
    engine.dispose()
    make_engine("sqlite://").dispose()
    assert set(Path.cwd().iterdir()) == before


def test_a_plain_postgresql_url_means_psycopg_3_and_keeps_its_password() -> None:
    engine = make_engine("postgresql://u:s3cret@db.example:5433/rp")
    assert engine.url.drivername == "postgresql+psycopg"
    assert engine.url.password == "s3cret" and engine.url.port == 5433
    assert engine.pool._pre_ping  # type: ignore[attr-defined]  # a restarted server's dead connections
    engine.dispose()
    assert make_engine("postgresql+psycopg://u@h/rp").url.drivername == "postgresql+psycopg"


def test_alembic_is_pointed_at_the_migrations_and_a_percent_in_a_password_survives() -> None:
    cfg = alembic_config("postgresql://u:50%25off@h/rp")
    assert cfg.get_main_option("script_location").endswith("/migrations")
    assert Path(cfg.get_main_option("script_location"), "env.py").exists()
    assert cfg.get_main_option("sqlalchemy.url") == "postgresql://u:50%25off@h/rp"


def test_a_new_database_and_one_at_this_schema_are_not_newer(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    assert newer_schema(url) is None
    upgrade(url)
    assert newer_schema(url) is None


def test_a_database_written_by_a_later_rackpulse_is_refused_in_one_sentence(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    upgrade(url)
    stamp(url, "ffff_from_the_future")
    why = newer_schema(url)
    assert why is not None
    assert why.startswith("the database's schema is ffff_from_the_future, newer than this rackpulse's (")
    assert why.endswith("it was written by a later version; run that version, or restore a backup made by this one")
    with pytest.raises(SchemaNewer) as err:
        upgrade(url)
    assert str(err.value) == why


def test_an_empty_version_table_is_not_newer(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    upgrade(url)
    stamp(url, None)
    assert newer_schema(url) is None


@pytest.mark.peers  # the real PostgreSQL server
def test_a_postgresql_upgrade_takes_the_advisory_lock_and_gives_it_back(pg_url: str) -> None:
    upgrade(pg_url)
    engine = make_engine(pg_url)
    with engine.connect() as c:
        assert c.execute(text("SELECT count(*) FROM alembic_version")).scalar_one() == 1
        # free again: this connection takes it at once, and lets it go
        assert c.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": MIGRATE_LOCK}).scalar_one() is True
        c.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": MIGRATE_LOCK})
        # this database's only: pg_locks is the whole server's, and other tests migrate beside this one
        held = c.execute(text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = "
                              "(SELECT oid FROM pg_database WHERE datname = current_database())")).scalar_one()
    engine.dispose()
    assert held == 0


@pytest.mark.peers
def test_a_postgresql_upgrade_waits_while_another_holds_the_lock(pg_url: str) -> None:
    import threading

    engine = make_engine(pg_url)
    done = threading.Event()
    with engine.connect() as holder:
        holder.execute(text("SELECT pg_advisory_lock(:k)"), {"k": MIGRATE_LOCK})
        worker = threading.Thread(target=lambda: (upgrade(pg_url), done.set()), daemon=True)
        worker.start()
        worker.join(2.0)  # it waits for the lock however long: two seconds show it is waiting
        assert not done.is_set()
        holder.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": MIGRATE_LOCK})
        holder.commit()
    worker.join(60.0)  # one migration of a new database (seconds), on a loaded machine
    engine.dispose()
    assert done.is_set()
