"""/users: an admin manages people in the browser. Each form answers with the page, a refusal
beside its field or row with what was typed kept; a viewer gets neither the page nor the link."""

from __future__ import annotations

from pathlib import Path

import pyotp
from fastapi.testclient import TestClient

from tests.security.test_people import ALICE, BOB, csrf_of, log_in, people
from tests.security.test_web_guards import make_app


def signed_in(tmp_path: Path, user: str = "alice", password: str = ALICE) -> tuple[TestClient, object]:
    app = make_app(tmp_path)
    people(app)
    c = TestClient(app, base_url="http://127.0.0.1", follow_redirects=False)
    c.__enter__()
    assert log_in(c, user, password) == 303
    return c, app


def test_an_admin_adds_a_viewer_who_can_then_sign_in(tmp_path: Path) -> None:
    c, app = signed_in(tmp_path)
    with c:
        r = c.post("/users", data={"csrf": csrf_of(c), "name": "carol", "role": "viewer",
                                   "password": "carol-password", "again": "carol-password"})
        assert r.status_code == 200 and "carol added as viewer." in r.text
        assert '<th scope="row">carol</th><td data-label="Role">viewer</td>' in r.text
        audit = c.get("/audit").text
    assert "added a user" in audit and "user carol (viewer)" in audit
    with TestClient(app, base_url="http://127.0.0.1", follow_redirects=False) as other:  # type: ignore[arg-type]
        assert log_in(other, "carol", "carol-password") == 303
        assert other.get("/api/v1/whoami").json()["role"] == "viewer"


def test_a_bad_new_user_comes_back_beside_each_field_with_the_name_kept_and_no_password(tmp_path: Path) -> None:
    c, app = signed_in(tmp_path)
    with c:
        r = c.post("/users", data={"csrf": csrf_of(c), "name": "carol smith", "role": "root",
                                   "password": "short", "again": "short"})
        assert r.status_code == 400
        assert 'value="carol smith"' in r.text and 'value="short"' not in r.text
        assert 'id="err-name">user name' in r.text and 'id="err-password">use at least 8 characters' in r.text
        assert "role &#39;root&#39;: one of admin, viewer" in r.text
        r = c.post("/users", data={"csrf": csrf_of(c), "name": "carol", "role": "viewer",
                                   "password": "carol-password", "again": "carol-passwort"})
        assert r.status_code == 400 and 'id="err-again">the two passwords differ' in r.text
        r = c.post("/users", data={"csrf": csrf_of(c), "name": "bob", "role": "viewer",
                                   "password": "bob-password2", "again": "bob-password2"})
        assert r.status_code == 400 and 'id="err-name">bob exists already' in r.text
    assert app.state.site.users.get("carol") is None  # nothing half-made


def test_an_admin_changes_a_role_sets_a_password_and_ends_sessions_of_someone_else(tmp_path: Path) -> None:
    c, app = signed_in(tmp_path)
    users = app.state.site.users
    with c, TestClient(app, base_url="http://127.0.0.1", follow_redirects=False) as bobs:  # type: ignore[arg-type]
        assert log_in(bobs, "bob", BOB) == 303
        r = c.post("/users/bob/role", data={"csrf": csrf_of(c), "role": "admin"})
        assert r.status_code == 200 and "bob is now admin; their sessions have ended." in r.text
        assert users.get("bob").role == "admin"
        assert bobs.get("/api/v1/whoami").status_code == 401  # his session ended with the change
        r = c.post("/users/bob/password", data={"csrf": csrf_of(c), "password": "new-bob-password"})
        assert r.status_code == 200 and users.verify("bob", "new-bob-password") is not None
        assert log_in(bobs, "bob", "new-bob-password") == 303
        assert c.post("/users/bob/sessions", data={"csrf": csrf_of(c)}).status_code == 200
        assert bobs.get("/api/v1/whoami").status_code == 401
        r = c.post("/users/bob/password", data={"csrf": csrf_of(c), "password": "short"})
        assert r.status_code == 400 and '<p class="field-error" role="alert">use at least 8 characters</p>' in r.text


