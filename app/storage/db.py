"""Engine creation and migrations. SQLite gets WAL and sane pragmas on every connection."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url

from app.files import private_file
from app.shipped import shipped


def make_engine(url: str) -> Engine:
    u = make_url(url)
    if u.get_backend_name() == "sqlite":
        if u.database and u.database != ":memory:":
            private_file(Path(u.database).expanduser())
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn, _record):
            cur = dbapi_conn.cursor()
            # WAL: the web pages read while the collectors write.
            cur.execute("PRAGMA journal_mode=WAL")
            # NORMAL is durable across application crashes; only a power cut may lose the last commit.
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        return engine
    if u.get_backend_name() == "postgresql" and u.drivername == "postgresql":
        # Plain postgresql:// means psycopg 3 here (the only driver we declare).
        url = str(u.set(drivername="postgresql+psycopg").render_as_string(hide_password=False))
    return create_engine(url, pool_pre_ping=True)


class SchemaNewer(RuntimeError):
    """The database was written by a later rackpulse: nothing here may migrate or read it (the
    command line says it in one line)."""


def alembic_config(url: str):
    from alembic.config import Config as AlembicConfig

    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(shipped("migrations")))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def newer_schema(url: str) -> str | None:
    """Why this database cannot be used by this code, when its schema is newer (written by a later
    rackpulse: a downgrade, or a server of another version on the same database); else None."""
    from alembic.script import ScriptDirectory
    from sqlalchemy import inspect

    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            if "alembic_version" not in inspect(conn).get_table_names():
                return None
            found = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    finally:
        engine.dispose()
    script = ScriptDirectory.from_config(alembic_config(url))
    if found is None or found in {r.revision for r in script.walk_revisions()}:
        return None
    return (f"the database's schema is {found}, newer than this rackpulse's ({script.get_current_head()}): "
            "it was written by a later version; run that version, or restore a backup made by this one")


MIGRATE_LOCK = 0x7270_6D69_6772  # "rpmigr": a PostgreSQL advisory lock every rackpulse migration takes


def upgrade(url: str, revision: str = "head") -> None:
    """Migrate the database to `revision`. On PostgreSQL under an advisory lock: two servers started
    together on a new database both migrated it, and the second failed on "alembic_version already
    exists"; now the second waits, then finds nothing left to do."""
    from alembic import command

    newer = newer_schema(url)
    if newer is not None:
        raise SchemaNewer(newer)
    cfg = alembic_config(url)
    if make_url(url).get_backend_name() != "postgresql":
        command.upgrade(cfg, revision)
        return
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": MIGRATE_LOCK})
            conn.commit()
            try:
                cfg.attributes["connection"] = conn  # migrations/env.py runs on it
                command.upgrade(cfg, revision)
                conn.commit()
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": MIGRATE_LOCK})
                conn.commit()
    finally:
        engine.dispose()
