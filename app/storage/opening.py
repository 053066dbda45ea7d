"""The one place the database's URL is read from the config (`[storage] url`): the server, the
agent-token and user commands, backups and the checks before `serve` all come through here, so a
second way to name the database (a URL file, an environment variable) has one place to go.
tests/test_house_rules.py fails on `.storage.url` read anywhere else."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine


class _Storage(Protocol):
    @property
    def url(self) -> str: ...


class _Config(Protocol):
    @property
    def storage(self) -> _Storage: ...


def url_of(cfg: _Config) -> str:
    """The database's URL (SQLAlchemy's form: sqlite:///path or postgresql+psycopg://...)."""
    return cfg.storage.url


def migrated_engine(cfg: _Config) -> Engine:
    """The database brought to the latest schema (created when new), and an engine on it."""
    from app.storage.db import make_engine, upgrade

    url = url_of(cfg)
    upgrade(url)
    return make_engine(url)
