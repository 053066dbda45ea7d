"""The web UI against a hostile browser and a password guesser: DNS rebinding (Host header),
login throttling, sessions that survive a restart but not a logout, CSRF bound to the session."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.config import load_config
from app.credentials import hash_password
from app.scheduler import Snapshot
from app.storage.db import upgrade
from app.web.app import create_app
from collectors.base import Sample

PASSWORD = "correct horse"
PW_HASH = hash_password(PASSWORD, n=2**10)  # one hash: a new one is a password change, which logs out


def make_app(tmp_path: Path, password: bool = True, **web):  # type: ignore[no-untyped-def]
    url = f"sqlite:///{tmp_path / 'r.db'}"
    upgrade(url)
    w = {"listen": "0.0.0.0", "password_hash": PW_HASH} if password else {}
    cfg = load_config(None, {"host": "nas", "storage": {"url": url}, "web": {**w, **web}, "alerts": {"user_rules": [
        {"name": "bad", "metric": "rackpulse_test_bad", "op": ">", "threshold": 0, "severity": "critical"}]}})
    snap = Snapshot(host="nas")
    snap.samples["x"] = [Sample.of("rackpulse_test_bad", 1, thing="a")]
    app = create_app(cfg, collect=False, snapshot=snap, migrate=False)
    app.state.get_alerting().tick(snap, deliver=False)
    return app


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(make_app(tmp_path, password=False), base_url="http://127.0.0.1") as c:
        yield c


@pytest.mark.parametrize("host", ["evil.example", "evil.example:9842", "rackpulse.attacker.net.", "nas.lan"])
def test_a_request_under_a_foreign_host_name_is_refused_before_it_can_change_anything(client: TestClient,
                                                                                       host: str) -> None:
    page = client.get("/alerts")
    csrf = page.text.split('name="csrf" value="')[1].split('"')[0]
    r = client.post("/alerts/silence", data={"rule": "bad", "subject": "", "hours": "24", "csrf": csrf},
                    headers={"Host": host})
    assert r.status_code == 400 and "web.allowed_hosts" in r.text
    assert client.get("/api/alerts").json()["silences"] == []
    assert client.get("/metrics", headers={"Host": host}).status_code == 400


@pytest.mark.parametrize("host", ["127.0.0.1:9842", "localhost:9842", "[::1]:9842", "192.168.1.20:9842", "localhost"])
def test_loopback_names_and_ip_addresses_are_let_in(client: TestClient, host: str) -> None:
    assert client.get("/healthz", headers={"Host": host}).status_code == 200


def test_a_name_in_allowed_hosts_is_let_in(tmp_path: Path) -> None:
    with TestClient(make_app(tmp_path, password=False, allowed_hosts=["nas.lan"]), base_url="http://nas.lan") as c:
        assert c.get("/healthz").status_code == 200
        assert c.get("/healthz", headers={"Host": "NAS.lan:9842"}).status_code == 200
        assert c.get("/healthz", headers={"Host": "evil.example"}).status_code == 400


def test_eleven_wrong_passwords_in_a_minute_are_throttled_and_logged_with_the_address(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "rackpulse.web")
    with TestClient(make_app(tmp_path), base_url="http://127.0.0.1", follow_redirects=False) as c:
        for _ in range(10):
            assert "Wrong user or password" in c.post("/login", data={"password": "guess"}).text
        r = c.post("/login", data={"password": "guess"})
        assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
        # While throttled, not even the right password is checked.
        assert c.post("/login", data={"password": PASSWORD}).status_code == 429
    failures = [r.getMessage() for r in caplog.records if "wrong user or password" in r.getMessage()]
    assert len(failures) == 10 and all("testclient" in m for m in failures)


def login(c: TestClient) -> str:
    r = c.post("/login", data={"password": PASSWORD, "next": "/alerts"})
    assert r.status_code == 303
    return r.cookies["rackpulse_session"]


def test_a_session_and_its_csrf_token_survive_a_restart(tmp_path: Path) -> None:
    with TestClient(make_app(tmp_path), base_url="http://127.0.0.1", follow_redirects=False) as c:
        cookie = login(c)
        csrf = c.get("/alerts").text.split('name="csrf" value="')[1].split('"')[0]
    # A new process over the same database: the stored secret signs the same way.
    with TestClient(make_app(tmp_path), base_url="http://127.0.0.1", follow_redirects=False,
                    cookies={"rackpulse_session": cookie}) as c:
        assert c.get("/alerts").status_code == 200
        r = c.post("/alerts/ack", data={"rule": "bad", "subject": "thing=a", "csrf": csrf})
        assert r.status_code == 303


def test_a_csrf_token_of_another_session_is_refused(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    with TestClient(app, base_url="http://127.0.0.1", follow_redirects=False) as a, \
            TestClient(app, base_url="http://127.0.0.1", follow_redirects=False) as b:
        login(a)
        login(b)
        theirs = b.get("/alerts").text.split('name="csrf" value="')[1].split('"')[0]
        r = a.post("/alerts/ack", data={"rule": "bad", "subject": "thing=a", "csrf": theirs})
        assert r.status_code == 403
        assert app.state.get_alerting().states[("bad", "thing=a")].acked_at is None


def test_logout_ends_that_session_and_logout_everywhere_ends_all_of_them(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    with TestClient(app, base_url="http://127.0.0.1", follow_redirects=False) as a, \
            TestClient(app, base_url="http://127.0.0.1", follow_redirects=False) as b, \
            TestClient(app, base_url="http://127.0.0.1", follow_redirects=False) as c:
        old_a, _, _ = login(a), login(b), login(c)
        csrf = a.get("/alerts").text.split('name="csrf" value="')[1].split('"')[0]
        assert a.post("/logout", data={"csrf": csrf}).status_code == 303
        # Even a copy of the cookie kept by someone else no longer works.
        a.cookies.set("rackpulse_session", old_a)
        assert a.get("/alerts").status_code == 303
        assert b.get("/alerts").status_code == 200
        csrf = b.get("/alerts").text.split('name="csrf" value="')[1].split('"')[0]
        assert b.post("/logout", data={"csrf": csrf, "everywhere": "1"}).status_code == 303
        assert c.get("/alerts").status_code == 303 and c.get("/api/alerts").status_code == 401
    with TestClient(make_app(tmp_path), base_url="http://127.0.0.1", follow_redirects=False) as d:
        d.cookies.set("rackpulse_session", c.cookies.get("rackpulse_session") or "")
        assert d.get("/alerts").status_code == 303  # still over after a restart


def test_a_new_password_ends_every_session(tmp_path: Path) -> None:
    with TestClient(make_app(tmp_path), base_url="http://127.0.0.1", follow_redirects=False) as c:
        cookie = login(c)
    changed = create_app(load_config(None, {"host": "nas", "storage": {"url": f"sqlite:///{tmp_path / 'r.db'}"},
                                            "web": {"listen": "0.0.0.0",
                                                    "password_hash": hash_password("new one", n=2**10)}}),
                         collect=False, snapshot=Snapshot(host="nas"), migrate=False)
    with TestClient(changed, base_url="http://127.0.0.1", follow_redirects=False,
                    cookies={"rackpulse_session": cookie}) as c:
        assert c.get("/alerts").status_code == 303


def test_the_password_hash_alone_does_not_mint_a_session(tmp_path: Path) -> None:
    """Sessions used to be signed with a key derived from the hash; a leaked config let anyone in."""
    import hashlib
    import hmac

    app = make_app(tmp_path)
    pw_hash = app.state.config.password_hash()
    key = hashlib.sha256(b"rackpulse-session:" + pw_hash.encode()).digest()
    expires = "9999999999"
    forged = f"{expires}.{hmac.new(key, expires.encode(), hashlib.sha256).hexdigest()}"
    with TestClient(app, base_url="http://127.0.0.1", follow_redirects=False,
                    cookies={"rackpulse_session": forged}) as c:
        assert c.get("/alerts").status_code == 303


def test_without_a_password_csrf_is_bound_to_the_browser_cookie(client: TestClient) -> None:
    csrf = client.get("/alerts").text.split('name="csrf" value="')[1].split('"')[0]
    assert client.cookies.get("rackpulse_csrf")
    client.cookies.set("rackpulse_csrf", "another-browser")
    r = client.post("/alerts/ack", data={"rule": "bad", "subject": "thing=a", "csrf": csrf})
    assert r.status_code == 403


def _csrf(client: TestClient) -> str:
    return client.get("/alerts").text.split('name="csrf" value="')[1].split('"')[0]


@pytest.mark.parametrize("field", ["rule", "subject"])
def test_a_silence_pattern_over_200_characters_is_refused_and_nothing_is_stored(client: TestClient,
                                                                               field: str) -> None:
    data = {"rule": "bad", "subject": "a=1", "duration": "1h", "csrf": _csrf(client), field: "*x" * (480_000 // 3)}  # ~320 KB (the issue: three ~960 KB)
    r = client.post("/alerts/silence", data=data)
    assert r.status_code == 400 and "at most 200" in r.text
    ok = client.post("/alerts/silence", data={**data, field: "x" * 200}, follow_redirects=False)
    assert ok.status_code == 303
    assert [len(s[field]) for s in client.get("/api/alerts").json()["silences"]] == [200]


@pytest.mark.parametrize("rule, subject", [("", ""), ("*", ""), ("", "*"), ("**", "*"), ("?*", ""), ("[a-z]*", ""),
                                           ("", "?*"), ("*_*", "[!x]*"), ("*", "*?")])
def test_a_silence_of_everything_needs_all_is_capped_at_seven_days_and_the_overview_says_so(
        client: TestClient, rule: str, subject: str) -> None:
    csrf = _csrf(client)
    base = {"rule": rule, "subject": subject, "csrf": csrf}
    r = client.post("/alerts/silence", data={**base, "duration": "1d"})
    assert r.status_code == 400 and "matches every alert" in r.text
    r = client.post("/alerts/silence", data={**base, "duration": "30d", "confirm": "all"})
    assert r.status_code == 400 and "at most 7 days" in r.text
    assert client.get("/api/alerts").json()["silences"] == []
    assert "Every alert is silenced" not in client.get("/").text
    r = client.post("/alerts/silence", data={**base, "duration": "7d", "confirm": "all"}, follow_redirects=False)
    assert r.status_code == 303
    page = client.get("/").text
    assert "Every alert is silenced until" in page and "critical ones included" in page
    # A narrower silence is not "everything": no confirmation, no banner.
    client.post("/alerts/silence/1/expire", data={"csrf": csrf})
    r = client.post("/alerts/silence", data={"rule": "ba*", "subject": "", "duration": "30d", "csrf": csrf},
                    follow_redirects=False)
    assert r.status_code == 303 and "Every alert is silenced" not in client.get("/").text


def test_password_checks_from_many_addresses_run_one_at_a_time(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Eight guessers from eight addresses each pass the per-address throttle: the cap is global,
    so scrypt never holds more than one core and the rest of the server stays quick."""
    import threading
    import time

    import httpx

    from app import credentials

    running, peak, lock = [0], [0], threading.Lock()
    real = credentials.verify_password

    def counted(password: str, encoded: str) -> bool:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        try:
            time.sleep(0.02)  # scrypt's tens of milliseconds, so the checks would overlap
            return real(password, encoded)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(credentials, "verify_password", counted)
    app = make_app(tmp_path)

    async def guess_all() -> list[int]:
        import asyncio

        async def guess(i: int) -> int:
            transport = httpx.ASGITransport(app=app, client=(f"10.0.0.{i}", 5000))
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
                # each its own account too: the per-account limit is not what this test is about
                codes = [(await c.post("/login", data={"user": f"u{i}", "password": f"wrong{n}"})).status_code
                         for n in range(4)]
                return max(codes)

        async with app.router.lifespan_context(app):
            return await asyncio.gather(*(guess(i) for i in range(8)))

    import asyncio

    codes = asyncio.run(guess_all())
    assert codes == [200] * 8  # all wrong, none throttled yet (4 each from 8 addresses)
    assert peak[0] == 1


