"""Heartbeats through a real `rackpulse serve`: `rackpulse heartbeats url` gives a job its URL;
the job pings, then misses its period plus grace (heartbeat_missed fires once); a /fail with
its log fires heartbeat_failed with the log's last line; a late ping clears it. Unknown tokens
are a 404, huge bodies a 413, a flood from one address a 429; no login is needed to ping."""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from app.demo.agent import to_toml
from tests.agent_hosts import get_json, rackpulse, stop, wait_for
from tests.alerting.sink import Sink
from tests.cli import run_cli
from tests.peers import free_port
from tests.states import all_off

INTERVAL = 0.5  # the heartbeats collector's and the alerts' interval, in seconds
EVERY, GRACE = 2.0, 1.0  # the job's period and how late it may be


def hit(url: str, body: bytes | None = None) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=body), timeout=10) as r:  # noqa: S310 - loopback
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def refused_by_its_length(url: str, length: int) -> int:
    """The answer to a POST that declares a body of `length` bytes, read before sending any of it.

    The server refuses on Content-Length alone and closes: a client still writing 2 MB then gets
    a broken pipe or a reset, before or instead of the 413, depending on the machine's timing."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname or "127.0.0.1", u.port, timeout=10)
    try:
        conn.putrequest("POST", u.path)
        conn.putheader("Content-Length", str(length))
        conn.endheaders()
        return int(conn.getresponse().status)
    finally:
        conn.close()


def test_a_job_that_pings_misses_fails_with_its_log_and_pings_again(tmp_path: Path) -> None:
    port, sink = free_port(), Sink()
    cfg = {"host": "nas", "host_root": str(tmp_path), "web": {"port": port},
           "storage": {"url": f"sqlite:///{tmp_path / 'r.db'}"},
           "collectors": {**all_off(),
                          "heartbeats": {"interval": INTERVAL, "checks": [
                              {"name": "nightly-backup", "every": EVERY, "grace": GRACE}]}},
           "alerts": {"interval": INTERVAL, "group_wait": 0, "base_url": f"http://127.0.0.1:{port}",
                      "channels": [{"name": "hook", "url": f"{sink.url}/hook"}]}}
    path = tmp_path / "rackpulse.toml"
    path.write_text(to_toml(cfg))
    issued = run_cli("heartbeats", "url", "nightly-backup", "--config", str(path))
    assert issued.returncode == 0, issued.stderr
    url = issued.stdout.strip()
    assert url.startswith(f"http://127.0.0.1:{port}/ping/") and "curl -fsS" in issued.stderr
    assert run_cli("heartbeats", "url", "nosuch", "--config", str(path)).returncode == 2
    proc = rackpulse("serve", "--config", str(path), log=tmp_path / "serve.log")
    base = f"http://127.0.0.1:{port}"
    deadline = 60.0  # start-up; then everything here takes a few intervals and EVERY + GRACE

    def told() -> list[tuple[str, str]]:
        return [(d["state"], d["rule"]) for d in (json.loads(b) for _, _, b in list(sink.received))]

    def summary(rule: str) -> str:
        return next(json.loads(b)["summary"] for _, _, b in reversed(sink.received) if json.loads(b)["rule"] == rule)

    try:
        wait_for(lambda: hit(f"{base}/healthz") == 200, deadline, "serve")
        assert hit(url) == 200 and hit(url + "/start") == 200 and hit(url) == 200
        assert hit(f"{base}/ping/not-a-token") == 404 and hit(url + "/other") == 404
        assert refused_by_its_length(url + "/fail", 2 * 1024 * 1024) == 413
        wait_for(lambda: ("firing", "heartbeat_missed") in told(), deadline, "heartbeat_missed")
        assert "job nightly-backup missed: last ping" in summary("heartbeat_missed")
        time.sleep(4 * INTERVAL)
        assert told().count(("firing", "heartbeat_missed")) == 1  # once, however long it stays missed
        log = b"rsync: writing to /srv/backup\nrsync error: some files could not be transferred (code 23)\n"
        assert hit(url + "/fail", log) == 200
        wait_for(lambda: ("firing", "heartbeat_failed") in told(), deadline, "heartbeat_failed")
        assert summary("heartbeat_failed").endswith("rsync error: some files could not be transferred (code 23)")
        # A failed run is not a missed one (told in the same evaluation, just after the failure).
        wait_for(lambda: ("resolved", "heartbeat_missed") in told(), deadline, "heartbeat_missed resolved")
        page = urllib.request.urlopen(f"{base}/probes", timeout=10).read().decode()  # noqa: S310
        assert "nightly-backup" in page and "rsync: writing to /srv/backup" in page  # its log, on the page
        assert hit(url) == 200  # it ran again
        wait_for(lambda: ("resolved", "heartbeat_failed") in told(), deadline, "heartbeat_failed resolved")
        state = get_json(f"{base}/api/state")["states"]["heartbeats"]["beats"][0]
        assert state["status"] in ("up", "late") and state["last_success"] is not None
    finally:
        stop(proc)
        sink.close()
