"""People who log in: a name, a role and a password (scrypt), optionally two-factor (TOTP).

Two roles. An ``admin`` may do everything; a ``viewer`` reads every page and never acknowledges,
silences, labels or changes anything. The single password of older configs (web.password_hash)
keeps working as an admin named "admin" with no row here, so nobody's login changes on upgrade.

Who is asking, for every request, is a `Principal`: a person by session or by the reverse proxy's
header, a script by API token, or, with no login configured at all, the open local install
(an admin: rackpulse then listens on 127.0.0.1 only).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Connection, Engine, delete, func, or_, select, update
from sqlalchemy.exc import IntegrityError

from app import credentials
from app.storage.models import api_token, web_user

ROLES = ("admin", "viewer")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,99}")  # fullmatch: "$" would let "alice\n" in
MIN_PASSWORD = 8
CACHE_SECONDS = 5.0  # a change from the command line reaches a running server within this


class UserError(ValueError):
    """A request about users that cannot be done, said so a person can fix it."""


@dataclass(frozen=True)
class Principal:
    name: str
    role: str  # admin | operator (a write token) | viewer
    via: str  # session | token | link | proxy | open
    token_id: int | None = None

    @property
    def may_change(self) -> bool:
        """Acknowledge, silence, maintenance, labels, notes: an admin or a write token. People and
        tokens are an admin's alone (Principal.role == "admin")."""
        return self.role in ("admin", "operator")

    @property
    def actor(self) -> str:
        """How the audit log names them: "alice", "token:ansible", "proxy:bob"."""
        return self.name if self.via in ("session", "open") else f"{self.via}:{self.name}"


OPEN = Principal("local", "admin", "open")


@dataclass(frozen=True)
class User:
    name: str
    role: str
    password_hash: str
    epoch: int
    totp_secret: str | None
    totp_pending: str | None
    totp_last_step: int | None
    recovery: tuple[str, ...]
    created: float

    @property
    def two_factor(self) -> bool:
        return bool(self.totp_secret)

    @property
    def recovery_json(self) -> str:
        return json.dumps(list(self.recovery))


def _revoke_tokens_of(c: Connection, owner: str) -> None:
    c.execute(update(api_token).where(api_token.c.owner == owner, api_token.c.revoked.is_(None))
              .values(revoked=time.time()))


def _exists(name: str) -> UserError:
    return UserError(f"user {name!r} exists already (`rackpulse users passwd {name}` changes the password)")


def _another_admin_remains(c: Connection, name: str) -> ColumnElement[bool]:
    """The condition, for the statement that demotes or removes `name`, that it is not an admin
    or another admin remains: checked by the statement itself, so the check and the change are
    one (SQLite runs one write at a time). On PostgreSQL the admins' rows are locked first: a
    second transaction waits here and its statement then counts what the first one left."""
    c.execute(select(web_user.c.name).where(web_user.c.role == "admin").with_for_update())
    others = (select(func.count()).select_from(web_user)
              .where(web_user.c.role == "admin", web_user.c.name != name).scalar_subquery())
    return or_(web_user.c.role != "admin", others > 0)


def _row(r: Any) -> User:
    return User(r.name, r.role, r.password_hash, r.epoch, r.totp_secret, r.totp_pending, r.totp_last_step,
                tuple(json.loads(r.recovery or "[]")), r.created)


def check_name(name: str) -> str:
    if not NAME.fullmatch(name or ""):
        raise UserError(f"user name {name!r}: letters, digits and . _ @ - (at most 100, not starting with a sign)")
    return name


def check_role(role: str) -> str:
    if role not in ROLES:
        raise UserError(f"role {role!r}: one of {', '.join(ROLES)}")
    return role


