"""API tokens for scripts: `rackpulse tokens create NAME --scope read|write [--expires 90d]`.

A token is shown once ("rpt_" and 32 random bytes) and stored as its sha256 only: a long random
token needs no slow hash, so checking one costs a lookup. Three scopes: a read token only reads
(GET); a write token also acknowledges, silences, sets maintenance, bay labels and disk notes; an
admin token also manages people, tokens and agents' tokens and reads the audit log. A token made
by a person on their account page never has more than its owner has now: their removal, demotion
or new password revokes it, and it is checked against their role at every use. Tokens are
revocable, may expire, remember when and from where they were last used, and are rate-limited
each on its own.
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, delete, select, update
from sqlalchemy.exc import IntegrityError

from app.credentials import token_hash
from app.people.users import UserError, check_name
from app.storage.models import api_token

PREFIX = "rpt_"
SCOPES = ("read", "write", "admin")
# the Principal role a scope gives (app/people/users.py: Principal.may_change)
SCOPE_ROLES = {"read": "viewer", "write": "operator", "admin": "admin"}
RANK = {"viewer": 0, "operator": 1, "admin": 2}
LAST_USE_WRITES = 60.0  # last use is written at most once a minute per token: a busy script costs no writes


@dataclass(frozen=True)
class Token:
    id: int
    name: str
    owner: str | None
    scope: str
    created: float
    expires: float | None
    last_used: float | None
    last_address: str | None
    revoked: float | None

    def role(self, owner_role: str | None) -> str:
        """What the token may do: its scope's role, but never more than its owner's role now
        (owner_role: None for a token made on the command line, which has no owner)."""
        mine = SCOPE_ROLES.get(self.scope, "viewer")
        if self.owner is None or owner_role is None:
            return mine
        return min(mine, owner_role, key=RANK.__getitem__)

    def state(self, now: float | None = None) -> str:
        now = now or time.time()
        if self.revoked:
            return "revoked"
        if self.expires is not None and self.expires <= now:
            return "expired"
        return "active"


def parse_duration(text: str) -> float:
    """'90d', '12h', '30m', '2w' -> seconds."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([mhdw])\s*", text or "")
    if not m:
        raise UserError(f"duration {text!r}: a number and m, h, d or w (90d)")
    return float(m[1]) * {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}[m[2]]


def _row(r: Any) -> Token:
    return Token(r.id, r.name, r.owner, r.scope, r.created, r.expires, r.last_used, r.last_address, r.revoked)


class Tokens:
    def __init__(self, engine: Engine, per_second: float = 10.0, burst: int = 30) -> None:
        self.engine = engine
        self.per_second, self.burst = per_second, burst
        self._buckets: dict[int, tuple[float, float]] = {}  # token id -> (tokens left, at)
        self._written: dict[int, float] = {}
        self._lock = threading.Lock()

    def create(self, name: str, scope: str, expires_in: float | None = None, owner: str | None = None,
               now: float | None = None) -> str:
        check_name(name)
        if scope not in SCOPES:
            raise UserError(f"scope {scope!r}: read, write or admin")
        now = now or time.time()
        token = PREFIX + secrets.token_urlsafe(32)
        taken = UserError(f"you have a token named {name!r} already (revoke and remove it first)" if owner else
                          f"a token named {name!r} exists already (revoke and remove it first)")
        try:
            with self.engine.begin() as c:
                # Names are per person (another's names are none of their business); the command
                # line's tokens have no owner, and SQL's unique (owner, name) lets NULLs repeat.
                if owner is None and c.execute(select(api_token.c.id).where(
                        api_token.c.owner.is_(None), api_token.c.name == name)).first() is not None:
                    raise taken
                c.execute(api_token.insert().values(name=name, owner=owner, scope=scope, token_hash=token_hash(token),
                                                    created=now, expires=now + expires_in if expires_in else None))
        except IntegrityError:
            raise taken from None
        return token

    def list(self, owner: str | None = None) -> list[Token]:
        q = select(api_token).order_by(api_token.c.name)
        if owner is not None:
            q = q.where(api_token.c.owner == owner)
        with self.engine.connect() as c:
            return [_row(r) for r in c.execute(q)]

    def revoke(self, name: str, owner: str | None = None, now: float | None = None, owned: bool = False) -> bool:
        """Revoke the live token of this name: `owner`'s; with owned=True, owner None is the
        command line's (else any owner's)."""
        q = update(api_token).where(api_token.c.name == name, api_token.c.revoked.is_(None))
        if owner is not None:
            q = q.where(api_token.c.owner == owner)
        elif owned:
            q = q.where(api_token.c.owner.is_(None))
        with self.engine.begin() as c:
            return bool(c.execute(q.values(revoked=now or time.time())).rowcount)

    def remove(self, name: str, owner: str | None = None) -> bool:
        """Remove the token of this name of `owner` (None: the command line's)."""
        mine = api_token.c.owner.is_(None) if owner is None else api_token.c.owner == owner
        with self.engine.begin() as c:
            return bool(c.execute(delete(api_token).where(api_token.c.name == name, mine)).rowcount)

    def check(self, token: str, address: str | None = None, now: float | None = None) -> Token | None:
        """The token's record when it is known, not revoked and not expired; its last use noted."""
        if not token.startswith(PREFIX):
            return None
        now = now or time.time()
        with self.engine.connect() as c:
            r = c.execute(select(api_token).where(api_token.c.token_hash == token_hash(token))).first()
        if r is None:
            return None
        t = _row(r)
        if t.state(now) != "active":
            return None
        with self._lock:
            due = now - self._written.get(t.id, 0.0) >= LAST_USE_WRITES
            if due:
                self._written[t.id] = now
        if due:
            with self.engine.begin() as c:
                c.execute(update(api_token).where(api_token.c.id == t.id).values(last_used=now, last_address=address))
        return t

    def allow(self, token_id: int, now: float | None = None) -> float:
        """0 when this request may go ahead, else the seconds to wait (a token bucket per token)."""
        now = now or time.monotonic()
        with self._lock:
            left, at = self._buckets.get(token_id, (float(self.burst), now))
            left = min(float(self.burst), left + (now - at) * self.per_second)
            if left >= 1.0:
                self._buckets[token_id] = (left - 1.0, now)
                return 0.0
            self._buckets[token_id] = (left, now)
            return (1.0 - left) / self.per_second
