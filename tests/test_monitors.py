"""Monitors made in the browser: a probe added, changed and removed on /monitors is stored in the
database (SQLite and PostgreSQL), checked by the same model as the TOML's, run by the probes
collector from its next collection without a restart, and never touches the config file's own
probes. End to end through a real `rackpulse serve` against a real TCP service."""

from __future__ import annotations

import asyncio
import http.cookiejar
import re
import socket
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from app.config import load_config
from app.demo.agent import to_toml
from app.storage.db import make_engine, upgrade
from app.storage.monitors import MonitorError, delete_monitor, list_monitors, save_monitor
from app.web.app import create_app
from app.web.monitors import parse_form
from collectors import host_context
from collectors.probes.checks.collector import ProbesCollector
from collectors.probes.checks.config import HttpProbe, TcpProbe
from tests.agent_hosts import rackpulse, stop, wait_for
from tests.peers import free_port
from tests.states import all_off


def test_a_monitor_is_stored_listed_changed_and_removed(db_url: str) -> None:
    upgrade(db_url)
    engine = make_engine(db_url)
    a = save_monitor(engine, "nas", "probes", "tcp", {"name": "ssh", "host": "10.0.0.2", "port": 22})
    save_monitor(engine, "other", "probes", "tcp", {"name": "ssh", "host": "10.0.0.9", "port": 22})  # another host
    with pytest.raises(MonitorError, match="a monitor named 'ssh' exists already"):
        save_monitor(engine, "nas", "probes", "http", {"name": "ssh", "url": "http://x/"})
    save_monitor(engine, "nas", "probes", "tcp", {"name": "ssh", "host": "10.0.0.3", "port": 2222}, a)
    (m,) = list_monitors(engine, "nas")
    assert (m.id, m.kind, m.name, m.spec) == (a, "tcp", "ssh", {"name": "ssh", "host": "10.0.0.3", "port": 2222})
    assert delete_monitor(engine, "nas", a) and list_monitors(engine, "nas") == []
    assert not delete_monitor(engine, "nas", a)
    assert [x.spec["host"] for x in list_monitors(engine, "other")] == ["10.0.0.9"]


def test_a_form_is_read_by_the_probes_own_model_defaults_left_out_and_a_bad_value_named() -> None:
    assert parse_form(TcpProbe, {"name": "db", "host": "10.0.0.5", "port": "5432", "timeout": "", "verify_tls": "on"}
                      ) == {"name": "db", "host": "10.0.0.5", "port": 5432}
    assert parse_form(HttpProbe, {"name": "nas", "url": "https://nas.lan/", "verify_tls": ""})["verify_tls"] is False
    with pytest.raises(ValidationError) as err:
        parse_form(TcpProbe, {"name": "db", "host": "10.0.0.5", "port": "70000"})
    assert err.value.errors()[0]["loc"] == ("port",)