def check_password(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise UserError(f"use at least {MIN_PASSWORD} characters")
    return password


TOTP_DIGITS = 6  # pyotp's default, what authenticator apps show


def code_hash(code: str) -> str:
    """A recovery code as stored: sha256 of its characters without spaces or dashes, lower case."""
    return hashlib.sha256(re.sub(r"[\s-]", "", code).lower().encode()).hexdigest()


class Users:
    """The web_user table, with a short cache: the guard asks on every request."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._lock = threading.Lock()
        self._cache: dict[str, User] = {}
        self._loaded = 0.0

    def _fresh(self) -> dict[str, User]:
        with self._lock:
            if time.monotonic() - self._loaded < CACHE_SECONDS:
                return self._cache
        with self.engine.connect() as c:
            users = {r.name: _row(r) for r in c.execute(select(web_user))}
        with self._lock:
            self._cache, self._loaded = users, time.monotonic()
        return users

    def changed(self) -> None:
        with self._lock:
            self._loaded = 0.0

    # -- reading ----------------------------------------------------------------------------

    def any(self) -> bool:
        return bool(self._fresh())

    def get(self, name: str) -> User | None:
        return self._fresh().get(name)

    def all(self) -> list[User]:
        return sorted(self._fresh().values(), key=lambda u: u.name)

    def admins(self) -> int:
        return sum(u.role == "admin" for u in self._fresh().values())

    def verify(self, name: str, password: str) -> User | None:
        """The user when the password is theirs. A name that does not exist costs a scrypt all
        the same, so the time taken does not tell which names exist."""
        u = self.get(name)
        ok = credentials.verify_password(password, u.password_hash if u else dummy_hash())
        return u if (u and ok) else None

    # -- changing ---------------------------------------------------------------------------

    def add(self, name: str, role: str, password: str, now: float | None = None) -> None:
        check_name(name), check_role(role), check_password(password)
        try:
            with self.engine.begin() as c:
                # one name per person whatever its case: `Alice` beside `alice` is two logins a
                # person cannot tell apart on /users
                same = c.execute(select(web_user.c.name).where(func.lower(web_user.c.name) == name.lower())).first()
                if same is not None and same[0] != name:
                    raise UserError(f"user {same[0]!r} exists already, and names are the same whatever their case")
                if same is not None:
                    raise _exists(name)
                c.execute(web_user.insert().values(name=name, role=role, epoch=0,
                                                   password_hash=credentials.hash_password(password),
                                                   created=now or time.time()))
        except IntegrityError:
            raise _exists(name) from None
        self.changed()

    def _update(self, name: str, revoke_tokens: bool = False, keep_an_admin: bool = False, **values: Any) -> None:
        with self.engine.begin() as c:
            where = [web_user.c.name == name]
            if keep_an_admin:
                where.append(_another_admin_remains(c, name))
            done = c.execute(update(web_user).where(*where).values(epoch=web_user.c.epoch + 1, **values))
            if done.rowcount and revoke_tokens:
                _revoke_tokens_of(c, name)
        self.changed()
        if not done.rowcount:
            if keep_an_admin and self.get(name) is not None:
                raise UserError(f"{name} is the last admin: make another admin first")
            raise UserError(f"no user {name!r}")

    def end_sessions(self, name: str) -> None:
        """Every session of theirs ends ("Log out everywhere"); their tokens stay."""
        self._update(name)

    def set_password(self, name: str, password: str) -> None:
        """A new password; every session of theirs ends and their API tokens are revoked (a password
        is changed because it may be known to someone else, who may have made a token with it)."""
        self._update(name, revoke_tokens=True, password_hash=credentials.hash_password(check_password(password)))

    def set_role(self, name: str, role: str) -> None:
        check_role(role)
        u = self.get(name)
        if u and u.role == "admin" and role != "admin" and self.admins() == 1:
            raise UserError(f"{name} is the last admin: make another admin first")
        # a demotion revokes the tokens they made: a token must not keep powers its owner lost;
        # the last-admin check is made again inside the change's own transaction (two admins
        # demoting each other at once both passed the check above and left no admin)
        self._update(name, revoke_tokens=bool(u and ROLES.index(role) > ROLES.index(u.role)),
                     keep_an_admin=role != "admin", role=role)

    def remove(self, name: str, other_login: bool = False) -> None:
        """Remove a person and revoke their tokens. Never the last admin unless another way in
        remains (`other_login`: the config's single password), or no one could manage people."""
        u = self.get(name)
        if u is None:
            raise UserError(f"no user {name!r}")
        if u.role == "admin" and self.admins() == 1 and not other_login:
            raise UserError(f"{name} is the last admin: make another admin first")
        with self.engine.begin() as c:
            where = [web_user.c.name == name]
            if not other_login:
                where.append(_another_admin_remains(c, name))
            done = c.execute(delete(web_user).where(*where))
            if done.rowcount:
                _revoke_tokens_of(c, name)
        self.changed()
        if not done.rowcount:
            raise UserError(f"{name} is the last admin: make another admin first" if self.get(name) else
                            f"no user {name!r}")

    # -- two-factor ---------------------------------------------------------------------------

    def start_totp(self, name: str) -> str:
        """A new secret, pending until a code from it is confirmed (the old one, if any, stays)."""
        import pyotp

        secret = pyotp.random_base32()
        with self.engine.begin() as c:
            c.execute(update(web_user).where(web_user.c.name == name).values(totp_pending=secret))
        self.changed()
        return secret

    def confirm_totp(self, name: str, code: str, now: float | None = None) -> list[str] | None:
        """Make the pending secret the one in force when `code` is right; returns the new recovery
        codes (shown once, stored hashed), or None for a wrong code."""
        import pyotp

        u = self.get(name)
        if u is None or not u.totp_pending:
            return None
        step = _accepted_step(pyotp.TOTP(u.totp_pending), code, now or time.time(), None)
        if step is None:
            return None
        codes = [f"{secrets.token_hex(3)}-{secrets.token_hex(3)}" for _ in range(10)]
        self._update(name, totp_secret=u.totp_pending, totp_pending=None, totp_last_step=step,
                     recovery=json.dumps([code_hash(c) for c in codes]))
        return codes

    def disable_totp(self, name: str) -> None:
        self._update(name, totp_secret=None, totp_pending=None, totp_last_step=None, recovery=None)

    def second_factor(self, name: str, code: str, now: float | None = None) -> bool:
        """A TOTP code (never one used before: its time step must be newer than the last accepted)
        or an unused recovery code (gone once used)."""
        import pyotp

        u = self.get(name)
        if u is None or not u.totp_secret or not code.strip():
            return False
        clean = re.sub(r"\s", "", code)
        # Six digits are a TOTP code. A recovery code is 12 hex characters, all of them digits
        # about once in 280 codes: "303047 526258" typed from paper is still a recovery code.
        if clean.isdigit() and len(clean) == TOTP_DIGITS:
            step = _accepted_step(pyotp.TOTP(u.totp_secret), clean, now or time.time(), u.totp_last_step)
            if step is None:
                return False
            with self.engine.begin() as c:  # compare-and-set: two logins racing with one code, one wins
                done = c.execute(update(web_user).where(
                    web_user.c.name == name,
                    (web_user.c.totp_last_step.is_(None)) | (web_user.c.totp_last_step < step))
                    .values(totp_last_step=step))
            self.changed()
            return bool(done.rowcount)
        h = code_hash(clean)
        if h not in u.recovery:
            return False
        left = [x for x in u.recovery if x != h]
        with self.engine.begin() as c:
            done = c.execute(update(web_user).where(web_user.c.name == name, web_user.c.recovery == u.recovery_json)
                             .values(recovery=json.dumps(left)))
        self.changed()
        return bool(done.rowcount)


def _accepted_step(totp: Any, code: str, now: float, last: int | None) -> int | None:
    """The time step (30 s) whose code this is, this one or one either side (a clock a little
    off), if it is newer than the last accepted step."""
    step_now = int(now // totp.interval)
    for step in (step_now, step_now - 1, step_now + 1):
        if last is not None and step <= last:
            continue
        if secrets.compare_digest(totp.at(step * totp.interval), code):
            return step
    return None


@functools.cache
def dummy_hash() -> str:
    """What verify() of an unknown name checks against, so it takes as long as a real check."""
    return credentials.hash_password(secrets.token_hex(8))
