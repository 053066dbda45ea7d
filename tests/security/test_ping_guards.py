"""/ping/<token> is open without a login (a cron job has none), so its token is all that guards
it: an unknown token is a 404 like any, a known one needs no session; one address may ping 60
times a minute; only a /fail's body is kept, its last 10 KB."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from app.storage.db import make_engine
from app.storage.heartbeats import issue
from app.storage.models import heartbeat
from app.web import heartbeats as pings
from tests.security.test_web_guards import make_app


def test_a_ping_needs_its_token_and_no_login_and_an_address_is_rate_limited(tmp_path: Path) -> None:
    app = make_app(tmp_path)  # a password is set: every page needs the login
    engine = make_engine(f"sqlite:///{tmp_path / 'r.db'}")
    token = issue(engine, "nas", "nightly-backup")
    pings.THROTTLE._failures.clear()  # noqa: SLF001 - one address across tests
    with TestClient(app, base_url="http://127.0.0.1") as c:
        assert c.get("/alerts", follow_redirects=False).status_code == 303  # the login
        assert c.get(f"/ping/{token}").status_code == 200  # no login needed
        assert c.get("/ping/" + "A" * len(token)).status_code == 404
        tail = ("line\n" * 5000).encode() + b"the end\n"
        assert c.post(f"/ping/{token}/fail", content=tail).status_code == 200
        codes = [c.get(f"/ping/{token}").status_code for _ in range(pings.RATE)]
        assert codes[-1] == 429 and codes.count(200) == pings.RATE - 3  # three pings came before
    with engine.connect() as conn:
        row = conn.execute(heartbeat.select()).one()
    assert len(row.last_body.encode()) <= pings.MAX_BODY and row.last_body.endswith("the end\n")
    assert row.token_hash != token and token not in row.token_hash  # only its hash is kept


def test_a_new_url_ends_the_old_one(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    engine = make_engine(f"sqlite:///{tmp_path / 'r.db'}")
    old = issue(engine, "nas", "nightly-backup")
    new = issue(engine, "nas", "nightly-backup")
    pings.THROTTLE._failures.clear()  # noqa: SLF001
    with TestClient(app, base_url="http://127.0.0.1") as c:
        assert c.get(f"/ping/{old}").status_code == 404
        assert c.get(f"/ping/{new}").status_code == 200


def test_a_chunked_fail_body_is_cut_off_at_the_limit_not_read_to_its_end(tmp_path: Path) -> None:
    """A chunked body declares no length: it is counted as it arrives and refused past 1 MB, so
    a 100 MiB one costs the server 1 MB of reading, not 100 (10.6 s before)."""
    app = make_app(tmp_path)
    engine = make_engine(f"sqlite:///{tmp_path / 'r.db'}")
    token = issue(engine, "nas", "nightly-backup")
    pings.THROTTLE._failures.clear()  # noqa: SLF001
    sent = [0]

    async def endless():  # type: ignore[no-untyped-def]
        for _ in range(100 * 1024):  # 100 MiB in 1 KiB chunks, made only as far as they are read
            sent[0] += 1024
            yield b"x" * 1023 + b"\n"

    async def go() -> int:
        import httpx

        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 5000))  # streams the body as it is read
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            async with app.router.lifespan_context(app):
                return (await c.post(f"/ping/{token}/fail", content=endless())).status_code

    import asyncio

    assert asyncio.run(go()) == 413
    assert sent[0] <= pings.READ_AT_MOST + 64 * 1024  # stopped at the limit, give or take a chunk or so
    with engine.connect() as conn:
        assert conn.execute(heartbeat.select()).one().last_body is None  # nothing of it was stored
