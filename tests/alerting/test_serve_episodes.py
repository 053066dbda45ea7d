"""End to end: a real `rackpulse serve` watching a fixture host whose array fails, heals and
fails again, notifying a real HTTP receiver in every webhook format. Each format gets firing,
resolved, firing, and nothing more over the next 20 evaluations; the alerts page lists the
new episode under "Now" and acknowledging it works."""

from __future__ import annotations

import http.cookiejar
import json
import re
import urllib.parse
import urllib.request
from pathlib import Path

from app.alerting.channels import FORMATS
from app.demo.agent import to_toml
from tests.agent_hosts import get_json, rackpulse, stop, wait_for
from tests.alerting.sink import Sink
from tests.peers import free_port

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "mdstat"
FAILED = (FIXTURES / "nagios-plugin-check_raid__mdstat__mdstat-failed").read_text()
# The same array with its third member back (what mdstat shows once the rebuild is over).
HEALED = FAILED.replace("sdc1[3](F)", "sdc1[3]").replace("[3/2] [U_U]", "[3/3] [UUU]")


def status_of(fmt: str, body: bytes) -> str:
    """firing or resolved, read the way each receiver would read it."""
    if fmt == "rackpulse":
        return json.loads(body)["state"]
    if fmt == "alertmanager":
        return json.loads(body)["status"]
    text = body.decode()
    if fmt in ("gotify", "discord", "slack"):
        doc = json.loads(body)
        text = doc.get("message") or doc.get("content") or doc.get("text")
    return "resolved" if text.startswith(("RESOLVED", "resolved")) else "firing"


def config(tmp: Path, port: int, sink: Sink) -> Path:
    off = {"enabled": False}
    channels = [{"name": f, "url": f"{sink.url}/{f}", "format": f, "timeout": 5,
                 **({"template": "{{ status }} {{ event.rule }} {{ event.subject }}"} if f == "template" else {})}
                for f in FORMATS]
    cfg = {"host": "nas", "host_root": str(tmp / "root"), "web": {"port": port},
           "storage": {"url": f"sqlite:///{tmp / 'r.db'}"},
           "collectors": {**{n: off for n in ("smart", "frr", "bonding", "openvpn", "snmp", "nut", "hwmon",
                                              "heatpump")},
                          "mdraid": {"interval": 0.3, "detail": False}},
           "alerts": {"interval": 0.3, "group_wait": 0, "channels": channels}}
    path = tmp / "rackpulse.toml"
    path.write_text(to_toml(cfg))
    return path


def test_fail_heal_fail_notifies_firing_resolved_firing_in_every_format_and_nothing_else(tmp_path: Path) -> None:
    mdstat = tmp_path / "root" / "proc" / "mdstat"
    mdstat.parent.mkdir(parents=True)
    mdstat.write_text(FAILED)
    sink, port = Sink(), free_port()
    proc = rackpulse("serve", "--config", str(config(tmp_path, port, sink)), log=tmp_path / "serve.log")
    base = f"http://127.0.0.1:{port}"

    def statuses() -> dict[str, list[str]]:
        return {f: [status_of(f, b) for p, _, b in list(sink.received) if p == f"/{f}"] for f in FORMATS}

    def each_has(n: int) -> bool:
        return all(len(v) >= n for v in statuses().values())

    try:
        wait_for(lambda: each_has(1), 60, "the first firing in every format")
        mdstat.write_text(HEALED)
        wait_for(lambda: each_has(2), 30, "the resolved in every format")
        mdstat.write_text(FAILED)
        wait_for(lambda: each_has(3), 30, "the second firing in every format")
        seen = get_json(f"{base}/api/alerts")["evaluations"]
        wait_for(lambda: get_json(f"{base}/api/alerts")["evaluations"] >= seen + 20, 60, "20 more evaluations")
        assert statuses() == {f: ["firing", "resolved", "firing"] for f in FORMATS}
        assert "sdc1" in json.loads(next(b for p, _, b in sink.received if p == "/rackpulse"))["summary"]

        # A browser: it keeps the CSRF cookie the first page sets.
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        page = browser.open(f"{base}/alerts", timeout=5).read().decode()
        now = page.split("<h2>Now</h2>")[1].split("</section>")[0]
        assert "array_degraded" in now and "md0 degraded" in now and "Acknowledge" in now
        csrf = page.split('name="csrf" value="')[1].split('"')[0]
        form = urllib.parse.urlencode({"rule": "array_degraded", "subject": "md0", "csrf": csrf}).encode()
        browser.open(f"{base}/alerts/ack", data=form, timeout=5)
        page = browser.open(f"{base}/alerts", timeout=5).read().decode()
        now = re.sub(r"<[^>]+>", "", page.split("<h2>Now</h2>")[1].split("</section>")[0])  # its words
        assert "firing, acknowledged" in now
    finally:
        stop(proc)
        sink.close()
