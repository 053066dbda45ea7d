"""Heartbeat tokens and pings in the database (table `heartbeat`): a job's secret URL token is
kept as its hash only; its last success, failure (with the log it sent) and start survive a
restart and fill the PingBook the heartbeats collector reads."""

from __future__ import annotations

import time

from sqlalchemy import delete, select, update
from sqlalchemy.engine import Engine

from app.credentials import make_token, token_hash
from app.storage.models import heartbeat
from collectors.context import Ping, PingBook

COLUMN = {"success": "last_success", "fail": "last_fail", "start": "last_start"}


def issue(engine: Engine, host: str, name: str, now: float | None = None) -> str:
    """A new token for this heartbeat (the old one stops working); the token, to be shown once."""
    token, hashed = make_token()
    now = now or time.time()
    with engine.begin() as c:
        done = c.execute(update(heartbeat).where(heartbeat.c.host == host, heartbeat.c.name == name)
                         .values(token_hash=hashed))
        if not done.rowcount:
            c.execute(heartbeat.insert().values(host=host, name=name, token_hash=hashed, created=now))
    return token


def find(engine: Engine, token: str) -> tuple[str, str] | None:
    """The (host, name) a token belongs to. It is looked up by its hash, so a wrong token costs the
    same as a right one: one hash and one indexed query."""
    with engine.connect() as c:
        row = c.execute(select(heartbeat.c.host, heartbeat.c.name)
                        .where(heartbeat.c.token_hash == token_hash(token))).first()
    return (row.host, row.name) if row else None


def record(engine: Engine, host: str, name: str, ping: Ping) -> None:
    values: dict[str, object] = {COLUMN[ping.kind]: ping.at}
    if ping.kind == "fail":
        values["last_body"] = ping.body
    with engine.begin() as c:
        c.execute(update(heartbeat).where(heartbeat.c.host == host, heartbeat.c.name == name).values(**values))


def load(engine: Engine, host: str, book: PingBook) -> None:
    """Every stored last ping of this host's heartbeats into the book (at start-up)."""
    with engine.connect() as c:
        rows = c.execute(select(heartbeat).where(heartbeat.c.host == host)).all()
    for r in rows:
        for kind, column in COLUMN.items():
            at = getattr(r, column)
            if at is not None:
                book.record(r.name, Ping(kind, at, (r.last_body or "") if kind == "fail" else ""))


def named(engine: Engine, host: str) -> set[str]:
    """The heartbeats of this host that have a token."""
    with engine.connect() as c:
        return {r.name for r in c.execute(select(heartbeat.c.name).where(heartbeat.c.host == host))}


def forget(engine: Engine, host: str, name: str) -> None:
    """A removed heartbeat: its token and pings go (its URL answers 404 from now on)."""
    with engine.begin() as c:
        c.execute(delete(heartbeat).where(heartbeat.c.host == host, heartbeat.c.name == name))
