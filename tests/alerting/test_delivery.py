"""Delivery to real HTTP receivers: per channel in the order things happened, also after an
outage; a channel that hangs holds up neither the evaluation nor the other channels."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.alerting.channels import Channel
from app.alerting.conditions import MetricRule
from app.alerting.engine import Rule
from app.alerting.service import Alerting
from app.scheduler import Snapshot
from app.storage.db import make_engine, upgrade
from collectors.base import Sample
from tests.alerting.sink import Sink

RULE = MetricRule(Rule("bad", "critical"), "rackpulse_test_bad", ">", 0, message="{labels} bad")


@pytest.fixture
def sink() -> Iterator[Sink]:
    s = Sink()
    yield s
    s.close()


def bad(*things: str) -> Snapshot:
    snap = Snapshot(host="nas")
    snap.samples["x"] = [Sample.of("rackpulse_test_bad", 1, thing=t) for t in things]
    return snap


def alerting(tmp_path: Path, *channels: Channel) -> Alerting:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    upgrade(url)
    return Alerting(make_engine(url), "nas", {}, [RULE], list(channels))


def wait_for(check, timeout: float = 20.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"timed out; last: {check()!r}")


def test_after_an_outage_a_receiver_gets_everything_in_the_order_it_happened(tmp_path: Path, sink: Sink) -> None:
    a = alerting(tmp_path, Channel("hook", sink.url + "/hook", timeout=2))
    t0 = 1_790_000_000.0
    sink.mode = "fail"
    a.tick(bad("a"), now=t0)  # firing a: fails, waits ~10 s for its retry
    sink.mode = "ok"
    a.tick(bad("a", "b"), now=t0 + 1)  # firing b is due at once, but must not overtake a
    a.tick(bad("b"), now=t0 + 2)  # resolved a
    assert sink.received == []
    a.tick(bad("b"), now=t0 + 60)
    got = [(m["kind"], m["subject"]) for m in sink.json()]
    assert got == [("firing", "thing=a"), ("firing", "thing=b"), ("resolved", "thing=a")]


def test_a_notification_given_up_on_does_not_block_the_ones_after_it(tmp_path: Path, sink: Sink) -> None:
    a = alerting(tmp_path, Channel("hook", sink.url + "/hook", timeout=2, max_age_hours=1))
    t0 = 1_790_000_000.0
    sink.mode = "fail"
    a.tick(bad("a"), now=t0)
    a.deliver(now=t0 + 7200)  # past max_age: given up on
    sink.mode = "ok"
    a.tick(bad("a", "b"), now=t0 + 7201)
    assert [(m["kind"], m["subject"]) for m in sink.json()] == [("firing", "thing=b")]
    assert [o.gave_up_at is not None for o in a.view().outbox] == [False, True]


def test_a_hanging_channel_delays_neither_evaluation_nor_another_channel(tmp_path: Path) -> None:
    slow, fast = Sink(), Sink()
    try:
        slow.mode = "hang"
        a = alerting(tmp_path, Channel("slow", slow.url + "/slow", timeout=25), Channel("fast", fast.url + "/fast"))
        a.courier.start(poll=0.2)
        a.tick(bad("a"), deliver=False)
        a.courier.wake()
        wait_for(lambda: slow.hanging.is_set())
        wait_for(lambda: len(fast.received) == 1)
        # While the slow channel's request still hangs, a new failure is evaluated and delivered elsewhere.
        recorded = a.tick(bad("a", "b"), deliver=False)
        assert [(r["kind"], r["subject"]) for r in recorded] == [("firing", "thing=b")]
        a.courier.wake()
        wait_for(lambda: len(fast.received) == 2)
        assert not slow.release.is_set() and slow.received == []
        slow.mode = "ok"
        slow.release.set()
        wait_for(lambda: len(slow.received) == 2)
        assert [m["subject"] for m in slow.json()] == ["thing=a", "thing=b"]
    finally:
        a.courier.stop()
        slow.close()
        fast.close()


def test_a_channel_that_fails_is_not_tried_again_for_the_rest_of_its_round(tmp_path: Path, sink: Sink) -> None:
    """Three notifications queued for an endpoint that is down: one attempt this round, not three
    (the others wait behind the first, in order, for its retry)."""
    a = alerting(tmp_path, Channel("hook", sink.url + "/hook", timeout=2))
    t0 = 1_790_000_000.0
    sink.mode = "fail"
    a.tick(bad("a", "b", "c"), now=t0)
    assert sink.attempts == 1
    assert [o.attempts for o in a.view().outbox] == [0, 0, 1]  # newest first: only the oldest tried


@pytest.mark.parametrize("where", ["/followed", "ftp://127.0.0.1/x", "http://127.0.0.2:9842/api/v1/users"])
def test_a_webhook_that_redirects_is_a_delivery_error_and_is_never_followed(sink: Sink, where: str) -> None:
    from app.alerting.channels import DeliveryError, send

    sink.mode = f"redirect {sink.url + where if where.startswith('/') else where}"
    with pytest.raises(DeliveryError, match="redirected to .* not followed"):
        send(Channel("hook", f"{sink.url}/hook"), b"{}", {"Content-Type": "application/json"})
    assert sink.attempts == 1 and sink.received == []  # the redirect's target was never asked