def test_only_this_servers_status_page_is_public_and_agent_names_cannot_be_enumerated(tmp_path: Path) -> None:
    """[web] status_public opens /status; /h/<agent>/status showed every agent's probes, and its
    404 for a name that is no agent told which names are."""
    from app.ingest import agents
    from app.storage.db import make_engine

    url = f"sqlite:///{tmp_path / 'r.db'}"
    upgrade(url)
    agents.issue(make_engine(url), "ceph1")
    cfg = load_config(None, {"host": "nas", "storage": {"url": url},
                             "web": {"listen": "0.0.0.0", "password_hash": PW_HASH, "status_public": True}})
    app = create_app(cfg, collect=False, snapshot=Snapshot(host="nas"), migrate=False)
    with TestClient(app, base_url="http://127.0.0.1", follow_redirects=False) as c:
        assert c.get("/status").status_code == 200
        answers = {path: c.get(path) for path in ("/h/ceph1/status", "/h/no-such-host/status")}
        for path, r in answers.items():
            assert r.status_code == 303 and r.headers["location"].startswith("/login"), path


def test_silences_in_force_are_capped_with_a_clear_refusal(client: TestClient) -> None:
    csrf = _csrf(client)
    a = client.app.state.get_alerting()  # type: ignore[attr-defined]
    for i in range(200):
        a.silence("bad", f"thing={i}", 1)
    r = client.post("/alerts/silence", data={"rule": "bad", "subject": "thing=x", "duration": "1h", "csrf": csrf})
    assert r.status_code == 400 and "200 silences are in force" in r.text
    assert len(client.get("/api/alerts").json()["silences"]) == 200


