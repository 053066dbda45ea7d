"""Login sessions, CSRF tokens and the throttle on wrong passwords.

Sessions are signed with a random secret kept in the database's ``meta`` table (created on
first use), not derived from the password hash: a leaked hash does not let anyone mint a
session. The key also mixes in the password hash, so changing the password still logs
everybody out. "Log out everywhere" ends the caller's sessions only: a user's by raising their
epoch (app/people/users.py), the single password's admin's by raising a generation number its sessions
carry (a user's session ignores it); a single logout remembers that session's id until it would have expired anyway.
CSRF tokens are bound to the session (or, without a password, to a random browser cookie) and,
being signed with the stored secret, stay valid across a restart.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import threading
import time
from collections import deque

from sqlalchemy import Engine, select, update
from sqlalchemy.exc import IntegrityError

from app.storage.models import meta

COOKIE = "rackpulse_session"
CSRF_COOKIE = "rackpulse_csrf"  # the browser's identity for CSRF when no login is configured
SESSION_SECONDS = 7 * 86400


class Sessions:
    def __init__(self, engine: Engine, password_hash: str | None) -> None:
        self.engine = engine
        self.password_hash = password_hash or ""
        self._key: bytes | None = None
        self._generation = 0
        self._revoked: dict[str, int] = {}  # session id -> its expiry
        self._lock = threading.Lock()

    # -- stored state ---------------------------------------------------------------------

    def _meta(self, conn, key: str) -> str | None:
        return conn.execute(select(meta.c.value).where(meta.c.key == key)).scalar()

    def _put(self, key: str, value: str) -> None:
        with self.engine.begin() as c:
            if c.execute(update(meta).where(meta.c.key == key).values(value=value)).rowcount == 0:
                c.execute(meta.insert().values(key=key, value=value))

    def load(self) -> bytes:
        with self._lock:
            if self._key is not None:
                return self._key
            with self.engine.connect() as c:
                secret = self._meta(c, "session_secret")
            if secret is None:
                try:
                    with self.engine.begin() as c:
                        c.execute(meta.insert().values(key="session_secret", value=os.urandom(32).hex()))
                except IntegrityError:
                    pass  # another process made it first: use theirs
            with self.engine.connect() as c:
                secret = self._meta(c, "session_secret")
                self._generation = int(self._meta(c, "session_generation") or 0)
                self._revoked = json.loads(self._meta(c, "sessions_revoked") or "{}")
            assert secret is not None
            self._key = hmac.new(bytes.fromhex(secret), b"rackpulse-session:" + self.password_hash.encode(),
                                 hashlib.sha256).digest()
            return self._key

    def _sign(self, text: str) -> str:
        return hmac.new(self.load(), text.encode(), hashlib.sha256).hexdigest()

    # -- sessions -------------------------------------------------------------------------

    def make(self, now: float | None = None, user: str = "", epoch: int = 0) -> str:
        """A session cookie for `user` (a name from the users table, "" for the config's single
        password) at their current `epoch`: a new password or role ends every older session."""
        self.load()
        body = (f"{os.urandom(16).hex()}.{int((now or time.time()) + SESSION_SECONDS)}.{self._generation}."
                f"{user.encode().hex()}.{epoch}")
        return f"{body}.{self._sign(body)}"

    def who(self, token: str | None, now: float | None = None) -> tuple[str, str, int] | None:
        """(session id, user name, epoch) of a valid session cookie, else None."""
        if not token or token.count(".") != 5:
            return None
        sid, expires, generation, user_hex, epoch, sig = token.split(".")
        if not (expires.isdigit() and generation.isdigit() and epoch.isdigit()):
            return None
        if not hmac.compare_digest(sig, self._sign(f"{sid}.{expires}.{generation}.{user_hex}.{epoch}")):
            return None
        if int(expires) < (now or time.time()) or sid in self._revoked:
            return None
        if not user_hex and int(generation) != self._generation:  # the generation is the legacy admin's
            return None
        try:
            user = bytes.fromhex(user_hex).decode()
        except ValueError:
            return None
        return sid, user, int(epoch)

    def check(self, token: str | None, now: float | None = None) -> str | None:
        """The session id of a valid session cookie, else None."""
        found = self.who(token, now)
        return found[0] if found else None

    def logout(self, token: str | None, now: float | None = None) -> None:
        sid = self.check(token, now)
        if sid is None:
            return
        now = now or time.time()
        with self._lock:
            self._revoked = {s: e for s, e in self._revoked.items() if e > now}  # forget the expired
            self._revoked[sid] = int(token.split(".")[1])  # type: ignore[union-attr]
            revoked = json.dumps(self._revoked)
        self._put("sessions_revoked", revoked)

    def logout_everywhere(self) -> None:
        """Every session of the single password's admin (users end theirs by their epoch)."""
        self.load()
        with self._lock:
            self._generation += 1
            self._revoked = {}
        self._put("session_generation", str(self._generation))
        self._put("sessions_revoked", "{}")

    # -- CSRF -----------------------------------------------------------------------------

    def csrf(self, identity: str) -> str:
        return self._sign("csrf:" + identity)

    def csrf_ok(self, identity: str | None, token: str | None) -> bool:
        if not identity or not token:
            return False
        return hmac.compare_digest(self.csrf(identity), token)


