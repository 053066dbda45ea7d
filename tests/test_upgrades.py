"""Upgrades that lose nothing: a database at every earlier migration head, with a row in every
table that revision has, upgrades to the current schema with every row and every value of the
columns that remain, on SQLite and on the real PostgreSQL; and a database written by a later
rackpulse is refused with one clear line, by `db upgrade` and by `serve`, before anything runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import Boolean, Float, Integer, MetaData, Numeric, String, Text, select, text
from sqlalchemy.types import ARRAY

from app.demo.agent import to_toml
from app.storage.db import alembic_config, make_engine, upgrade
from tests.cli import run_cli
from tests.schema import stamp

SCRIPT = ScriptDirectory.from_config(alembic_config("sqlite://"))
HEAD = SCRIPT.get_current_head()
EARLIER = sorted(r.revision for r in SCRIPT.walk_revisions() if r.revision != HEAD)


def a_row(table: Any, n: int) -> dict[str, Any] | None:
    """A row of plausible values for every column (None: a table this test cannot fill generically)."""
    row: dict[str, Any] = {}
    for col in table.columns:
        t = col.type
        if isinstance(t, ARRAY):
            return None
        if col.primary_key and isinstance(t, Integer) and len(table.primary_key.columns) == 1:
            continue  # its id is the database's to give
        if isinstance(t, Boolean):
            row[col.name] = True
        elif isinstance(t, Integer):
            row[col.name] = 7 + n
        elif isinstance(t, (Float, Numeric)):
            row[col.name] = 1.5 + n
        elif isinstance(t, (String, Text)):
            limit = getattr(t, "length", None) or 40
            row[col.name] = f"{col.name}-{n}"[:limit]
        elif col.nullable:
            continue
        else:
            return None
    return row


@pytest.mark.parametrize("revision", EARLIER)
def test_a_database_at_an_earlier_revision_upgrades_with_every_row_it_had(db_url: str, revision: str) -> None:
    assert len(EARLIER) >= 11  # 0001 ... 0011 at least
    upgrade(db_url, revision)
    engine = make_engine(db_url)
    then = MetaData()
    with engine.begin() as conn:
        then.reflect(conn)
        written: dict[str, dict[str, Any]] = {}
        for name, table in then.tables.items():
            if name == "alembic_version":
                continue
            row = a_row(table, len(written))
            if row is None:
                continue
            conn.execute(table.insert().values(**row))
            written[name] = row
    assert {"series", "sample", "rollup_5m"} <= set(written)
    upgrade(db_url)
    now = MetaData()
    with engine.connect() as conn:
        now.reflect(conn)
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one() == HEAD
        for name, row in written.items():
            assert name in now.tables, f"{name} is gone after the upgrade from {revision}"
            table = now.tables[name]
            kept = {k: v for k, v in row.items() if k in table.columns}
            rows = [dict(r._mapping) for r in conn.execute(select(table))]
            assert any(all(r[k] == v for k, v in kept.items()) for r in rows), \
                f"{name}: the row written at {revision} did not arrive: {kept} not in {rows[:3]}"
    engine.dispose()


def test_a_database_written_by_a_later_rackpulse_is_refused_in_one_line(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    upgrade(url)
    stamp(url, "0099")
    config = tmp_path / "rackpulse.toml"
    config.write_text(to_toml({"host": "nas", "storage": {"url": url}}))
    for args in (("db", "upgrade"), ("serve",)):
        r = run_cli(*args, "--config", str(config))
        assert r.returncode == 2, (args, r.stderr)
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and "schema is 0099, newer than this rackpulse's" in lines[0], (args, r.stderr)
        assert "Traceback" not in r.stderr
