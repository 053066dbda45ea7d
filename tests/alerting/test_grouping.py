"""Grouping like Alertmanager's group_wait: one host's alerts that fire within `group_wait` go
to a channel as one notification listing them all (resolutions likewise); a channel can opt out;
each alert keeps its own history row; one alert's events never change order."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.alerting.apprise_channel import group_body, group_title
from app.alerting.channels import Channel, Notice, render_group
from app.alerting.conditions import MetricRule
from app.alerting.engine import Rule
from app.alerting.service import Alerting
from app.scheduler import Snapshot
from app.storage.db import make_engine, upgrade
from app.storage.models import alert_event
from collectors.base import Sample
from tests.alerting.sink import Sink

RULE = MetricRule(Rule("bad", "critical"), "rackpulse_test_bad", ">", 0, message="{labels} bad")
T0 = 1_790_000_000.0
WAIT = 30.0


@pytest.fixture
def sink() -> Iterator[Sink]:
    s = Sink()
    yield s
    s.close()


def bad(*things: str, host: str = "nas1") -> Snapshot:
    snap = Snapshot(host=host)
    snap.samples["x"] = [Sample.of("rackpulse_test_bad", 1, thing=t) for t in things]
    return snap


def alerting(tmp_path: Path, *channels: Channel, host: str = "nas1") -> Alerting:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    upgrade(url)
    return Alerting(make_engine(url), host, {}, [RULE], list(channels), group_wait=WAIT)


def bodies(sink: Sink, path: str) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(b) for p, _, b in sink.received if p == path]


def test_three_failures_in_one_evaluation_are_one_notification_per_channel_listing_all_three(
        tmp_path: Path, sink: Sink) -> None:
    a = alerting(tmp_path, Channel("hook", sink.url + "/hook"), Channel("am", sink.url + "/am", "alertmanager"),
                 Channel("one-by-one", sink.url + "/single", group=False))
    a.tick(bad("md0", "sdc", "eth1"), now=T0)
    assert bodies(sink, "/hook") == []  # the first waits group_wait for the rest of its host's news
    assert len(bodies(sink, "/single")) == 3  # a channel that opted out is told at once, each on its own
    a.tick(bad("md0", "sdc", "eth1"), now=T0 + WAIT)
    (doc,) = bodies(sink, "/hook")
    assert doc["kind"] == "group" and doc["state"] == "firing" and doc["host"] == "nas1"
    assert doc["summary"] == "3 problems on nas1"
    assert [e["subject"] for e in doc["events"]] == ["thing=md0", "thing=sdc", "thing=eth1"]
    assert doc["text"].splitlines()[1:] == ["- CRITICAL: {thing=md0} bad", "- CRITICAL: {thing=sdc} bad",
                                            "- CRITICAL: {thing=eth1} bad"]
    (am,) = bodies(sink, "/am")
    assert len(am["alerts"]) == 3 and am["groupLabels"] == {"host": "nas1"}
    # Resolutions likewise: one notification for the three.
    a.tick(bad(), now=T0 + 60)
    a.tick(bad(), now=T0 + 60 + WAIT)
    assert [d["state"] for d in bodies(sink, "/hook")] == ["firing", "resolved"]
    assert bodies(sink, "/hook")[1]["summary"] == "3 resolved on nas1"
    with a.engine.connect() as c:  # each alert keeps its own history rows
        assert c.execute(alert_event.select()).all().__len__() == 6


def test_what_fires_after_the_window_closed_goes_in_the_next_notification(tmp_path: Path, sink: Sink) -> None:
    a = alerting(tmp_path, Channel("hook", sink.url + "/hook"))
    a.tick(bad("md0"), now=T0)
    a.tick(bad("md0", "sdc"), now=T0 + WAIT - 1)  # within the first's window: with it
    a.tick(bad("md0", "sdc", "eth1"), now=T0 + WAIT + 1)  # after: sent alone, a window later
    docs = bodies(sink, "/hook")
    assert [e["subject"] for e in docs[0]["events"]] == ["thing=md0", "thing=sdc"]
    assert len(docs) == 1
    a.tick(bad("md0", "sdc", "eth1"), now=T0 + 2 * WAIT + 1)
    assert bodies(sink, "/hook")[1]["subject"] == "thing=eth1"  # a group of one reads as one event


def test_an_alerts_resolution_never_overtakes_its_firing_though_another_groups_past_it(
        tmp_path: Path, sink: Sink) -> None:
    a = alerting(tmp_path, Channel("hook", sink.url + "/hook"))
    a.tick(bad("md0"), now=T0)  # firing md0
    a.tick(bad("sdc"), now=T0 + 1)  # resolved md0, firing sdc: sdc joins md0's firing group
    a.tick(bad(), now=T0 + 2)  # resolved sdc
    a.deliver(now=T0 + WAIT + 2)
    seen = [(d["state"], [e["subject"] for e in d.get("events", [d])]) for d in bodies(sink, "/hook")]
    assert seen == [("firing", ["thing=md0", "thing=sdc"]), ("resolved", ["thing=md0", "thing=sdc"])]


def test_two_hosts_are_never_one_notification(tmp_path: Path, sink: Sink) -> None:
    hook = Channel("hook", sink.url + "/hook")
    nas = alerting(tmp_path, hook)
    ceph = Alerting(nas.engine, "ceph1", {}, [RULE], [hook], group_wait=WAIT)
    nas.tick(bad("md0"), now=T0, deliver=False)
    ceph.tick(bad("osd.3", host="ceph1"), now=T0, deliver=False)
    nas.tick(bad("md0", "sdc"), now=T0 + 1, deliver=False)
    nas.deliver(now=T0 + WAIT + 1)
    docs = bodies(sink, "/hook")
    assert [[e["subject"] for e in d.get("events", [d])] for d in docs] == [["thing=md0", "thing=sdc"], ["thing=osd.3"]]


def ev(subject: str, **over: object) -> Notice:
    n: Notice = {"id": 1, "kind": "firing", "rule": "array_degraded", "subject": subject, "severity": "critical",
                 "summary": f"{subject} degraded: shelf 1, bay 7", "labels": {"host": "nas1", "bay": "shelf 1, bay 7"},
                 "ts": T0, "duration": None, "since": None}
    return {**n, **over}  # type: ignore[typeddict-item]


def test_a_grouped_email_lists_each_problem_with_its_bay_and_a_text_format_reads_as_lines() -> None:
    group = [ev("md0"), ev("sdh", rule="disk_failing", summary="sdh failing"), ev("eth1", rule="bond_slave_down",
                                                                                 severity="warning", labels={"host": "nas1"},
                                                                                 summary="eth1 down")]
    subject = group_title(group)
    assert subject.startswith("[rackpulse] 3 problems on nas1: CRITICAL RAID array degraded md0: pull shelf 1, bay 7; ")
    assert len(subject) <= 200
    page = group_body(group, "https://rp.lan")
    assert page.count("<h3>") == 3 and "sdh failing" in page and page.count("Open rackpulse") == 1
    body, headers = render_group(Channel("p", "http://x", "ntfy"), group)
    assert headers["Title"] == "rackpulse: 3 problems on nas1" and headers["Priority"] == "urgent"
    assert body.decode().splitlines() == ["3 problems on nas1:", "- CRITICAL: md0 degraded: shelf 1, bay 7",
                                          "- CRITICAL: sdh failing", "- WARNING: eth1 down"]
    slack = json.loads(render_group(Channel("s", "http://x", "slack"), group)[0])
    assert slack["text"].startswith("3 problems on nas1:\n- CRITICAL")
    tpl = Channel("t", "http://x", "template", template="{{ events|length }} {% for e in events %}{{ e.subject }} {% endfor %}")
    assert render_group(tpl, group)[0] == b"3 md0 sdh eth1 "
