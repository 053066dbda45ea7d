"""A new install's overview lists what is still to do before rackpulse can help on the day a disk
fails (a channel tried, a probe, a login; bay labels where disks have none), each item linking to
its form, and each goes once it is done (issue 64)."""

from __future__ import annotations

import asyncio
import re
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

from app.config import load_config
from app.scheduler import Scheduler, Snapshot
from app.storage.db import upgrade
from app.web.app import create_app
from collectors import build_collectors, host_context
from tests.test_web import fetch, replay_in_process


class Hook(BaseHTTPRequestHandler):
    """A webhook receiver that takes every notification."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *_: object) -> None:
        pass


def steps_on(html: str) -> list[tuple[str, str]]:
    """The first steps drawn on the overview, as (link words, where it goes)."""
    if 'aria-label="First steps"' not in html:
        return []
    section = html.split('aria-label="First steps"', 1)[1].split("</section>", 1)[0]
    return [(text, href) for href, text in re.findall(r'<li><a href="([^"]*)">([^<]*)</a>', section)]


def test_a_new_install_lists_its_first_steps_and_each_one_goes_once_it_is_done(tmp_path: Path) -> None:
    hook = HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    try:
        cfg = load_config(None, {
            "host": "nas", "storage": {"url": url},
            "alerts": {"channels": [{"name": "phone", "url": f"http://127.0.0.1:{hook.server_port}/hook"}]},
            "collectors": {"probes": {"enabled": True,
                                      "tcp": [{"name": "hook", "host": "127.0.0.1", "port": hook.server_port}]}}})
        upgrade(url)
        snap = Snapshot(host=cfg.host)
        app = create_app(cfg, collect=False, snapshot=snap, migrate=False)
        site = app.state.site
        assert steps_on(fetch(app, "/").text) == [
            ("add a channel and send a test", "/channels"), ("add a probe", "/monitors"), ("set a login", "/users")]

        ok, said = site.alerting_for("nas").try_channel("phone")  # a real delivery to the receiver
        assert ok, said
        assert [s for s, _ in steps_on(fetch(app, "/").text)] == ["add a probe", "set a login"]

        colls = build_collectors(cfg, replay_in_process, host_context(cfg, site.saved_bays))
        sched = Scheduler({"probes": colls["probes"]}, {"probes": (60, 30)}, snap)
        asyncio.run(sched.run_all_once())  # the probe's first run: it is on /status now
        assert [s for s, _ in steps_on(fetch(app, "/").text)] == ["set a login"]

        site.users.add("admin", "admin", "a long enough password")
        assert site.steps.todo(site, snap, []) == []  # the overview is behind the login now, with nothing to do
        assert fetch(app, "/").status_code == 303
    finally:
        hook.shutdown()


def test_disks_without_a_bay_label_are_the_first_step_linking_to_the_first_disks_page(tmp_path: Path) -> None:
    from tests.test_web import demo_app

    app = demo_app(tmp_path, 0, extra={"disks": {"bays": []}})
    html = fetch(app, "/").text
    (todo, href), *_ = steps_on(html)
    assert todo == "set a bay label" and re.fullmatch(r"/disks/[A-Z0-9]+", href)
    assert "14 disks have no bay label" in html
