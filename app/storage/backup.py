"""`rackpulse backup FILE` and `rackpulse restore FILE`: the whole database (history, inventory,
alerts and their episodes, people, tokens, heartbeats, monitors) in one file, and back.

SQLite: SQLite's own online backup, page by page, consistent while the server writes (WAL), into
a SQLite file. PostgreSQL: `pg_dump` in its custom format (the chunk tables and views included),
restored by `pg_restore`; both come with the PostgreSQL client (Debian: postgresql-client), and
without them the command says so. A restore goes into an empty database only (nothing is
overwritten), then migrates it: a backup made by an older rackpulse comes back at this schema.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import inspect
from sqlalchemy.engine import make_url

from app.files import private_file
from app.storage.db import make_engine, upgrade


class BackupError(Exception):
    """A backup or restore that cannot be done, said so a person can act on it."""


def _sqlite_path(url: str) -> Path | None:
    u = make_url(url)
    if u.get_backend_name() != "sqlite":
        return None
    if not u.database or u.database == ":memory:":
        raise BackupError("storage.url is an in-memory SQLite database: nothing to back up")
    return Path(u.database).expanduser()


def _libpq(url: str) -> tuple[str, dict[str, str]]:
    """The SQLAlchemy URL as pg_dump and pg_restore take it (postgresql://, no driver), and their
    environment: a password goes in PGPASSWORD, never on a command line that `ps` shows."""
    u = make_url(url)
    env = dict(os.environ)
    if u.password:
        env["PGPASSWORD"] = str(u.password)
    return u.set(drivername="postgresql", password=None).render_as_string(hide_password=False), env


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise BackupError(f"{name} is not installed: it comes with the PostgreSQL client "
                          "(Debian: apt install postgresql-client)")
    return found


def backup(url: str, target: Path) -> None:
    """The whole database into `target` (a new file; an existing one is refused)."""
    if target.exists():
        raise BackupError(f"{target} exists already: give a new file name")
    db = _sqlite_path(url)
    if db is not None:
        if not db.exists():
            raise BackupError(f"{db}: no such database file")
        private_file(target)  # the users' hashes and token hashes are in it: for the owner only
        src, dst = sqlite3.connect(db), sqlite3.connect(target)
        try:
            with dst:
                src.backup(dst)
        finally:
            src.close()
            dst.close()
        return
    target.touch(mode=0o600)
    where, env = _libpq(url)
    run = subprocess.run([_tool("pg_dump"), "--format=custom", "--no-owner", f"--file={target}", where],  # noqa: S603 - the client's own tool, an argv list
                         capture_output=True, text=True, env=env)
    if run.returncode != 0:
        target.unlink(missing_ok=True)
        raise BackupError(f"pg_dump failed: {run.stderr.strip()[-400:]}")


def _has_tables(url: str) -> bool:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return bool(inspect(conn).get_table_names())
    finally:
        engine.dispose()


def restore(url: str, source: Path) -> None:
    """`source` (made by backup) into the empty database at `url`, then migrated to this schema."""
    if not source.is_file():
        raise BackupError(f"{source}: no such backup file")
    db = _sqlite_path(url)
    if db is not None:
        if db.exists() and db.stat().st_size > 0 and _has_tables(url):
            raise BackupError(f"{db} holds a database already: a restore goes into an empty one "
                              "(move it away first)")
        private_file(db)
        src, dst = sqlite3.connect(source), sqlite3.connect(db)
        try:
            if src.execute("SELECT count(*) FROM sqlite_master WHERE name = 'alembic_version'").fetchone()[0] != 1:
                raise BackupError(f"{source} is not a rackpulse backup (no schema version in it)")
            with dst:
                src.backup(dst)
        except sqlite3.DatabaseError as exc:
            raise BackupError(f"{source} is not a SQLite backup: {exc}") from None
        finally:
            src.close()
            dst.close()
    else:
        if _has_tables(url):
            raise BackupError("the PostgreSQL database holds tables already: a restore goes into an empty one "
                              "(createdb a new one, or drop this one's tables first)")
        where, env = _libpq(url)
        run = subprocess.run([_tool("pg_restore"), "--no-owner", "--exit-on-error", f"--dbname={where}",  # noqa: S603
                              str(source)], capture_output=True, text=True, env=env)
        if run.returncode != 0:
            raise BackupError(f"pg_restore failed: {run.stderr.strip()[-400:]}")
    upgrade(url)


def cmd_backup(args: argparse.Namespace, url: str) -> int:
    return _said("backup", lambda: backup(url, Path(args.file)),
                 lambda: f"backup written to {args.file} ({os.path.getsize(args.file)} bytes)")


def cmd_restore(args: argparse.Namespace, url: str) -> int:
    return _said("restore", lambda: restore(url, Path(args.file)),
                 lambda: f"restored {args.file} into the configured database (migrated to this version's schema)")


def _said(what: str, do: Callable[[], None], done: Callable[[], str]) -> int:
    try:
        do()
    except BackupError as exc:
        print(f"rackpulse {what}: {exc}", file=sys.stderr)
        return 1
    print(done())
    return 0
