"""`rackpulse backup FILE` and `rackpulse restore FILE`: the whole database (history, inventory,
alerts and their episodes, people, tokens, heartbeats, monitors) in one file, and back.

SQLite: SQLite's own online backup, page by page, consistent while the server writes (WAL), into
a SQLite file. PostgreSQL: `pg_dump` in its custom format (the chunk tables and views included),
restored by `pg_restore`; both come with the PostgreSQL client (Debian: postgresql-client), and
without them the command says so. A restore goes into an empty database only (nothing is
overwritten): this rackpulse's migrations make it at the backup's version, the backup's rows are
copied in (never its schema objects), then it is migrated: an older backup comes back at this schema.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

from sqlalchemy import inspect
from sqlalchemy.engine import make_url

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


def _new_private(target: Path) -> None:
    """Create `target` for the backup: a new file (O_EXCL), never through a link (O_NOFOLLOW: a
    dangling link was written through at 0644), readable by its owner only whatever the umask."""
    if os.path.lexists(target):
        raise BackupError(f"{target} exists already: give a new file name")
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise BackupError(f"{target}: {exc.strerror}") from None
    os.fchmod(fd, 0o600)  # the users' hashes, TOTP secrets and token hashes are in it
    os.close(fd)


def backup(url: str, target: Path) -> None:
    """The whole database into `target` (a new file; an existing one, or a link, is refused)."""
    db = _sqlite_path(url)
    if db is not None and not db.exists():
        raise BackupError(f"{db}: no such database file")
    _new_private(target)
    if db is not None:
        src, dst = sqlite3.connect(db), sqlite3.connect(target)
        try:
            with dst:
                src.backup(dst)
        finally:
            src.close()
            dst.close()
        return
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


def _known(version: str, source: Path) -> str:
    """The backup's schema version, when this rackpulse's migrations know it."""
    from alembic.script import ScriptDirectory

    from app.storage.db import alembic_config

    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    if version not in {r.revision for r in script.walk_revisions()}:
        raise BackupError(f"{source} has schema {version}, newer than this rackpulse's ({script.get_current_head()}): "
                          "restore it with the version that made it")
    return version


def restore(url: str, source: Path) -> str:
    """`source` (made by backup) into the empty database at `url`: a database made afresh by this
    rackpulse's migrations at the backup's schema version, the backup's rows copied into it table
    by table, then migrated to this version's schema. Nothing of the file's own schema is taken
    (a trigger in a backup came back with it and made a new viewer an admin): what the migrations
    do not make is left out, and the words returned say what. A refused restore leaves nothing."""
    if not source.is_file():
        raise BackupError(f"{source}: no such backup file")
    db = _sqlite_path(url)
    if db is not None:
        if db.exists() and db.stat().st_size > 0 and _has_tables(url):
            raise BackupError(f"{db} holds a database already: a restore goes into an empty one "
                              "(move it away first)")
        return _restore_sqlite(db, source)
    if _has_tables(url):
        raise BackupError("the PostgreSQL database holds tables already: a restore goes into an empty one "
                          "(createdb a new one, or drop this one's tables first)")
    return _restore_postgresql(url, source)


def _restore_sqlite(db: Path, source: Path) -> str:
    try:
        with closing(sqlite3.connect(f"file:{source}?mode=ro", uri=True)) as src:
            objects = src.execute("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").fetchall()
            if ("table", "alembic_version") not in objects:
                raise BackupError(f"{source} is not a rackpulse backup (no schema version in it)")
            version = _known(str(src.execute("SELECT version_num FROM alembic_version").fetchone()[0]), source)
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{source} is not a SQLite backup: {exc}") from None
    tmp = db.with_name(f".{db.name}.restoring-{os.getpid()}")
    try:
        _new_private(tmp)
        upgrade(f"sqlite:///{tmp}", version)
        with closing(sqlite3.connect(f"file:{tmp}", uri=True)) as dst:
            dst.execute("ATTACH DATABASE ? AS src", (f"file:{source}?mode=ro",))
            ours = set(dst.execute("SELECT type, name FROM main.sqlite_master WHERE name NOT LIKE 'sqlite_%'"))
            for (name,) in dst.execute("SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE "
                                       "'sqlite_%' AND name != 'alembic_version'").fetchall():
                if ("table", name) not in objects:
                    continue
                theirs = {r[1] for r in dst.execute(f'PRAGMA src.table_info("{name}")')}
                cols = ", ".join(f'"{c}"' for c in (r[1] for r in dst.execute(f'PRAGMA main.table_info("{name}")'))
                                 if c in theirs)
                dst.execute(f'INSERT INTO main."{name}" ({cols}) SELECT {cols} FROM src."{name}"')  # noqa: S608 - names from our own schema
            dst.commit()
            dst.execute("DETACH DATABASE src")
        upgrade(f"sqlite:///{tmp}")
        for leftover in (db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
            leftover.unlink(missing_ok=True)  # an empty database's own, which would not match the new file
        os.replace(tmp, db)
    except BaseException:
        for part in (tmp, tmp.with_name(tmp.name + "-wal"), tmp.with_name(tmp.name + "-shm")):
            part.unlink(missing_ok=True)
        raise
    return _left_out(sorted(set(objects) - ours))


def _left_out(extra: list[tuple[str, str]]) -> str:
    if not extra:
        return ""
    return "left out, not made by rackpulse's migrations: " + ", ".join(f"{kind} {name}" for kind, name in extra[:20])


def _restore_postgresql(url: str, source: Path) -> str:
    """pg_restore of the rows alone (its table of contents filtered to TABLE DATA) into a database
    this rackpulse migrated to the backup's version: the dump's functions, triggers and views are
    never run."""
    where, env = _libpq(url)
    toc = subprocess.run([_tool("pg_restore"), "--list", str(source)], capture_output=True, text=True, env=env)  # noqa: S603
    if toc.returncode != 0:
        raise BackupError(f"{source} is not a PostgreSQL backup: {toc.stderr.strip()[-300:]}")
    version_sql = subprocess.run([_tool("pg_restore"), "--data-only", "--table=alembic_version", "--file=-",  # noqa: S603
                                  str(source)], capture_output=True, text=True, env=env)
    lines = version_sql.stdout.splitlines()
    # the row follows its COPY line (pg_restore 17.6 and later add "restrict" lines and comments around it)
    found = [lines[i + 1].strip() for i, line in enumerate(lines[:-1])
             if line.startswith("COPY ") and "alembic_version" in line and lines[i + 1].strip() not in ("", "\\.")]
    if not found:
        raise BackupError(f"{source} is not a rackpulse backup (no schema version in it)")
    version = _known(found[0], source)
    entries = [line for line in toc.stdout.splitlines() if line and not line.startswith(";")]
    # the rows, and where each id sequence stands (without it the next insert reused id 1)
    data = [line for line in entries if (" TABLE DATA " in line or " SEQUENCE SET " in line)
            and " alembic_version " not in line]
    extra = sorted({(kind.lower(), name) for line in entries
                    for kind, name in [_toc_kind(line)] if kind in ("TRIGGER", "FUNCTION", "RULE", "POLICY")})
    upgrade(url, version)
    listing = Path(tempfile.mkstemp(prefix="rackpulse-restore-", suffix=".list")[1])
    try:
        listing.write_text("\n".join(data) + "\n")
        run = subprocess.run([_tool("pg_restore"), "--data-only", "--no-owner", "--exit-on-error", f"--use-list={listing}",  # noqa: S603
                              f"--dbname={where}", str(source)], capture_output=True, text=True, env=env)
    finally:
        listing.unlink(missing_ok=True)
    if run.returncode != 0:
        _drop_all(url)
        raise BackupError(f"pg_restore failed: {run.stderr.strip()[-400:]}")
    upgrade(url)
    return _left_out(extra)


def _toc_kind(line: str) -> tuple[str, str]:
    """(kind, name) of a `pg_restore --list` entry: "217; 1255 16390 FUNCTION public f() owner"."""
    words = line.split(";", 1)[-1].split()
    for i, w in enumerate(words):
        if w in ("TRIGGER", "FUNCTION", "RULE", "POLICY", "VIEW", "TABLE", "INDEX", "SEQUENCE") and i + 2 < len(words):
            return w, words[i + 2] if w != "TRIGGER" else words[i + 3]
    return "", ""


def _drop_all(url: str) -> None:
    """A refused restore leaves nothing: the tables the migrations made are dropped again."""
    from sqlalchemy import MetaData

    engine = make_engine(url)
    try:
        meta = MetaData()
        meta.reflect(engine)
        meta.drop_all(engine)
    finally:
        engine.dispose()


def cmd_backup(args: argparse.Namespace, url: str) -> int:
    return _said("backup", lambda: backup(url, Path(args.file)),
                 lambda: f"backup written to {args.file} ({os.path.getsize(args.file)} bytes)")


def cmd_restore(args: argparse.Namespace, url: str) -> int:
    said: list[str] = []
    return _said("restore", lambda: said.append(restore(url, Path(args.file))),
                 lambda: f"restored {args.file} into the configured database (migrated to this version's schema)"
                         + (f"; {said[0]}" if said and said[0] else ""))


def _said(what: str, do: Callable[[], None], done: Callable[[], str]) -> int:
    try:
        do()
    except BackupError as exc:
        print(f"rackpulse {what}: {exc}", file=sys.stderr)
        return 1
    print(done())
    return 0
