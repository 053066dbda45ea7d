"""Every route and method of the app, walked as each kind of caller: nobody, a viewer, an admin,
a read token, a write token, a revoked and an expired token. The table this checks is the
guard's promise (app/web/guard.py), and a route added later is walked too."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pyotp
import pytest
from fastapi.testclient import TestClient

from app.web.guard import OWN, OWN_TOKENS, PUBLIC, SAFE
from app.web.permissions import flat, folders, table
from tests.security.test_web_guards import make_app

ADMIN, VIEWER = "alice-password", "bob-password"
ADMIN_ONLY = ("/audit", "/api/v1/audit", "/api/v1/users", "/api/v1/tokens")


def fill(path: str) -> str:
    """A route's path with its parameters filled in."""
    return re.sub(r"\{(\w+)(:path)?\}", lambda m: "1" if m[1].endswith("_id") else "x", path)


def routes(app: Any) -> list[tuple[str, str]]:
    """(method, path with its parameters filled in) of every route, and each folder of files."""
    out = []
    for r in flat(app.app.routes):
        out += [(m, fill(r.path)) for m in sorted(r.methods)]
    return out + [("GET", path) for path in folders(app.app)]


def starts(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == p.rstrip("/") or path.startswith(p) for p in prefixes)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    app = make_app(tmp_path_factory.mktemp("perm"))
    s = app.state.site
    s.users.add("alice", "admin", ADMIN)
    s.users.add("bob", "viewer", VIEWER)
    s.users.start_totp("bob")  # a pending secret: it must never show on a page
    tokens = {scope: s.tokens.create(scope, scope) for scope in ("read", "write", "admin")}
    tokens["revoked"] = s.tokens.create("revoked", "write")
    s.tokens.revoke("revoked")
    tokens["expired"] = s.tokens.create("expired", "write", expires_in=1, now=time.time() - 10)
    with TestClient(app, base_url="http://127.0.0.1", follow_redirects=False) as c:
        yield app, c, tokens


def as_user(c: TestClient, name: str, password: str) -> dict[str, str]:
    c.cookies.clear()
    r = c.post("/login", data={"user": name, "password": password})
    assert r.status_code == 303, name
    cookie = r.cookies["rackpulse_session"]
    c.cookies.clear()
    return {"Cookie": f"rackpulse_session={cookie}"}


def call(c: TestClient, method: str, path: str, headers: dict[str, str]) -> int:
    c.cookies.clear()
    return c.request(method, path, headers=headers).status_code


def test_nobody_is_sent_to_log_in_from_every_route_but_the_public_ones(lab: Any) -> None:
    app, c, _ = lab
    for method, path in routes(app):
        if starts(path, PUBLIC) or starts(path, OWN_TOKENS):
            continue
        got = call(c, method, path, {})
        want = 401 if path.startswith("/api/") else 303
        assert got == want, f"{method} {path}: {got} for nobody"


def test_a_viewer_gets_403_on_every_change(lab: Any) -> None:
    app, c, _ = lab
    viewer = as_user(c, "bob", VIEWER)
    changes = [(m, p) for m, p in routes(app) if m not in SAFE and not starts(p, OWN) and not starts(p, OWN_TOKENS)]
    assert len(changes) >= 20  # the walk sees the app's forms and the API's changes
    for method, path in changes:
        assert call(c, method, path, viewer) == 403, f"{method} {path} as a viewer"


def test_each_token_does_what_the_permission_table_says_and_a_page_is_closed_to_any_token(lab: Any) -> None:
    app, c, tokens = lab
    needed = {(m, fill(p)): n for m, p, n in table(app.app)}
    assert set(needed) == set(routes(app))  # the table has every route
    may = {"read": {"signed in"}, "write": {"signed in", "write"}, "admin": {"signed in", "write", "admin"}}
    for scope in ("read", "write", "admin"):
        bearer = {"Authorization": f"Bearer {tokens[scope]}"}
        for method, path in routes(app):
            if starts(path, PUBLIC) or starts(path, OWN_TOKENS) or starts(path, OWN):
                continue
            got = call(c, method, path, bearer)
            if not path.startswith("/api/"):
                assert got == 303, f"{method} {path} with a {scope} token: a page is not the API"
            elif needed[(method, path)] not in may[scope]:
                assert got == 403, f"{method} {path} with a {scope} token: the table says {needed[(method, path)]}"
            else:
                assert got not in (401, 403, 500), f"{method} {path} with a {scope} token: {got}"


def test_a_revoked_or_expired_token_gets_401_everywhere_in_the_api(lab: Any) -> None:
    app, c, tokens = lab
    for which in ("revoked", "expired"):
        for method, path in routes(app):
            if path.startswith("/api/") and not starts(path, OWN_TOKENS):
                got = call(c, method, path, {"Authorization": f"Bearer {tokens[which]}"})
                assert got == 401, f"{method} {path} with a {which} token: {got}"



