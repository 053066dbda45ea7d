"""The database's small key-value rows (table ``meta``): one pair of helpers for everyone who keeps
a mark there (storage.max_size's notes, which server leads the alerts)."""

from __future__ import annotations

from sqlalchemy import Engine, select, update

from app.storage.models import meta


def get_meta(engine: Engine, key: str) -> str | None:
    with engine.connect() as c:
        return c.execute(select(meta.c.value).where(meta.c.key == key)).scalar()


def set_meta(engine: Engine, key: str, value: str) -> None:
    with engine.begin() as c:
        if c.execute(update(meta).where(meta.c.key == key).values(value=value)).rowcount == 0:
            c.execute(meta.insert().values(key=key, value=value))
