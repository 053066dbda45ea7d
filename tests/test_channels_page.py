"""/channels: notification channels added, changed, tried and removed in the browser, kept in
the database beside the config file's (read-only there), used without a restart; a channel's URL
is never shown again, a bad one is a 400 naming the field and not the URL, and nothing is stored."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.config import load_config
from app.scheduler import Snapshot
from app.storage.db import upgrade
from collectors.base import Sample
from tests.alerting.sink import Sink


@pytest.fixture
def sink() -> Iterator[Sink]:
    s = Sink()
    yield s
    s.close()


def app_with(tmp_path: Path, sink: Sink):  # type: ignore[no-untyped-def]
    from app.web.app import create_app

    url = f"sqlite:///{tmp_path / 'c.db'}"
    upgrade(url)
    cfg = load_config(None, {"host": "nas", "storage": {"url": url}, "alerts": {
        "group_wait": 0, "channels": [{"name": "from-toml", "url": f"{sink.url}/toml?token=t0ml-s3cret"}],
        "user_rules": [{"name": "bad", "metric": "rackpulse_test_bad", "op": ">", "threshold": 0,
                        "severity": "critical"}]}})
    snap = Snapshot(host="nas")
    snap.samples["x"] = [Sample.of("rackpulse_test_bad", 1, thing="md0")]
    return create_app(cfg, collect=False, snapshot=snap, migrate=False), snap


def words(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_a_channel_made_in_the_browser_is_used_at_once_and_its_url_never_shown_again(
        tmp_path: Path, sink: Sink) -> None:
    app, snap = app_with(tmp_path, sink)
    secret = f"{sink.url}/phone?token=br0wser-s3cret"

    async def scenario() -> None:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as c:
            page = (await c.get("/channels")).text
            assert "from-toml" in page and "config file" in page and "t0ml-s3cret" not in page
            token = page.split('name="csrf" value="')[1].split('"')[0]
            form = {"name": "phone", "format": "rackpulse", "url": secret, "severity_critical": "on", "csrf": token}
            assert (await c.post("/channels/add", data={**form, "csrf": "nope"})).status_code == 403
            bad = await c.post("/channels/add", data={**form, "format": "apprise", "url": "nonsense://br0wser-s3cret"})
            assert bad.status_code == 400 and "url" in bad.text and "br0wser-s3cret" not in bad.text
            quiet = await c.post("/channels/add", data={**form, "quiet_hours": "late"})
            assert quiet.status_code == 400 and "quiet_hours" in quiet.text
            # the form comes back as a page, the refusal beside its field and what was typed kept;
            # the URL is asked for again, never written into the page
            assert quiet.headers["content-type"].startswith("text/html") and 'id="err-quiet_hours"' in quiet.text
            assert 'name="name" required maxlength="64" value="phone"' in quiet.text and 'value="late"' in quiet.text
            assert 'id="err-url">type it again' in quiet.text and "br0wser-s3cret" not in quiet.text
            assert '<option value="rackpulse" selected>' in quiet.text
            clash = await c.post("/channels/add", data={**form, "name": "from-toml"})
            assert clash.status_code == 400 and "config file has a channel named" in clash.text
            assert "phone" not in words((await c.get("/channels")).text)  # nothing stored by a refusal
            assert (await c.post("/channels/add", data=form)).status_code == 303
            page = (await c.get("/channels")).text
            assert "phone" in page and ">this page</td>" in page and "br0wser-s3cret" not in page
            # Used without a restart: an alert queues for it, and it delivers.
            a = app.state.get_alerting()
            assert set(a.channels) == {"from-toml", "phone"}
            a.tick(snap)
            a.deliver()
            assert {p for p, _, _ in sink.received} == {"/toml?token=t0ml-s3cret", "/phone?token=br0wser-s3cret"}
            # Changed without typing the URL again: it is kept; only warnings now.
            saved_id = re.search(r"/channels\?edit=(\d+)", page).group(1)  # type: ignore[union-attr]
            edit = (await c.get(f"/channels?edit={saved_id}")).text
            assert "Change phone" in edit and "br0wser-s3cret" not in edit
            changed = {"name": "phone", "format": "rackpulse", "url": "", "severity_warning": "on", "csrf": token}
            assert (await c.post(f"/channels/{saved_id}/edit", data=changed)).status_code == 303
            assert app.state.get_alerting().channels["phone"].severities == ("warning",)
            assert app.state.get_alerting().channels["phone"].url == secret
            # Tried from its page: the answer is shown.
            assert (await c.post("/channels/phone/test", data={"csrf": token})).status_code == 303
            assert "delivered" in (await c.get("/channels")).text
            assert json.loads(sink.received[-1][2])["rule"] == "test"
            # Removed: gone from the page and from the alerting.
            assert (await c.post(f"/channels/{saved_id}/delete", data={"csrf": token})).status_code == 303
            assert "phone" not in app.state.get_alerting().channels
            assert ">this page</td>" not in (await c.get("/channels")).text

    asyncio.run(scenario())


def test_an_apprise_channel_shows_its_scheme_only(tmp_path: Path, sink: Sink) -> None:
    app, _ = app_with(tmp_path, sink)

    async def scenario() -> None:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as c:
            token = (await c.get("/channels")).text.split('name="csrf" value="')[1].split('"')[0]
            url = "mailtos://alice:app-pw-s3cret@smtp.example.org?to=ops@example.org"
            assert (await c.post("/channels/add", data={"name": "mail", "format": "apprise", "url": url,
                                                        "csrf": token})).status_code == 303
            page = (await c.get("/channels")).text
            assert "mailtos://" in page
            for part in ("alice", "app-pw-s3cret", "smtp.example.org", "ops@example.org"):
                assert part not in page
            api = (await c.get("/api/alerts")).text
            assert "mailtos://" in api and "app-pw-s3cret" not in api

    asyncio.run(scenario())
