"""A database's recorded schema version changed behind rackpulse's back, as a later version (or a
half-finished restore) would leave it: the upgrade, refusal and migration tests share this."""

from __future__ import annotations

from sqlalchemy import text

from app.storage.db import make_engine


def stamp(url: str, version: str | None) -> None:
    """Record `version` as the database's schema (None: an empty version table)."""
    engine = make_engine(url)
    try:
        with engine.begin() as c:
            if version is None:
                c.execute(text("DELETE FROM alembic_version"))
            else:
                c.execute(text("UPDATE alembic_version SET version_num = :v"), {"v": version})
    finally:
        engine.dispose()
