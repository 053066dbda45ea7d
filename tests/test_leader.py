"""Which server leads, asked of the real PostgreSQL: one holder of the advisory lock at a time,
kept while its connection answers, handed over on release or when the holder's connection
dies. On SQLite the one server always leads."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, create_engine, make_url, text

from app.leader import LOCK_KEY, Leadership
from app.storage.db import make_engine
from tests.conftest import PG_ADMIN_URL


@pytest.fixture
def engine(pg_url: str) -> Iterator[Engine]:
    e = make_engine(pg_url)
    yield e
    e.dispose()


def holders(engine: Engine) -> list[int]:
    """The backend pids holding rackpulse's advisory lock in this database."""
    with engine.connect() as c:
        return list(c.execute(text(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = "
            "(SELECT oid FROM pg_database WHERE datname = current_database()) "
            "AND ((classid::bigint << 32) | objid::bigint) = :k"), {"k": LOCK_KEY}).scalars())


def kill_backend(pid: int) -> None:
    """End a backend and return once it is gone. pg_terminate_backend alone only signals it, and
    the advisory lock goes with the process: on a loaded machine the standby asked while the
    backend was still exiting, found the lock held, and the test failed. With a timeout
    PostgreSQL waits until the process has ended (it answers the moment it has; the bound is
    only there so that a wedged server fails the test instead of hanging it)."""
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as c:
            ended = c.execute(text("SELECT pg_terminate_backend(:p, 60000)"), {"p": pid}).scalar()
    finally:
        admin.dispose()
    assert ended is True, f"backend {pid} still running 60 s after it was told to end"


def test_the_one_server_on_sqlite_always_leads_without_touching_a_lock(sqlite_url: str) -> None:
    e = make_engine(sqlite_url)
    try:
        a, b = Leadership(e), Leadership(e)
        assert not a.shared
        assert a.check() and b.check() and a.check()
        assert a._conn is None  # no connection is held for a lock SQLite does not have
        a.release()
        assert a.check()
    finally:
        e.dispose()


def test_of_two_servers_the_first_to_ask_leads_and_the_other_stands_by(engine: Engine) -> None:
    a, b = Leadership(engine), Leadership(engine)
    assert a.shared
    assert a.check() is True
    [pid] = holders(engine)
    assert b.check() is False
    assert a.check() is True  # the leader keeps the lead on every later tick...
    assert holders(engine) == [pid]  # ...on the connection that took it (a new one would race a standby)
    assert b.check() is False  # ...and the standby stays a standby
    assert len(holders(engine)) == 1
    assert b._conn is None  # the standby's connection went back: it holds nothing between ticks
    a.release()
    b.release()


def test_a_clean_stop_hands_the_lead_over_at_the_next_tick(engine: Engine) -> None:
    a, b = Leadership(engine), Leadership(engine)
    assert a.check()
    a.release()
    assert a._conn is None
    assert holders(engine) == []  # unlocked at once, not when a connection times out
    assert b.check() is True
    assert a.check() is False
    b.release()


def test_a_leader_whose_connection_dies_loses_the_lead_and_a_standby_takes_it(
        engine: Engine, caplog: pytest.LogCaptureFixture) -> None:
    a, b = Leadership(engine), Leadership(engine)
    assert a.check()
    [pid] = holders(engine)
    kill_backend(pid)  # what kill -9 of the leader's server looks like to PostgreSQL
    assert b.check() is True  # the lock died with the connection
    assert a.check() is False  # the old leader sees its connection gone and does not claim the lead
    assert a._conn is None
    said = [r.getMessage() for r in caplog.records if r.name == "rackpulse.leader"]
    assert len(said) == 1 and said[0].startswith("lost the database connection that held the lead: ")
    assert "terminat" in said[0]  # PostgreSQL's own words: "terminating connection due to administrator command"
    assert holders(engine) != [pid]
    b.release()


def test_a_leader_that_lost_its_connection_takes_the_lead_again_when_nobody_holds_it(engine: Engine) -> None:
    a = Leadership(engine)
    assert a.check()
    [pid] = holders(engine)
    kill_backend(pid)
    assert a.check() is True  # a fresh connection, the lock taken anew
    assert len(holders(engine)) == 1 and holders(engine) != [pid]
    a.release()


def test_a_database_that_cannot_be_reached_means_not_leading_not_a_crash() -> None:
    # a port nobody listens on: connecting fails; a standby must not evaluate alerts
    e = create_engine("postgresql+psycopg://postgres@127.0.0.1:1/none", connect_args={"connect_timeout": 2})
    try:
        lead = Leadership(e)
        assert lead.shared
        assert lead.check() is False
        lead.release()  # nothing held, nothing to do
        assert lead._conn is None
    finally:
        e.dispose()


def test_a_server_that_may_not_take_the_lock_stands_by_and_holds_no_connection(engine: Engine, pg_url: str) -> None:
    """A role without EXECUTE on pg_try_advisory_lock (an admin's hardening): the query fails,
    which is "not leading", never a crash and never a claim."""
    import uuid

    role = f"rp_nolock_{uuid.uuid4().hex[:8]}"
    with engine.begin() as c:
        c.execute(text(f'CREATE ROLE "{role}" LOGIN'))
        c.execute(text("REVOKE EXECUTE ON FUNCTION pg_try_advisory_lock(bigint) FROM PUBLIC"))
    limited = create_engine(make_url(pg_url).set(username=role, password=None))
    try:
        lead = Leadership(limited)
        assert lead.check() is False
        assert lead._conn is None
        assert holders(engine) == []
    finally:
        limited.dispose()
        with engine.begin() as c:
            c.execute(text(f'DROP ROLE "{role}"'))