def test_a_viewer_reads_every_page_and_sees_no_secret_and_nothing_for_admins(lab: Any) -> None:
    app, c, tokens = lab
    s = app.state.site
    viewer = as_user(c, "bob", VIEWER)
    secrets = [*tokens.values(), s.users.get("bob").totp_pending, "scrypt$", "sha256$"]
    for method, path in routes(app):
        if method != "GET" or starts(path, OWN_TOKENS) or path == "/logout":
            continue
        c.cookies.clear()
        r = c.get(path, headers=viewer)
        if path in ADMIN_ONLY:
            assert r.status_code == 403, path
            continue
        assert r.status_code < 500, f"GET {path} as a viewer: {r.status_code}"
        assert not any(x in r.text for x in secrets), f"GET {path} shows a secret to a viewer"
    # and the admin's own reading of the admin-only ones shows no secret either
    admin = as_user(c, "alice", ADMIN)
    for path in ADMIN_ONLY:
        c.cookies.clear()
        r = c.get(path, headers=admin)
        assert r.status_code == 200 and not any(x in r.text for x in secrets), path


def test_a_viewer_may_still_turn_on_their_own_two_factor(lab: Any) -> None:
    app, c, _ = lab
    viewer = as_user(c, "bob", VIEWER)
    c.cookies.clear()
    page = c.get("/account", headers=viewer).text
    csrf = page.split('name="csrf" value="')[1].split('"')[0]
    c.cookies.clear()
    r = c.post("/account/totp/start", data={"csrf": csrf}, headers=viewer)
    assert r.status_code == 200 and "<svg" in r.text
    secret = r.text.split("or type the key: <code>")[1].split("<")[0]
    c.cookies.clear()
    r = c.post("/account/totp/confirm", data={"csrf": csrf, "code": pyotp.TOTP(secret).now()}, headers=viewer)
    assert r.status_code == 200 and "recovery codes" in r.text
    assert app.state.site.users.get("bob").two_factor


def test_the_route_table_is_written_for_a_person(lab: Any, tmp_path: Path) -> None:
    app, _, _ = lab
    rows = routes(app)
    assert ("POST", "/api/v1/alerts/ack") in rows and ("POST", "/api/v1/silences") in rows
    assert ("DELETE", "/api/v1/silences/1") in rows and ("POST", "/api/v1/maintenance") in rows
    assert len(rows) >= 60


def test_the_permission_table_in_the_docs_is_the_one_the_routes_make() -> None:
    from app.docs import permissions_md

    assert (Path(__file__).parents[2] / "docs" / "permissions.md").read_text() == permissions_md(), \
        "stale: run `make docs`"


def test_a_viewer_is_refused_every_route_the_table_says_needs_more(lab: Any) -> None:
    app, c, _ = lab
    users = app.state.site.users
    if users.get("carol") is None:  # bob may have two-factor on by now (the test above)
        users.add("carol", "viewer", "carol-password")
    viewer = as_user(c, "carol", "carol-password")
    for method, path, needs in table(app.app):
        if needs in ("write", "admin"):
            assert call(c, method, fill(path), viewer) == 403, f"{method} {path} ({needs}) as a viewer"


def test_a_viewer_is_shown_no_control_that_would_answer_403(lab: Any) -> None:
    """A viewer once saw Acknowledge, Silence, Start test, and the add forms, and got a 403 (a JSON
    one) for pressing them. Every form on every page a viewer reads posts only to what a viewer
    may do (their own account, logging out); an admin sees the controls."""
    from app.web.permissions import needs

    app, c, _ = lab
    changes = [(re.compile("^" + re.sub(r"\\\{\w+(:path)?\\\}", "[^/]+", re.escape(r.path)) + "$"), r)
               for r in flat(app.app.routes) if "POST" in r.methods]
    # their own accounts: the module's bob and alice have logged in often enough to be slowed down
    app.state.site.users.add("vera", "viewer", VIEWER)
    app.state.site.users.add("adam", "admin", ADMIN)
    viewer, admin = as_user(c, "vera", VIEWER), as_user(c, "adam", ADMIN)

    def refused_actions(headers: dict[str, str]) -> list[tuple[str, str]]:
        found = []
        for method, path in routes(app):
            if method != "GET" or starts(path, OWN_TOKENS) or path.startswith("/api/") or path in ADMIN_ONLY:
                continue
            c.cookies.clear()
            page = c.get(path, headers=headers)
            if page.status_code != 200 or "text/html" not in page.headers.get("content-type", ""):
                continue
            for action in re.findall(r'<form[^>]*method="post"[^>]*action="([^"?]+)', page.text):
                for rx, route in changes:
                    if rx.match(action) and needs("POST", action, route) in ("write", "admin"):
                        found.append((path, action))
        return found

    assert refused_actions(viewer) == []
    assert any(action == "/monitors/add" for _, action in refused_actions(admin))  # the admin's are there
