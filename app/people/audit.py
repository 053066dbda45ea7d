"""The audit log: who changed what, when, from which address (acknowledgements, silences,
labels, notes, users and tokens, logins and refused logins). The web guard writes one row per
change a request made; a route may add words to it (`note(request, "...")`)."""

from __future__ import annotations

import time

from fastapi import Request
from sqlalchemy import Engine, delete, select

# pydantic reads a TypedDict's fields from typing_extensions' before Python 3.12 (/api/v1/audit)
from typing_extensions import TypedDict

from app.storage.models import audit

KEEP_DAYS = 400.0


class AuditEntry(TypedDict):
    """One row of the audit log, as the audit page and /api/v1/audit show it."""

    id: int
    ts: float
    actor: str  # "alice", "token:ansible", "proxy:bob"
    action: str  # "POST /alerts/ack", "login", "login refused"
    detail: str | None
    address: str | None
    status: int | None


def record(engine: Engine, actor: str, action: str, detail: str | None = None, address: str | None = None,
           status: int | None = None, now: float | None = None) -> None:
    with engine.begin() as c:
        c.execute(audit.insert().values(ts=now or time.time(), actor=actor[:120], action=action[:200],
                                        detail=(detail or None) and detail[:2000], address=address, status=status))


def note(request: Request, detail: str) -> None:
    """Words for this request's audit row ("ack md0 degraded: replacing the disk")."""
    request.state.audit_detail = detail


def entries(engine: Engine, limit: int = 200, actor: str = "") -> list[AuditEntry]:
    q = select(audit).order_by(audit.c.id.desc()).limit(limit)
    if actor:
        q = q.where(audit.c.actor == actor)
    with engine.connect() as c:
        return [AuditEntry(id=r.id, ts=r.ts, actor=r.actor, action=r.action, detail=r.detail, address=r.address,
                           status=r.status) for r in c.execute(q)]


def forget_old(engine: Engine, now: float | None = None) -> int:
    with engine.begin() as c:
        return int(c.execute(delete(audit).where(audit.c.ts < (now or time.time()) - KEEP_DAYS * 86400)).rowcount)
