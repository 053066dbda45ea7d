"""Agents' tokens, on the server: issued per host (only the hash is kept), revoked, listed, and
checked on each batch (the CLI and the web use them)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TypedDict

from sqlalchemy import Engine, func, select, update

from app.batch import BatchError
from app.credentials import make_token, token_hash
from app.storage.models import agent


class AuthError(BatchError):
    pass


class TooManyHosts(Exception):
    pass


def issue(engine: Engine, host: str, now: float | None = None, max_hosts: int | None = None) -> str:
    """A new token for ``host``; an existing host's old token stops working. Only the hash is kept.
    A new host beyond ``max_hosts`` live ones raises TooManyHosts."""
    now = now or time.time()
    token = "rpa_" + make_token()[0]  # the prefix tells agent tokens from API tokens in a config
    hashed = token_hash(token)
    with engine.begin() as c:
        known = c.execute(select(agent.c.id).where(agent.c.host == host)).first()
        if max_hosts is not None and not known:
            live = c.execute(select(func.count()).select_from(agent).where(agent.c.revoked_at.is_(None))).scalar()
            if (live or 0) >= max_hosts:
                raise TooManyHosts(f"{live} agent hosts have a live token, agents.max_hosts = {max_hosts}: "
                                   "revoke one (`rackpulse agents revoke HOST`) or raise the limit")
        if known:
            c.execute(update(agent).where(agent.c.host == host).values(token_hash=hashed, revoked_at=None))
        else:
            c.execute(agent.insert().values(host=host, token_hash=hashed, created=now, last_seq=0, batches=0,
                                            samples=0))
    return token


def revoke(engine: Engine, host: str, now: float | None = None) -> bool:
    with engine.begin() as c:
        res = c.execute(update(agent).where(agent.c.host == host, agent.c.revoked_at.is_(None))
                        .values(revoked_at=now or time.time()))
    return bool(res.rowcount)


class AgentRow(TypedDict):
    """An agent as the server keeps it (its token's hash left out)."""

    id: int
    host: str
    created: float
    revoked_at: float | None
    instance: str | None  # the agent's outbox; last_seq counts within it
    last_seq: int
    version: str | None
    last_contact: float | None
    clock_skew: float | None
    remote: str | None
    batches: int
    samples: int
    statuses: str | None  # JSON: each collector's last run as the agent reported it


def list_agents(engine: Engine) -> list[AgentRow]:
    with engine.connect() as c:
        rows = c.execute(select(agent).order_by(agent.c.host)).all()
    return [AgentRow(id=r.id, host=r.host, created=r.created, revoked_at=r.revoked_at, instance=r.instance,
                     last_seq=r.last_seq, version=r.version, last_contact=r.last_contact, clock_skew=r.clock_skew,
                     remote=r.remote, batches=r.batches, samples=r.samples, statuses=r.statuses) for r in rows]


@dataclass(frozen=True)
class Caller:
    """Who sent a request: the agent row its token hash matched."""

    agent_id: int
    host: str
    token_hash: str


def bearer_hash(header: str | None) -> str:
    """The stored form of an ``Authorization: Bearer`` header's token, or AuthError 401."""
    if not header or not header.startswith("Bearer "):
        raise AuthError(401, "missing 'Authorization: Bearer <token>' (make one with `rackpulse agents issue HOST`)")
    return token_hash(header[7:].strip())


def authenticate(engine: Engine, hashed: str) -> Caller:
    """The agent whose token has this hash, or AuthError 401."""
    with engine.connect() as c:
        row = c.execute(select(agent.c.id, agent.c.host, agent.c.revoked_at).where(agent.c.token_hash == hashed)).first()
    if row is None:
        raise AuthError(401, "unknown agent token")
    if row.revoked_at is not None:
        raise AuthError(401, f"the token of host {row.host!r} was revoked")
    return Caller(int(row.id), str(row.host), hashed)
