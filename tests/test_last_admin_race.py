"""At least one admin, always: two admins demoting or removing each other at the same moment (two
servers on one database, each sure from its own reading that another admin remains) left no
admin in 5 of 10 rounds. The check and the change are now one statement; 100 racing rounds on
SQLite and on the real PostgreSQL server. And one name per person whatever its case."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import delete, func, select

from app import credentials
from app.people.users import UserError, Users
from app.storage.db import make_engine, upgrade
from app.storage.models import web_user

ROUNDS = 100


def _two_admins(engine, hashed: str) -> None:  # type: ignore[no-untyped-def]
    with engine.begin() as c:
        c.execute(delete(web_user))
        c.execute(web_user.insert(), [{"name": n, "role": "admin", "password_hash": hashed, "epoch": 0,
                                       "created": time.time()} for n in ("alice", "bob")])


def _race(first, second) -> list[BaseException | None]:  # type: ignore[no-untyped-def]
    """Run both at once (a barrier releases them together); what each raised, or None."""
    gate, out = threading.Barrier(2), [None, None]

    def run(i: int, fn) -> None:  # type: ignore[no-untyped-def]
        gate.wait()
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 (the test looks at what it was)
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate((first, second))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return out  # type: ignore[return-value]


@pytest.mark.parametrize("how", ["demote", "remove", "one_of_each"])
def test_two_admins_taking_each_others_role_at_once_leave_an_admin_every_round(db_url: str, how: str) -> None:
    upgrade(db_url)
    engine = make_engine(db_url)
    hashed = credentials.hash_password("correct horse battery", n=2**4)
    here, there = Users(engine), Users(engine)  # two servers: each with its own cached reading
    acts = {"demote": (lambda: here.set_role("bob", "viewer"), lambda: there.set_role("alice", "viewer")),
            "remove": (lambda: here.remove("bob"), lambda: there.remove("alice")),
            "one_of_each": (lambda: here.set_role("bob", "viewer"), lambda: there.remove("alice"))}[how]
    refused = 0
    try:
        for _ in range(ROUNDS):
            _two_admins(engine, hashed)
            here.changed(), there.changed()
            assert here.admins() == there.admins() == 2  # both read "another admin remains"
            errors = _race(*acts)
            with engine.connect() as c:
                admins = c.execute(select(func.count()).select_from(web_user).where(web_user.c.role == "admin")).scalar()
            assert admins == 1, errors
            assert sum(isinstance(e, UserError) and "last admin" in str(e) for e in errors) == 1, errors
            refused += 1
    finally:
        engine.dispose()
    assert refused == ROUNDS


def test_a_name_differing_only_in_case_is_refused_naming_the_one_there(sqlite_url: str) -> None:
    upgrade(sqlite_url)
    engine = make_engine(sqlite_url)
    users = Users(engine)
    users.add("alice", "admin", "correct horse battery")
    for other in ("Alice", "ALICE"):
        with pytest.raises(UserError, match="user 'alice' exists already, and names are the same whatever"):
            users.add(other, "viewer", "correct horse battery")
    with pytest.raises(UserError, match="user 'alice' exists already"):
        users.add("alice", "viewer", "correct horse battery")
    assert [u.name for u in users.all()] == ["alice"]
    engine.dispose()
