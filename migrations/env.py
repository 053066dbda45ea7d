"""Alembic environment: runs from `rackpulse db upgrade` (and `serve` at start-up)."""

from __future__ import annotations

from alembic import context

from app.storage.chunks import PG_ONLY
from app.storage.db import make_engine
from app.storage.models import metadata

config = context.config


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(config.get_main_option("sqlalchemy.url"))
    with engine.connect() as conn:
        _run(conn)
    engine.dispose()


def include_name(name: str | None, type_: str, parent_names: object) -> bool:
    """PostgreSQL's chunk tables and views (migration 0011) are not in the models: they exist on
    one dialect only, and SQLAlchemy reads them through app/storage/chunks.py."""
    return not (type_ == "table" and name in PG_ONLY)


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    # SQLite cannot ALTER most things; batch mode copies the table instead.
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True,
                      include_name=include_name)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("offline migrations are not supported; run `rackpulse db upgrade`")
run_migrations_online()
