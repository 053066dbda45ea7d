"""A browser gets pages, scripts get JSON: every error an HTML request meets is a page in the
site's layout saying what happened and what to do, and never an exception's name or traceback;
/api keeps its one JSON shape whatever the caller accepts."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.security.test_web_guards import make_app

HTML = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}  # a browser's navigation


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, TestClient]]:
    app = make_app(tmp_path_factory.mktemp("errors"), password=False)
    with TestClient(app, base_url="http://127.0.0.1", follow_redirects=False, raise_server_exceptions=False) as c:
        yield app, c


def test_a_page_that_is_not_there_is_a_page_saying_so_in_the_sites_layout(lab) -> None:
    _, c = lab
    r = c.get("/disks/NOSUCHSERIAL/replace", headers=HTML)
    assert r.status_code == 404 and r.headers["content-type"].startswith("text/html")
    assert "<h1>Not found</h1>" in r.text
    assert "no disk &#39;NOSUCHSERIAL&#39; in a disk, array, pool or controller this host reports" in r.text
    assert "The overview shows what there is now" in r.text
    assert "<nav" in r.text  # the site's layout: the way on is one click away
    assert '"detail"' not in r.text


def test_a_script_asking_the_same_page_gets_fastapis_json_as_before(lab) -> None:
    _, c = lab
    r = c.get("/disks/NOSUCHSERIAL/replace", headers={"Accept": "application/json"})
    assert r.status_code == 404 and r.json() == {
        "detail": "no disk 'NOSUCHSERIAL' in a disk, array, pool or controller this host reports"}


def test_the_api_answers_json_even_to_a_browser(lab) -> None:
    _, c = lab
    r = c.get("/api/v1/disks/NOSUCHSERIAL", headers=HTML)
    assert r.status_code == 404 and r.json()["error"]["status"] == 404


def test_a_form_with_a_field_that_is_not_a_number_names_the_field_in_words(lab) -> None:
    _, c = lab
    r = c.get("/alerts", headers=HTML)
    csrf = r.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    r = c.post("/alerts/silence", data={"csrf": csrf, "rule": "bad", "subject": "a", "hours": "lots"}, headers=HTML)
    assert r.status_code in (400, 422) and r.headers["content-type"].startswith("text/html")
    assert "what you typed is still in the form" in r.text
    assert "Traceback" not in r.text and "ValidationError" not in r.text


def test_a_page_that_fails_to_draw_says_so_without_its_traceback(lab) -> None:
    app, c = lab

    @app.app.get("/boom")
    def boom() -> None:
        raise RuntimeError("db password is hunter2")

    r = c.get("/boom", headers=HTML)
    assert r.status_code == 500 and "<h1>Something went wrong here</h1>" in r.text
    assert "This page failed to draw." in r.text and "The server&#39;s log says what went wrong" in r.text
    assert "hunter2" not in r.text and "RuntimeError" not in r.text and "Traceback" not in r.text
    assert c.get("/boom", headers={"Accept": "*/*"}).text == "Internal Server Error"


def test_an_error_page_that_cannot_draw_its_layout_is_drawn_bare_with_the_same_words(lab) -> None:
    from starlette.requests import Request

    from app.web import error_pages

    class Broken:
        def render(self, *args: object, **kwargs: object) -> None:
            raise OSError("database away")

    req = Request({"type": "http", "method": "GET", "path": "/x", "headers": [], "query_string": b""})
    r = error_pages.page(Broken(), req, 404, "no <disk> here", [("port", "must be at most 65535")])
    body = r.body.decode()
    assert r.status_code == 404 and "<h1>Not found</h1>" in body and "no &lt;disk&gt; here" in body
    assert "<strong>port</strong>: must be at most 65535" in body and "OSError" not in body


def test_validation_errors_read_as_words_about_the_field() -> None:
    from app.web.error_pages import field_errors

    said = field_errors([{"loc": ("body", "port"), "msg": "Input should be less than or equal to 65535"},
                         {"loc": ("query", "hours"), "msg": "Field required"}, {"loc": (), "msg": "bad"}])
    assert said == [("port", "must be at most 65535"), ("hours", "needed"), ("request", "bad")]


def test_only_a_browsers_request_for_a_page_is_answered_with_html() -> None:
    from starlette.requests import Request

    from app.web.error_pages import wants_html

    def req(path: str, accept: str, base: str = "") -> Request:
        return Request({"type": "http", "method": "GET", "path": path, "query_string": b"",
                        "headers": [(b"accept", accept.encode())], "rackpulse_base": base})

    assert wants_html(req("/disks/x", HTML["Accept"]))
    assert not wants_html(req("/disks/x", "*/*")) and not wants_html(req("/disks/x", "application/json"))
    for path in ("/api/v1/disks", "/metrics", "/ingest", "/ping/abc", "/healthz", "/static/app.css"):
        assert not wants_html(req(path, HTML["Accept"])), path
    assert not wants_html(req("/h/nas2/api/v1/disks", HTML["Accept"], base="/h/nas2"))
    assert wants_html(req("/h/nas2/disks", HTML["Accept"], base="/h/nas2"))


def test_a_viewer_pressing_a_button_meant_for_admins_gets_a_page_saying_why(tmp_path: Path) -> None:
    app = make_app(tmp_path, password=True)
    app.state.site.users.add("bob", "viewer", "bob-password")
    with TestClient(app, base_url="http://127.0.0.1", follow_redirects=False) as c:
        assert c.post("/login", data={"user": "bob", "password": "bob-password"}).status_code == 303
        r = c.post("/alerts/ack", data={"rule": "bad", "subject": "a"}, headers=HTML)
        assert r.status_code == 403 and r.headers["content-type"].startswith("text/html")
        assert "<h1>Not allowed</h1>" in r.text and "Read-only: a viewer cannot change anything." in r.text
        assert "You are signed in as a viewer" in r.text and '{"error"' not in r.text
        # a script with the same session still reads the API's one shape
        r = c.post("/alerts/ack", data={"rule": "bad", "subject": "a"})
        assert r.status_code == 403 and r.json()["error"]["status"] == 403


def test_every_page_is_reachable_from_the_navigation_and_the_header_says_there_is_no_login(lab) -> None:
    _, c = lab
    page = c.get("/", headers=HTML).text
    nav = page.split('<nav id="pages"', 1)[1].split("</nav>", 1)[0]
    for href in ("/monitors", "/status", "/channels", "/alerts", "/events", "/hosts", "/collectors", "/energy",
                 "/users"):
        assert f'href="{href}"' in nav, href
    assert 'href="/audit"' not in nav  # no login: no audit of who did what, no link to it
    # in three groups: what this host has, what happened, setting up
    groups = [g.split('aria-label="', 1)[1].split('"', 1)[0] for g in nav.split('<span class="group"')[1:]]
    assert groups == ["This host", "What happened", "Setting up"]
    assert 'href="/alerts"' in nav.split('aria-label="What happened"')[1].split("</span>")[0]
    # the header says there is no login, and leads to where one is set up
    assert '<a class="account open-access" href="/users#add"' in page and "No login · this machine only" in page
    assert 'href="/disks/all"' in c.get("/disks", headers=HTML).text


def test_a_viewer_sees_no_channels_or_audit_link_and_an_admin_sees_both(tmp_path: Path) -> None:
    app = make_app(tmp_path, password=True)
    app.state.site.users.add("bob", "viewer", "bob-password")
    app.state.site.users.add("alice", "admin", "alice-password")
    with TestClient(app, base_url="http://127.0.0.1", follow_redirects=False) as c:
        for user, sees in (("bob", False), ("alice", True)):
            c.cookies.clear()
            assert c.post("/login", data={"user": user, "password": f"{user}-password"}).status_code == 303
            page = c.get("/", headers=HTML).text
            nav = page.split('<nav id="pages"', 1)[1].split("</nav>", 1)[0]
            assert ('href="/channels"' in nav) is sees and ('href="/audit"' in nav) is sees, user
            assert 'href="/monitors"' in nav and "No login" not in page


def test_the_account_page_without_a_login_says_how_to_set_one_up(lab) -> None:
    _, c = lab
    page = c.get("/account", headers=HTML).text
    assert "<h2>Setting up a login</h2>" in page
    assert "rackpulse users add NAME --role admin" in page and 'href="/login"' in page and "web.listen" in page


def test_the_replacement_page_of_a_disk_that_moved_on_says_where_it_was_and_what_is_there_now(
        tmp_path: Path) -> None:
    from tests.test_web import demo_app, fetch

    # the story's failed disk, seen at t=0 in shelf 1, bay 7: while md0 rebuilds onto the disk that
    # took its bay, the replacement page stays, at its last step
    rebuilding = fetch(demo_app(tmp_path, 185.0, runs=2), "/disks/ZA1049HK/replace", headers=HTML)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", rebuilding.text))
    assert rebuilding.status_code == 200 and "shelf 1, bay 7 holds ZR9Q0NEWK now, and md0 is rebuilding onto it" in text
    assert re.search(r"\d+\.\d % done", text) and "Keep the old disk, ZA1049HK, until md0 is whole again" in text
    # once it is whole, the old disk's address says where it was and what is there now
    app = demo_app(tmp_path, 230.0, runs=2)
    r = fetch(app, "/disks/ZA1049HK/replace", headers=HTML)
    assert r.status_code == 404 and "<h1>Not found</h1>" in r.text
    assert "it was last seen in shelf 1, bay 7, which holds" in r.text
    now = re.search(r'<a href="/disks/(\w+)">Disk \w+, in shelf 1, bay 7 now</a>', r.text)
    assert now is not None and now[1] != "ZA1049HK"
    assert fetch(app, f"/disks/{now[1]}", headers=HTML).status_code == 200  # the link leads somewhere
    assert '<a href="/disks/ZA1049HK">Disk ZA1049HK: its history</a>' in r.text
    # a script gets the same words in FastAPI's JSON
    assert "last seen in shelf 1, bay 7" in fetch(app, "/disks/ZA1049HK/replace").json()["detail"]