class Throttle:
    """Every check of a secret (a password at sign-in, the current password, a TOTP or recovery
    code) goes through here, per address and per account: past ``limit`` attempts within
    ``window`` seconds from one address, or twice that on one account from anywhere, wait. The
    attempt is counted *before* the check (which awaits a slow scrypt): sixty guesses sent at once
    are sixty attempts, not sixty checks that each still see an empty record. A success takes its
    own attempt back and forgets the account's failures."""

    def __init__(self, limit: int = 10, window: float = 60.0) -> None:
        self.limit, self.window = limit, window
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _wait(self, key: str, limit: int, now: float) -> int:
        q = self._failures.get(key)
        while q and now - q[0] > self.window:
            q.popleft()
        if not q or len(q) < limit:
            return 0
        return max(1, int(self.window - (now - q[0])) + 1)

    def retry_after(self, addr: str, now: float | None = None, account: str | None = None) -> int:
        """Seconds this address (or account) must wait before trying again (0: it may try now)."""
        now = now or time.monotonic()
        with self._lock:
            wait = self._wait(addr, self.limit, now)
            if account:
                wait = max(wait, self._wait("account:" + account, 2 * self.limit, now))
            return wait

    def attempt(self, addr: str, account: str | None = None, now: float | None = None) -> int:
        """Before checking a secret: 0 and the attempt counted, or the seconds to wait (nothing checked)."""
        now = now or time.monotonic()
        with self._lock:
            wait = self._wait(addr, self.limit, now)
            if account:
                wait = max(wait, self._wait("account:" + account, 2 * self.limit, now))
            if wait:
                return wait
            self._add(addr, now)
            if account:
                self._add("account:" + account, now)
            return 0

    def _add(self, key: str, now: float) -> None:
        if len(self._failures) > 10_000:  # many addresses: forget those with nothing recent
            self._failures = {a: q for a, q in self._failures.items() if q and now - q[-1] <= self.window}
        self._failures.setdefault(key, deque(maxlen=self.limit * 4)).append(now)

    def failed(self, addr: str, now: float | None = None) -> None:
        """A failure counted after the fact (a check that did not go through attempt())."""
        with self._lock:
            self._add(addr, now or time.monotonic())

    def succeeded(self, addr: str, account: str | None = None) -> None:
        with self._lock:
            q = self._failures.get(addr)
            if q:
                q.pop()  # this success's own attempt; the address's other failures stand
            if account:
                self._failures.pop("account:" + account, None)