def test_silences_that_together_cover_every_rule_are_guarded_as_one_of_everything(client: TestClient) -> None:
    """18 silences, one per first letter of the rule names, muted every rule for 90 days without "all"
    (through the API; the form takes 30 days at most)."""
    from app.alerting.conditions import BUILTIN

    csrf = _csrf(client)
    letters = sorted({name[0] for name in BUILTIN})
    for letter in letters[:-1]:
        r = client.post("/alerts/silence", data={"rule": f"{letter}*", "subject": "", "duration": "30d", "csrf": csrf},
                        follow_redirects=False)
        assert r.status_code == 303, letter  # each alone is narrow
    last = {"rule": f"{letters[-1]}*", "subject": "", "csrf": csrf}
    r = client.post("/alerts/silence", data={**last, "duration": "30d"})
    assert r.status_code == 400 and "silences every alert" in r.text and "confirm with" in r.text
    r = client.post("/alerts/silence", data={**last, "duration": "30d", "confirm": "all"})
    assert r.status_code == 400 and "at most 7 days" in r.text
    assert len(client.get("/api/alerts").json()["silences"]) == len(letters) - 1
    assert "Every alert is silenced" not in client.get("/").text
    r = client.post("/alerts/silence", data={**last, "duration": "3d", "confirm": "all"}, follow_redirects=False)
    assert r.status_code == 303
    page = client.get("/").text
    assert "Every alert is silenced until" in page and "critical ones included" in page
