"""Alerts: the state machine as a table, rules over the demo host, and delivery to a real
HTTP receiver on loopback that fails, hangs and recovers, across a restart."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.alerting.channels import Channel, render
from app.alerting.conditions import Conditions, MetricRule
from app.alerting.engine import AlertState, Condition, Rule, evaluate, parse_window
from app.alerting.service import Alerting
from app.config import load_config
from app.demo import story as demo
from app.scheduler import Scheduler, Snapshot
from app.storage.db import make_engine, upgrade
from collectors import build_collectors
from collectors.base import Sample
from tests.alerting.sink import Sink

RULES = {"r": Rule("r", "critical", for_seconds=60, reminder_hours=1), "now": Rule("now", "warning")}
C = Condition("r", "md0", "md0 degraded")


def test_a_condition_is_pending_until_for_has_passed_then_fires_once() -> None:
    s, ev = evaluate([C], RULES, {}, now=0)
    assert s[("r", "md0")].state == "pending" and ev == []
    s, ev = evaluate([C], RULES, s, now=59)
    assert s[("r", "md0")].state == "pending" and ev == []
    s, ev = evaluate([C], RULES, s, now=60)
    assert s[("r", "md0")].state == "firing" and [e.kind for e in ev] == ["firing"]
    s, ev = evaluate([C], RULES, s, now=120)
    assert ev == []


def test_resolving_says_how_long_it_lasted_and_a_short_blip_sends_nothing() -> None:
    s, _ = evaluate([C], RULES, {}, now=0)
    s, _ = evaluate([C], RULES, s, now=60)
    s, ev = evaluate([], RULES, s, now=660)
    assert s[("r", "md0")].state == "resolved" and ev[0].kind == "resolved" and ev[0].duration == 600
    blip, _ = evaluate([C], RULES, {}, now=0)
    s, ev = evaluate([], RULES, blip, now=30)
    assert ("r", "md0") not in s and ev == []


def test_reminders_repeat_while_firing_until_acknowledged() -> None:
    s, _ = evaluate([C], RULES, {}, now=0)
    s, _ = evaluate([C], RULES, s, now=60)
    s, ev = evaluate([C], RULES, s, now=60 + 3600)
    assert [e.kind for e in ev] == ["reminder"]
    from dataclasses import replace

    s[("r", "md0")] = replace(s[("r", "md0")], acked_at=3700)
    s, ev = evaluate([C], RULES, s, now=60 + 3 * 3600)
    assert ev == []


def test_a_muted_alert_keeps_its_state_but_sends_nothing_and_resolves_quietly() -> None:
    key = ("now", "x")
    s, ev = evaluate([Condition("now", "x", "hot")], RULES, {}, now=0, muted={key})
    assert s[key].state == "firing" and ev == []
    s, ev = evaluate([], RULES, s, now=10, muted=set())
    assert s[key].state == "resolved" and ev == []


def test_a_monthly_raid_check_window_covers_only_the_first_sunday_night() -> None:
    w = parse_window(["Sun"], "01:00", 6, first_of_month=True, rules=["array_degraded"])
    first_sunday = dt.datetime(2026, 11, 1, 3, 0)
    assert w.covers("array_degraded", first_sunday)
    assert not w.covers("array_degraded", first_sunday + dt.timedelta(days=7))
    assert not w.covers("array_degraded", first_sunday + dt.timedelta(hours=5))
    assert not w.covers("disk_failing", first_sunday)


def demo_snapshot(tmp_path: Path, *ts: float) -> Snapshot:
    raw = demo.demo_config(tmp_path, f"sqlite:///{tmp_path / 'd.db'}", 1, 1)
    cfg = load_config(None, raw)
    snap = Snapshot(host=cfg.host)
    colls = {k: v for k, v in build_collectors(cfg).items() if k in ("mdraid", "smart", "bonding", "openvpn")}
    sched = Scheduler(colls, {n: (60, 30) for n in colls}, snap)
    for t in ts:
        demo.write_tree(tmp_path, demo.story_state(t))
        asyncio.run(sched.run_all_once())
    return snap


def test_a_degraded_array_names_the_bay_model_serial_and_old_device(tmp_path: Path) -> None:
    snap = demo_snapshot(tmp_path, 0, 80)
    conds = {c.rule: c for c in Conditions().build(snap)}
    assert conds["array_degraded"].summary == \
        "md0 degraded (11/12): shelf 1, bay 7, WDC WD80EFZZ-68BTXN0 serial ZA1049HK, was sdh1"
    assert conds["array_degraded"].labels["serial"] == "ZA1049HK"
    assert conds["disk_failing"].subject == "ZA1049HK"
    rush = {c.rule: c for c in Conditions().build(demo_snapshot(tmp_path / "rush", 130, 150))}
    assert rush["vpn_tunnel_drops"].labels["interface"] == "tun0"  # the tun drops in the evening rush


def test_a_user_rule_fires_past_its_threshold_and_clears_only_past_the_clear_threshold() -> None:
    snap = Snapshot(host="h")
    mr = MetricRule(Rule("hot_cpu", "warning"), "rackpulse_hwmon_temperature_celsius", ">", 80, 70,
                    (("sensor", "Tctl"),), "CPU {label_sensor} at {value} °C")

    def at(v: float) -> list[Condition]:
        snap.samples["hwmon"] = [Sample.of("rackpulse_hwmon_temperature_celsius", v, chip="k10temp", sensor="Tctl")]
        return Conditions().build(snap, [mr], prev)

    prev: dict[tuple[str, str], AlertState] = {}
    assert at(75) == []
    (c,) = at(85)
    assert c.summary == "CPU Tctl at 85 °C"
    prev, _ = evaluate([c], {"hot_cpu": mr.rule}, {}, now=0)
    assert len(at(75)) == 1  # firing: 75 is still above the clear threshold
    assert at(65) == []


def test_payload_formats() -> None:
    ev = {"id": 7, "kind": "firing", "rule": "array_degraded", "subject": "md0", "severity": "critical",
          "summary": "md0 degraded: bay 7", "labels": {"host": "nas", "array": "md0", "bay": "bay 7"}, "ts": 1e9,
          "duration": None, "since": 1e9 - 60}
    body, _ = render(Channel("c", "http://x", "rackpulse"), ev)
    doc = json.loads(body)
    assert (doc["version"], doc["event_id"], doc["rule"], doc["labels"]["bay"], doc["host"]) == \
        ("rackpulse/1", 7, "array_degraded", "bay 7", "nas")
    am = json.loads(render(Channel("c", "http://x", "alertmanager"), ev, "http://rp")[0])
    assert am["version"] == "4" and am["status"] == "firing" and am["alerts"][0]["labels"]["alertname"] == \
        "array_degraded" and am["alerts"][0]["annotations"]["summary"] == "md0 degraded: bay 7"
    body, headers = render(Channel("c", "http://x", "ntfy"), {**ev, "kind": "resolved", "duration": 3720})
    assert body == b"RESOLVED after 1h 2m: md0 degraded: bay 7" and headers["Priority"] == "default"
    assert json.loads(render(Channel("c", "http://x", "slack"), ev)[0]) == {"text": "CRITICAL: md0 degraded: bay 7"}
    t = Channel("c", "http://x", "template", template="{{ status }} {{ labels.array }}")
    assert render(t, ev)[0] == b"firing md0"


@pytest.fixture
def receiver() -> Iterator[Sink]:
    r = Sink()
    yield r
    r.close()


def snapshot_with(conditions: list[str]) -> Snapshot:
    snap = Snapshot(host="nas")
    snap.samples["x"] = [Sample.of("rackpulse_test_bad", 1, thing=t) for t in conditions]
    return snap


def test_an_endpoint_down_for_an_hour_loses_nothing_and_gets_no_duplicates(tmp_path: Path,
                                                                            receiver: Sink) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    upgrade(url)
    engine = make_engine(url)
    rule = MetricRule(Rule("bad", "critical"), "rackpulse_test_bad", ">", 0, message="{labels} bad")
    ch = Channel("hook", receiver.url, timeout=1)
    a = Alerting(engine, "nas", {}, [rule], [ch])
    receiver.mode = "fail"
    t0 = 1_790_000_000.0
    a.tick(snapshot_with(["a"]), now=t0)
    receiver.mode = "hang"
    a.tick(snapshot_with(["a", "b"]), now=t0 + 600)
    a.deliver(now=t0 + 1200)
    assert receiver.received == []
    # A restart in the middle: a new process, the same database.
    b = Alerting(make_engine(url), "nas", {}, [rule], [ch])
    receiver.mode = "ok"
    for minute in range(60, 70):
        b.tick(snapshot_with(["a", "b"]), now=t0 + minute * 60)
    got = [(m["kind"], m["subject"]) for m in receiver.json()]
    assert got == [("firing", "thing=a"), ("firing", "thing=b")]
    b.tick(snapshot_with([]), now=t0 + 4000)
    got = [(m["kind"], m["subject"]) for m in receiver.json()]
    assert got[2:] == [("resolved", "thing=a"), ("resolved", "thing=b")]
    assert len({m["event_id"] for m in receiver.json()}) == 4
    box = b.view().outbox
    assert all(o.delivered_at for o in box) and max(o.attempts for o in box) >= 2


def test_a_restart_never_resends_what_was_sent(tmp_path: Path, receiver: Sink) -> None:
    url = f"sqlite:///{tmp_path / 'b.db'}"
    upgrade(url)
    rule = MetricRule(Rule("bad", "critical"), "rackpulse_test_bad", ">", 0)
    ch = Channel("hook", receiver.url, timeout=1)
    Alerting(make_engine(url), "nas", {}, [rule], [ch]).tick(snapshot_with(["a"]), now=1000)
    Alerting(make_engine(url), "nas", {}, [rule], [ch]).tick(snapshot_with(["a"]), now=1100)
    assert [m["kind"] for m in receiver.json()] == ["firing"]


def test_the_alerts_page_acks_and_silences_with_a_csrf_token(tmp_path: Path) -> None:
    from app.web.app import create_app

    url = f"sqlite:///{tmp_path / 'c.db'}"
    upgrade(url)
    cfg = load_config(None, {"host": "nas", "storage": {"url": url}, "alerts": {"user_rules": [
        {"name": "bad", "metric": "rackpulse_test_bad", "op": ">", "threshold": 0, "severity": "critical"}]}})
    snap = snapshot_with(["a"])
    app = create_app(cfg, collect=False, snapshot=snap, migrate=False)
    app.state.get_alerting().tick(snap)

    async def scenario() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            page = (await c.get("/alerts")).text
            assert "rackpulse_test_bad{thing=a} is 1" in page and "Acknowledge" in page
            token = page.split('name="csrf" value="')[1].split('"')[0]
            bad = await c.post("/alerts/ack", data={"rule": "bad", "subject": "thing=a", "csrf": "nope"})
            assert bad.status_code == 403
            ok = await c.post("/alerts/ack", data={"rule": "bad", "subject": "thing=a", "csrf": token,
                                                   "note": "new disk <b>arrives</b> Saturday"})
            assert ok.status_code == 303
            page = (await c.get("/alerts")).text
            assert "acknowledged" in page and "Note: new disk &lt;b&gt;arrives&lt;/b&gt; Saturday" in page
            assert "No silence in force." in page
            s = await c.post("/alerts/silence", data={"rule": "ba*", "subject": "", "duration": "1d",
                                                      "reason": "replacing it", "csrf": token})
            assert s.status_code == 303
            page = (await c.get("/alerts")).text
            row = page.split('<table class="silences">')[1].split("</table>")[0]
            assert "ba*" in row and "any subject" in row and "replacing it" in row and "Expire now" in row
            assert "acknowledged, silenced" in page  # the pattern matches rule "bad"
            sid = row.split("/alerts/silence/")[1].split("/expire")[0]
            assert (await c.post("/alerts/silence", data={"duration": "forever", "csrf": token})).status_code == 400
            # a refusal is the page again, the form open with the reason and what was typed
            everything = await c.post("/alerts/silence", data={"rule": "", "subject": "", "duration": "3d",
                                                               "reason": "moving house", "csrf": token})
            assert everything.status_code == 400 and everything.headers["content-type"].startswith("text/html")
            assert '<details id="new-silence" hx-preserve open>' in everything.text
            assert 'id="silence-refused">Not silenced: this silence matches every alert' in everything.text
            assert 'value="moving house"' in everything.text and "<option selected>3d</option>" in everything.text
            assert (await c.post(f"/alerts/silence/{sid}/expire", data={"csrf": "nope"})).status_code == 403
            assert (await c.post(f"/alerts/silence/{sid}/expire", data={"csrf": token})).status_code == 303
            assert (await c.post(f"/alerts/silence/{sid}/expire", data={"csrf": token})).status_code == 404
            page = (await c.get("/alerts")).text
            assert "No silence in force." in page and "silenced" not in page
            history = (await c.get("/alerts", params={"severity": "critical"})).text.split("<h2>History</h2>")[1]
            assert "firing" in history and "Note: new disk" in history
            history = (await c.get("/alerts", params={"severity": "warning"})).text.split("<h2>History</h2>")[1]
            assert "Nothing matches these filters." in history
            history = (await c.get("/alerts", params={"rule": "other"})).text.split("<h2>History</h2>")[1]
            assert "Nothing matches these filters." in history

    asyncio.run(scenario())


@pytest.mark.parametrize(("pattern", "value", "hit"), [
    (None, "anything", True), ("bad", "bad", True), ("bad", "bad2", False), ("md*", "md_degraded", True),
    ("disk=sd?", "disk=sdb", True), ("disk=sd?", "disk=sdaa", False), ("[ab]*", "bgp_down", True),
    ("*", "", True), ("", "x", False),
])
def test_a_silence_matches_exactly_or_as_a_shell_pattern(pattern: str | None, value: str, hit: bool) -> None:
    from app.alerting.silences import matches

    assert matches(pattern, value) is hit


def test_a_member_whose_serial_is_unknown_is_described_in_words() -> None:
    from collectors.disks.mdraid.findings import describe_member
    from collectors.disks.mdraid.state import Member

    text = describe_member(Member(device="sdh1", state="faulty"))
    assert text == "bay unknown, model unknown serial unknown (not readable from the disk), was sdh1"
    assert "?" not in text
