"""A server that takes the lead over from another on one PostgreSQL carries on the episodes the
former leader began: an alert it told stays told (no second "firing"), and its end is told
("resolved"). Two Runtimes on one database stand for the two servers; the leader's advisory lock
is released as a killed server's connection would drop it."""

from __future__ import annotations

import time

import pytest

from app.config import load_config
from app.runtime import Runtime
from app.scheduler import Snapshot
from app.storage.db import upgrade
from collectors.base import Sample


def runtime(url: str, name: str) -> Runtime:
    cfg = load_config(None, {"host": name, "storage": {"url": url}, "alerts": {"user_rules": [
        {"name": "bad", "metric": "rackpulse_test_bad", "op": ">", "threshold": 0, "severity": "critical"}]}})
    return Runtime(cfg, collect=False, migrate=False)


def agent_snapshot(bad: bool) -> Snapshot:
    snap = Snapshot(host="nas1")
    snap.samples["x"] = [Sample.of("rackpulse_test_bad", 1 if bad else 0, thing="a")]
    return snap


@pytest.mark.peers  # the real PostgreSQL server: leadership is an advisory lock there
def test_the_new_leader_neither_fires_again_nor_forgets_to_resolve_what_the_old_one_told(pg_url: str) -> None:
    upgrade(pg_url)
    a, b = runtime(pg_url, "server-a"), runtime(pg_url, "server-b")
    try:
        assert a.lead() and not b.lead()
        standby_view = b.alerting_for("nas1")  # the standby built its view early (a page, a batch)
        assert standby_view is not None and standby_view.states == {}
        now = time.time()
        told = a.alerting_for("nas1").tick(agent_snapshot(bad=True), now, deliver=False)  # type: ignore[union-attr]
        assert [e["kind"] for e in told] == ["firing"]
        a.leadership.release()  # the leader dies: PostgreSQL drops its lock
        assert b.lead()
        again = standby_view.tick(agent_snapshot(bad=True), now + 5, deliver=False)
        assert again == []  # the episode the old leader told goes on: no second firing
        over = standby_view.tick(agent_snapshot(bad=False), now + 10, deliver=False)
        assert [e["kind"] for e in over] == ["resolved"]
    finally:
        a.leadership.release()
        b.leadership.release()
        a.engine.dispose()
        b.engine.dispose()
