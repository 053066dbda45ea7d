"""Which of several servers on one PostgreSQL evaluates alerts, sends notifications and folds
rollups: the one holding a PostgreSQL advisory lock on a connection of its own. The others
stand by and ask again on every alert tick; when the leader dies, even by kill -9, PostgreSQL
drops its connection and with it the lock, and the next standby to ask takes over (within one
alerts.interval). On SQLite there is one server: it always leads.
"""

from __future__ import annotations

import logging

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import SQLAlchemyError

log = logging.getLogger("rackpulse.leader")
LOCK_KEY = 0x7261636B70756C73  # "rackpuls": the advisory lock all rackpulse servers of one database share


class Leadership:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.shared = engine.dialect.name == "postgresql"
        self._conn: Connection | None = None

    def check(self) -> bool:
        """Whether this server leads now: it keeps the lock it holds (its connection still
        answers), or takes it if nobody holds it."""
        if not self.shared:
            return True
        if self._conn is not None:
            try:
                self._conn.execute(text("SELECT 1"))
                return True
            except SQLAlchemyError as exc:
                log.warning("lost the database connection that held the lead: %s", exc)
                self._drop()
        try:
            conn = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        except SQLAlchemyError:
            return False
        try:
            got = bool(conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": LOCK_KEY}).scalar())
        except SQLAlchemyError:
            got = False
        if got:
            self._conn = conn
        else:
            conn.close()
        return got

    def _drop(self) -> None:
        if self._conn is not None:
            try:
                self._conn.invalidate()  # never back into the pool: its session may still hold the lock
            except SQLAlchemyError:
                pass
            self._conn = None

    def release(self) -> None:
        """On a clean stop: the lock goes at once, not when the connection times out."""
        if self._conn is not None:
            try:
                self._conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": LOCK_KEY})
                self._conn.close()
            except SQLAlchemyError:
                pass
            self._conn = None