@pytest.fixture
def service() -> Iterator[int]:
    """A real TCP service on loopback: accepts and closes, as a port check expects."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    stopping = threading.Event()

    def serve() -> None:
        srv.settimeout(0.2)
        while not stopping.is_set():
            try:
                conn, _ = srv.accept()
                conn.close()
            except OSError:
                continue

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stopping.set()
    t.join(2)
    srv.close()


def raw_config(tmp_path: Path, port: int = 9842) -> dict[str, object]:
    return {"host": "nas", "host_root": str(tmp_path / "root"), "web": {"port": port},
            "storage": {"url": f"sqlite:///{tmp_path / 'r.db'}"},
            "collectors": all_off(probes={"interval": 1, "tcp": [{"name": "from the file", "host": "127.0.0.1",
                                                                  "port": 9, "timeout": 1}]})}


def test_a_probe_made_in_the_browser_runs_from_the_next_collection_and_the_files_stay_read_only(
        tmp_path: Path, service: int) -> None:
    cfg = load_config(None, raw_config(tmp_path))
    upgrade(cfg.storage.url)
    app = create_app(cfg, collect=False, migrate=False)
    rt = app.state.runtime
    probes = ProbesCollector(cfg.collectors.probes, saved=host_context(cfg, entries=rt.saved_entries).saved)

    async def browse() -> dict[str, object]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            page = (await c.get("/monitors")).text
            token = page.split('name="csrf" value="')[1].split('"')[0]
            form = {"name": "web", "host": "127.0.0.1", "port": str(service), "timeout": "2", "verify_tls": "on",
                    "csrf": token}
            got: dict[str, object] = {"page": page}
            got["no token"] = (await c.post("/monitors/add?kind=tcp", data={**form, "csrf": "nope"})).status_code
            got["bad port"] = await c.post("/monitors/add?kind=tcp", data={**form, "port": "70000"})
            got["file's name"] = await c.post("/monitors/add?kind=tcp", data={**form, "name": "from the file"})
            got["added"] = await c.post("/monitors/add?kind=tcp", data=form)
            got["after add"] = [p.name for p in probes.collect().state.probes if p.ok]
            mid = list_monitors(rt.engine, "nas")[0].id
            got["edit page"] = (await c.get(f"/monitors?edit={mid}")).text
            closed = free_port()
            got["edited"] = await c.post(f"/monitors/{mid}/edit", data={**form, "port": str(closed)})
            got["after edit"] = {p.name: p.ok for p in probes.collect().state.probes}
            got["removed"] = await c.post(f"/monitors/{mid}/delete", data={"csrf": token})
            got["after remove"] = [p.name for p in probes.collect().state.probes]
            return got

    got = asyncio.run(browse())
    page = str(got["page"])
    assert "from the file" in page and "config file" in page and "read-only" in page
    assert "?edit=" not in page  # nothing made here yet; the file's probe has no edit link
    assert got["no token"] == 403
    bad = got["bad port"]
    assert isinstance(bad, httpx.Response) and bad.status_code == 400 and "port" in bad.text
    # the form again, with what was typed and the refusal beside its field
    assert '<label class="invalid">port' in bad.text and 'value="70000"' in bad.text and 'value="web"' in bad.text
    assert re.search(r'<small class="field-error" id="err-port">must be at most 65535</small>', bad.text)
    assert "1 field needs another look" in bad.text and "Traceback" not in bad.text
    clash = got["file's name"]
    assert isinstance(clash, httpx.Response) and clash.status_code == 400 and "config file" in clash.text
    assert 'id="err-name">the config file has a probe named' in clash.text
    added = got["added"]
    assert isinstance(added, httpx.Response) and added.status_code == 303
    assert added.headers["location"] == "/monitors?saved=web"
    assert got["after add"] == ["web"]  # the real service answers; the file's port 9 does not
    assert f'value="{service}"' in str(got["edit page"])  # the form holds what was saved
    assert got["after edit"] == {"from the file": False, "web": False}
    assert got["after remove"] == ["from the file"]
    assert list_monitors(rt.engine, "nas") == []
    assert not (tmp_path / "rackpulse.toml").exists()  # no file was written


def test_a_probe_added_to_a_running_serve_is_up_on_status_within_its_interval(tmp_path: Path, service: int) -> None:
    port = free_port()
    path = tmp_path / "rackpulse.toml"
    path.write_text(to_toml(raw_config(tmp_path, port)))
    before = path.read_text()
    proc = rackpulse("serve", "--config", str(path), log=tmp_path / "serve.log")
    base = f"http://127.0.0.1:{port}"
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    try:
        page = wait_for(lambda: browser.open(base + "/monitors", timeout=5).read().decode(), 60, "serve")
        token = re.search(r'name="csrf" value="([^"]*)"', page)
        data = {"name": "web", "host": "127.0.0.1", "port": str(service), "verify_tls": "on",
                "csrf": token[1] if token else ""}
        # it runs the probes once before it answers
        browser.open(base + "/monitors/add?kind=tcp", data=urllib.parse.urlencode(data).encode(), timeout=30)

        def up_on_status() -> bool:
            text = browser.open(base + "/status", timeout=5).read().decode()
            row = text.split(">web <", 1)[1].split("</tr>")[0] if ">web <" in text else ""
            return "up</span>" in row

        # the probes run every second here: a few intervals, not a guess
        assert wait_for(up_on_status, 10 * float(raw_config(tmp_path)["collectors"]["probes"]["interval"]),  # type: ignore[index]
                        "the new probe up on /status")
    finally:
        stop(proc)
    assert path.read_text() == before  # the TOML stays the user's


def test_a_heartbeat_made_in_the_browser_shows_its_url_once_and_the_url_takes_pings(tmp_path: Path) -> None:
    from app.storage.heartbeats import find
    from app.web import heartbeats as ping_routes
    from collectors.probes.heartbeats.collector import HeartbeatsCollector

    raw = raw_config(tmp_path)
    raw["collectors"]["heartbeats"] = [{"name": "from the file", "every": "1d"}]  # type: ignore[index]
    cfg = load_config(None, raw)
    upgrade(cfg.storage.url)
    app = create_app(cfg, collect=False, migrate=False)
    rt = app.state.runtime
    ctx = host_context(cfg, entries=rt.saved_entries, pings=rt.pings)
    beats = HeartbeatsCollector(cfg.collectors.heartbeats, ctx.pings, ctx.saved)
    ping_routes.THROTTLE._failures.clear()  # noqa: SLF001

    async def browse() -> dict[str, object]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            page = (await c.get("/monitors?kind=heartbeat")).text
            token = page.split('name="csrf" value="')[1].split('"')[0]
            got: dict[str, object] = {"page": page}
            form = {"name": "photos", "every": "6h", "grace": "30m", "csrf": token}
            got["bad span"] = await c.post("/monitors/add?kind=heartbeat", data={**form, "every": "daily"})
            got["file's name"] = await c.post("/monitors/add?kind=heartbeat", data={**form, "name": "from the file"})
            added = await c.post("/monitors/add?kind=heartbeat", data=form)
            got["added"] = added
            url = added.text.split('<code class="secret-url">')[1].split("</code>")[0]
            got["url"] = url
            got["ping"] = (await c.get(url.replace("http://127.0.0.1", ""))).status_code
            got["state"] = {b.name: b.status for b in beats.collect().state.beats}  # type: ignore[union-attr]
            got["later page"] = (await c.get("/monitors")).text
            renewed = await c.post("/monitors/heartbeat/photos/url", data={"csrf": token})
            got["renewed"] = renewed.text.split('<code class="secret-url">')[1].split("</code>")[0]
            got["old ping"] = (await c.get(url.replace("http://127.0.0.1", ""))).status_code
            got["file url"] = (await c.post("/monitors/heartbeat/from%20the%20file/url", data={"csrf": token}))
            mid = next(m.id for m in list_monitors(rt.engine, "nas") if m.name == "photos")
            assert (await c.post(f"/monitors/{mid}/delete", data={"csrf": token})).status_code == 303
            return got

    got = asyncio.run(browse())
    assert "Add a heartbeat" in str(got["page"]) and 'name="every"' in str(got["page"])
    bad = got["bad span"]
    assert isinstance(bad, httpx.Response) and bad.status_code == 400 and "every" in bad.text
    clash = got["file's name"]
    assert isinstance(clash, httpx.Response) and clash.status_code == 400 and "config file has a heartbeat" in clash.text
    added = got["added"]
    assert isinstance(added, httpx.Response) and added.status_code == 200 and "shown this once" in added.text
    assert str(got["url"]).startswith("http://127.0.0.1/ping/") and got["ping"] == 200
    assert got["state"] == {"from the file": "new", "photos": "up"}
    later = str(got["later page"]).replace("\u00a0", " ")  # "every 6\u00a0h": bound to its unit, read as a space
    assert "photos" in later and "every 6 h, grace 30 min" in later and str(got["url"]) not in later  # shown once
    assert got["old ping"] == 404 and got["renewed"] != got["url"]
    file_url = got["file url"]
    assert isinstance(file_url, httpx.Response) and file_url.status_code == 200 and "/ping/" in file_url.text
    assert find(rt.engine, str(got["renewed"]).rsplit("/", 1)[1]) is None  # removed: its URL ends too


def test_every_field_of_the_monitor_forms_is_labelled_in_words_not_by_its_key() -> None:
    """Issue 64: a form said "verify tls" and "interval ms"; a key of two words has its own words."""
    from app.web.monitors import FIELD_WORDS, KINDS, form_fields

    for kind, model in KINDS.items():
        for f in form_fields(model):
            assert "_" not in f.name or f.name in FIELD_WORDS, f"{kind}: {f.name} has no words"
    tcp = {f.name: f.label for f in form_fields(KINDS["tcp"])}
    assert tcp["verify_tls"] == "check the TLS certificate" and tcp["port"] == "port"