def test_a_lost_phone_is_answered_by_turning_off_that_users_second_factor(tmp_path: Path) -> None:
    c, app = signed_in(tmp_path)
    users = app.state.site.users
    users.confirm_totp("bob", pyotp.TOTP(users.start_totp("bob")).now())
    with c:
        assert ">Turn off two-factor</button>" in c.get("/users").text
        r = c.post("/users/bob/two-factor", data={"csrf": csrf_of(c)})
        assert r.status_code == 200 and "second factor is off" in r.text
    assert not users.get("bob").two_factor


def test_an_admin_removes_someone_but_never_themselves_from_the_page(tmp_path: Path) -> None:
    c, app = signed_in(tmp_path)
    users = app.state.site.users
    with c:
        page = c.get("/users").text
        assert "you: <a href=\"/account\">your account</a>" in page and 'action="/users/alice/remove"' not in page
        r = c.post("/users/alice/remove", data={"csrf": csrf_of(c)})  # sent by hand all the same
        assert r.status_code == 400 and "are changed on your account page; your role and your removal, by another admin" in r.text
        assert users.get("alice") is not None
        r = c.post("/users/bob/remove", data={"csrf": csrf_of(c)})
        assert r.status_code == 200 and "bob removed" in r.text and users.get("bob") is None
        r = c.post("/users/bob/remove", data={"csrf": csrf_of(c)})
        assert r.status_code == 404 and "There is no user bob" in r.text
        assert r.headers["content-type"].startswith("text/html")


def test_the_last_admin_cannot_be_demoted_from_the_page_when_no_other_way_in_remains(tmp_path: Path) -> None:
    app = make_app(tmp_path, password=False)  # no config password: the users are the only way in
    app.state.site.users.add("alice", "admin", ALICE)
    with TestClient(app, base_url="http://127.0.0.1", follow_redirects=False) as c:
        app.state.site.users.add("root2", "admin", "root2-password")
        assert log_in(c, "root2", "root2-password") == 303
        app.state.site.users.remove("root2", other_login=True)  # removed under their feet: back to one admin
        assert log_in(c, "alice", ALICE) == 303
        app.state.site.users.add("ops", "viewer", "ops-password")
        r = c.post("/users/ops/role", data={"csrf": csrf_of(c), "role": "admin"})
        assert r.status_code == 200
        r = c.post("/users/ops/role", data={"csrf": csrf_of(c), "role": "viewer"})
        assert r.status_code == 200  # alice stays: never the last
    assert app.state.site.users.admins() == 1


def test_a_viewer_gets_neither_the_users_page_nor_its_link(tmp_path: Path) -> None:
    c, app = signed_in(tmp_path, "bob", BOB)
    with c:
        assert 'href="/users"' not in c.get("/alerts").text
        r = c.get("/users", headers={"accept": "text/html"})
        assert r.status_code == 403 and "for admins only" in r.text and 'href="/users"' not in r.text
        r = c.post("/users", data={"csrf": csrf_of(c), "name": "eve", "role": "admin",
                                   "password": "eve-password", "again": "eve-password"})
        assert r.status_code == 403
        assert c.post("/users/alice/remove", data={"csrf": csrf_of(c)}).status_code == 403
    assert app.state.site.users.get("eve") is None and app.state.site.users.get("alice") is not None


def test_with_login_off_the_first_user_added_turns_login_on(tmp_path: Path) -> None:
    app = make_app(tmp_path, password=False)
    with TestClient(app, base_url="http://127.0.0.1", follow_redirects=False) as c:
        page = c.get("/users").text
        assert "Login is off" in page and 'value="admin" checked' in page
        assert 'href="/users#add"' in c.get("/account").text
        r = c.post("/users", data={"csrf": csrf_of(c), "name": "alice", "role": "admin",
                                   "password": ALICE, "again": ALICE})
        assert r.status_code == 200 and "Login is now on: sign in as alice" in r.text
        app.state.site.users.changed()
        assert c.get("/users").status_code in (302, 303, 401)  # from now on, signed in or nothing
