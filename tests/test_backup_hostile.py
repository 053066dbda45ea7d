"""A backup file is data, never code: a restore copies rows table by table into a database this
rackpulse's migrations made, so a trigger, view or table someone put in the file is left out (a
restored trigger made a viewer added afterwards an admin). Backups are new files of mode 0600,
never written through a link; a refused restore leaves nothing behind."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import text

from app.people.users import Users
from app.storage.db import make_engine, upgrade
from tests.cli import run_cli
from tests.test_backup import config, counts, populated

TRIGGER = ("CREATE TRIGGER make_admin AFTER INSERT ON web_user BEGIN "
           "UPDATE web_user SET role = 'admin' WHERE id = NEW.id; END")


def _role_of_a_new_viewer(url: str) -> str:
    engine = make_engine(url)
    try:
        users = Users(engine)
        users.add("mallory", "viewer", "a long enough password")
        users.changed()
        u = users.get("mallory")
        assert u is not None
        return u.role
    finally:
        engine.dispose()


def test_a_sqlite_backup_with_a_trigger_a_view_and_a_table_of_its_own_restores_the_rows_alone(tmp_path: Path) -> None:
    src = f"sqlite:///{tmp_path / 'src.db'}"
    populated(src)
    before = counts(src)
    r = run_cli("backup", str(tmp_path / "b.db"), "--config", config(tmp_path, "src", src))
    assert r.returncode == 0, r.stderr
    with sqlite3.connect(tmp_path / "b.db") as c:
        c.execute(TRIGGER)
        c.execute("CREATE VIEW everything AS SELECT * FROM web_user")
        c.execute("CREATE TABLE planted (x)")
    target = f"sqlite:///{tmp_path / 'target.db'}"
    r = run_cli("restore", str(tmp_path / "b.db"), "--config", config(tmp_path, "target", target))
    assert r.returncode == 0, r.stderr
    assert "left out, not made by rackpulse's migrations: table planted, trigger make_admin, view everything" in r.stdout
    assert counts(target) == before  # every row of every table rackpulse has
    assert _role_of_a_new_viewer(target) == "viewer"
    with sqlite3.connect(tmp_path / "target.db") as c:
        assert c.execute("SELECT count(*) FROM sqlite_master WHERE type IN ('trigger', 'view')").fetchone()[0] == 0
    assert oct((tmp_path / "target.db").stat().st_mode & 0o777) == "0o600"


def test_a_backup_is_a_new_file_of_mode_0600_and_never_written_through_a_link(tmp_path: Path) -> None:
    src = f"sqlite:///{tmp_path / 'src.db'}"
    populated(src)
    cfg = config(tmp_path, "src", src)
    link, aim = tmp_path / "backup.db", tmp_path / "elsewhere" / "loot.db"
    aim.parent.mkdir()
    link.symlink_to(aim)  # dangling
    r = run_cli("backup", str(link), "--config", cfg)
    assert r.returncode == 1 and "exists already" in r.stderr
    assert not aim.exists()
    old = os.umask(0)
    try:
        r = run_cli("backup", str(tmp_path / "fresh.db"), "--config", cfg)
    finally:
        os.umask(old)
    assert r.returncode == 0, r.stderr
    assert oct((tmp_path / "fresh.db").stat().st_mode & 0o777) == "0o600"


def test_a_restore_into_an_empty_file_leaves_it_0600_and_a_refused_one_leaves_nothing(tmp_path: Path) -> None:
    src = f"sqlite:///{tmp_path / 'src.db'}"
    populated(src)
    assert run_cli("backup", str(tmp_path / "b.db"), "--config", config(tmp_path, "src", src)).returncode == 0
    newer = tmp_path / "newer.db"
    newer.write_bytes((tmp_path / "b.db").read_bytes())
    with sqlite3.connect(newer) as c:
        c.execute("UPDATE alembic_version SET version_num = '9999'")
    empty = tmp_path / "target.db"
    empty.touch(mode=0o644)
    os.chmod(empty, 0o644)
    target = config(tmp_path, "target", f"sqlite:///{empty}")
    r = run_cli("restore", str(newer), "--config", target)
    assert r.returncode == 1 and "has schema 9999, newer than this rackpulse's" in r.stderr
    assert empty.stat().st_size == 0 and sorted(p.name for p in tmp_path.iterdir() if "target" in p.name) == \
        ["target.db", "target.toml"]  # nothing filled, nothing beside it
    r = run_cli("restore", str(tmp_path / "b.db"), "--config", target)
    assert r.returncode == 0, r.stderr  # the refusal did not make the next restore impossible
    assert oct(empty.stat().st_mode & 0o777) == "0o600"
    assert counts(f"sqlite:///{empty}") == counts(src)


@pytest.mark.peers  # the real PostgreSQL server and its client tools
def test_a_postgresql_backup_with_a_trigger_restores_the_rows_and_not_the_trigger(pg_url: str, tmp_path: Path) -> None:
    from tests.conftest import pg_database

    populated(pg_url)
    engine = make_engine(pg_url)
    with engine.begin() as c:
        c.execute(text("CREATE FUNCTION make_admin() RETURNS trigger AS $$ BEGIN NEW.role := 'admin'; RETURN NEW; END "
                       "$$ LANGUAGE plpgsql"))
        c.execute(text("CREATE TRIGGER make_admin BEFORE INSERT ON web_user FOR EACH ROW EXECUTE FUNCTION make_admin()"))
    engine.dispose()
    before = counts(pg_url)
    assert run_cli("backup", str(tmp_path / "pg.backup"), "--config", config(tmp_path, "pg", pg_url)).returncode == 0
    with pg_database() as target:
        r = run_cli("restore", str(tmp_path / "pg.backup"), "--config", config(tmp_path, "target", target))
        assert r.returncode == 0, r.stderr
        assert "left out, not made by rackpulse's migrations:" in r.stdout and "make_admin" in r.stdout
        assert counts(target) == before
        assert _role_of_a_new_viewer(target) == "viewer"
    upgrade(pg_url)  # unchanged: the source is not touched by its own backup
