"""Alembic environment: runs from `rackpulse db upgrade` (and `serve` at start-up)."""

from __future__ import annotations

from alembic import context

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


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    # SQLite cannot ALTER most things; batch mode copies the table instead.
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("offline migrations are not supported; run `rackpulse db upgrade`")
run_migrations_online()
