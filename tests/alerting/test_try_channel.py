"""Trying a channel: `rackpulse notify-test CHANNEL` and the alerts page's "Send test" button
(behind CSRF) send a test notification now and say what the service answered, never the URL;
the Deliveries table shows per channel the last success, the last error and what waits."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.config import load_config
from app.demo.agent import to_toml
from app.storage.db import upgrade
from tests.alerting.sink import Sink
from tests.cli import run_cli
from tests.peers import free_port
from tests.peers.smtp import SmtpPeer


@pytest.fixture
def sink() -> Iterator[Sink]:
    s = Sink()
    yield s
    s.close()


def write(tmp: Path, channels: list[dict[str, object]]) -> Path:
    path = tmp / "rackpulse.toml"
    path.write_text(to_toml({"host": "nas", "storage": {"url": f"sqlite:///{tmp / 'r.db'}"},
                             "alerts": {"channels": channels}}))
    return path


def test_notify_test_sends_to_a_webhook_and_says_what_it_answered(tmp_path: Path, sink: Sink) -> None:
    path = write(tmp_path, [{"name": "hook", "url": f"{sink.url}/hook?token=s3cr3t"}])
    r = run_cli("notify-test", "hook", "--config", str(path))
    assert r.returncode == 0 and r.stdout.strip() == "channel hook (rackpulse): delivered: HTTP 204"
    (doc,) = [json.loads(b) for _, _, b in sink.received]
    assert doc["rule"] == "test" and doc["host"] == "nas" and "test notification to channel hook" in doc["summary"]
    sink.mode = "fail"
    r = run_cli("notify-test", "hook", "--config", str(path))
    assert r.returncode == 1 and "failed: HTTP 503" in r.stdout and "s3cr3t" not in r.stdout + r.stderr


def test_notify_test_of_an_unknown_channel_names_the_ones_there(tmp_path: Path, sink: Sink) -> None:
    r = run_cli("notify-test", "pager", "--config", str(write(tmp_path, [{"name": "hook", "url": sink.url}])))
    assert r.returncode == 2 and "no channel 'pager'" in r.stderr and "there: hook" in r.stderr


def test_notify_test_by_email_arrives_and_a_refusal_is_said_without_the_url(tmp_path: Path) -> None:
    smtp = SmtpPeer(tmp_path / "mail", free_port(), refuse=1)
    url = f"mailto://127.0.0.1:{smtp.port}?from=rackpulse@nas.example&to=ops@mail.example"
    path = write(tmp_path, [{"name": "mail", "format": "apprise", "url": url, "timeout": 10}])
    try:
        refused = run_cli("notify-test", "mail", "--config", str(path))
        sent = run_cli("notify-test", "mail", "--config", str(path))
    finally:
        smtp.stop()
    assert refused.returncode == 1 and "channel mail (apprise): failed: mailto://" in refused.stdout
    assert sent.returncode == 0 and sent.stdout.strip() == "channel mail (apprise): delivered: mailto:// accepted it"
    (mail,) = smtp.messages()
    assert mail["Subject"].startswith("[rackpulse] INFO Test mail: ")
    for said in (refused.stdout + refused.stderr, sent.stdout + sent.stderr):
        assert "ops@mail.example" not in said and str(smtp.port) not in said


def test_the_send_test_button_needs_the_csrf_token_and_shows_the_answer_and_the_queue(
        tmp_path: Path, sink: Sink) -> None:
    from app.web.app import create_app

    url = f"sqlite:///{tmp_path / 'c.db'}"
    upgrade(url)
    cfg = load_config(None, {"host": "nas", "storage": {"url": url}, "alerts": {"channels": [
        {"name": "hook", "url": f"{sink.url}/hook?token=s3cr3t"}]}})
    app = create_app(cfg, collect=False, migrate=False)

    async def scenario() -> None:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as c:
            page = (await c.get("/alerts")).text
            table = page.split('<table class="channels">')[1].split("</table>")[0]
            assert "hook" in table and "never" in table and "Send test" in table
            token = page.split('name="csrf" value="')[1].split('"')[0]
            assert (await c.post("/alerts/channels/hook/test", data={"csrf": "nope"})).status_code == 403
            assert not sink.received
            assert (await c.post("/alerts/channels/none/test", data={"csrf": token})).status_code == 404
            sink.mode = "fail"
            assert (await c.post("/alerts/channels/hook/test", data={"csrf": token})).status_code == 303
            page = (await c.get("/alerts")).text
            assert "failed" in page and "HTTP 503" in page
            sink.mode = "ok"
            assert (await c.post("/alerts/channels/hook/test", data={"csrf": token})).status_code == 303
            page = (await c.get("/alerts")).text
            assert "delivered" in page and "HTTP 204" in page and "s3cr3t" not in page
            api = (await c.get("/api/alerts")).json()
            (health,) = api["channels"]
            assert health["name"] == "hook" and health["waiting"] == 0 and health["trial"][1] is True
            assert "s3cr3t" not in json.dumps(api)

    asyncio.run(scenario())
    assert len(sink.received) == 1


def test_the_deliveries_table_says_what_waits_and_the_last_error(tmp_path: Path, sink: Sink) -> None:
    from app.alerting.channels import Channel
    from app.alerting.service import Alerting
    from app.storage.db import make_engine
    from tests.alerting.test_grouping import RULE, bad

    url = f"sqlite:///{tmp_path / 'a.db'}"
    upgrade(url)
    a = Alerting(make_engine(url), "nas", {}, [RULE], [Channel("hook", sink.url), Channel("other", sink.url)])
    sink.mode = "fail"
    a.tick(bad("md0", "sdc"), now=1_790_000_000.0)
    hook = next(h for h in a.channel_health() if h["name"] == "hook")
    assert (hook["waiting"], hook["last_success"], hook["last_error"]) == (2, None, "HTTP 503")
    sink.mode = "ok"
    a.deliver(now=1_790_000_000.0 + 600)
    hook = next(h for h in a.channel_health() if h["name"] == "hook")
    assert hook["waiting"] == 0 and hook["last_success"] is not None and hook["kind"] == "rackpulse"
