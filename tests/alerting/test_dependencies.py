"""Dependencies: while a parent fires its children send nothing and read "suppressed by" it; a
child still firing when the parent resolves is told then, once; a collector that is down explains
its own findings' alerts and a silent agent its whole host; rings are a config error."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.alerting.channels import Channel
from app.alerting.conditions import MetricRule
from app.alerting.dependencies import Dependency, Match, explained, find_cycle
from app.alerting.engine import AlertState, Condition, Rule
from app.alerting.service import Alerting
from app.config import ConfigError, load_config
from app.scheduler import CollectorStatus, Snapshot
from app.storage.db import make_engine, upgrade
from app.storage.models import outbox
from collectors.base import Sample

GATEWAY = Dependency(Match("probe_down", "gateway"),
                     (Match("probe_*"), Match("vpn_*"), Match("bgp_peer_down", "10.0.250.*")))
DOWN = MetricRule(Rule("probe_down", "critical"), "rackpulse_test_down", ">", 0, message="{labels} down")
VPN = MetricRule(Rule("vpn_down", "critical"), "rackpulse_test_vpn", ">", 0, message="{labels} vpn down")


def firing(*keys: tuple[str, str]) -> dict[tuple[str, str], AlertState]:
    return {k: AlertState(k[0], k[1], "firing", "critical", "", {}, 0.0, 0.0) for k in keys}


@pytest.mark.parametrize(("key", "why"), [
    (("probe_down", "nas"), "probe_down gateway"),
    (("probe_loss", "3g bond"), "probe_down gateway"),
    (("vpn_down", "site-b"), "probe_down gateway"),
    (("bgp_peer_down", "10.0.250.3"), "probe_down gateway"),
    (("bgp_peer_down", "10.0.1.1"), None),  # not a child: another network
    (("array_degraded", "md0"), None),
    (("probe_down", "gateway"), None),  # a parent never explains itself, though it matches probe_*
])
def test_a_firing_parent_explains_exactly_the_alerts_its_children_match(key: tuple[str, str], why: str | None) -> None:
    got = explained(firing(("probe_down", "gateway")), [key], [GATEWAY], {})
    assert got.get(key) == why


def test_a_pending_parent_explains_nothing_yet() -> None:
    pending = {("probe_down", "gateway"): AlertState("probe_down", "gateway", "pending", "critical", "", {}, 0.0)}
    assert explained(pending, [("probe_down", "nas")], [GATEWAY], {}) == {}


def test_a_collector_that_is_down_explains_its_own_findings_alerts_not_others() -> None:
    states = firing(("collector_down", "mdraid"))
    got = explained(states, [("array_degraded", "md0"), ("disk_hot", "ZA1"), ("collector_down", "mdraid")], [],
                    {"array_degraded": "mdraid", "disk_hot": "smart"})
    assert got == {("array_degraded", "md0"): "collector_down mdraid"}


def test_a_silent_agent_explains_everything_on_its_host() -> None:
    got = explained({}, [("vpn_down", "a"), ("collector_down", "openvpn")], [], {}, explained_by="agent_silent ceph1")
    assert set(got.values()) == {"agent_silent ceph1"} and len(got) == 2


def test_dependencies_that_explain_each_other_are_a_ring_and_a_config_error() -> None:
    nas = Dependency(Match("probe_down", "nas"), (Match("probe_down", "gateway"),))
    assert find_cycle([GATEWAY, nas]) == [0, 1, 0]
    assert find_cycle([GATEWAY]) is None  # probe_* matching its own parent is no ring
    deps = [{"parent": {"rule": "probe_down", "subject": "gateway"}, "children": [{"rule": "probe_*"}]},
            {"parent": {"rule": "probe_down", "subject": "nas"}, "children": [{"rule": "probe_down", "subject": "gate*"}]}]
    with pytest.raises(ConfigError, match="ring"):
        load_config(None, {"alerts": {"dependencies": deps}})
    with pytest.raises(ConfigError, match="children"):
        load_config(None, {"alerts": {"dependencies": [{"parent": {"rule": "probe_down"}, "children": []}]}})


def snap(down: tuple[str, ...] = (), vpn: tuple[str, ...] = ()) -> Snapshot:
    s = Snapshot(host="nas")
    s.samples["x"] = [Sample.of("rackpulse_test_down", 1, thing=t) for t in down]
    s.samples["x"] += [Sample.of("rackpulse_test_vpn", 1, thing=t) for t in vpn]
    return s


def alerting(tmp_path: Path, deps: list[Dependency]) -> Alerting:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    upgrade(url)
    user = [DOWN, VPN]
    return Alerting(make_engine(url), "nas", {}, user, [Channel("hook", "http://127.0.0.1:9/none")],
                    dependencies=deps)


def queued(a: Alerting) -> list[tuple[str, str, str]]:
    from sqlalchemy import select

    from app.storage.models import alert_event
    with a.engine.connect() as c:
        rows = c.execute(select(alert_event.c.kind, alert_event.c.rule, alert_event.c.subject)
                         .join(outbox, outbox.c.event_id == alert_event.c.id).order_by(outbox.c.id)).all()
    return [tuple(r) for r in rows]


def test_the_gateway_and_what_is_behind_it_failing_together_is_one_notification_then_the_rest_after(
        tmp_path: Path) -> None:
    dep = Dependency(Match("probe_down", "thing=gateway"), (Match("probe_*"), Match("vpn_*")))
    a = alerting(tmp_path, [dep])
    t0 = 1_790_000_000.0
    a.tick(snap(down=("gateway", "nas"), vpn=("site-b",)), now=t0, deliver=False)
    assert queued(a) == [("firing", "probe_down", "thing=gateway")]  # one, though three fire
    page = {x.subject: x for x in a.view(now=t0).active}
    assert page["thing=nas"].state == "firing" and page["thing=nas"].suppressed_by == "probe_down thing=gateway"
    assert page["thing=site-b"].suppressed_by == "probe_down thing=gateway"
    a.tick(snap(down=("gateway", "nas"), vpn=("site-b",)), now=t0 + 60, deliver=False)
    assert len(queued(a)) == 1  # still held while the parent fires
    # The gateway is back, nas still down: it is told now, once; site-b healed meanwhile: nothing.
    a.tick(snap(down=("nas",)), now=t0 + 120, deliver=False)
    a.tick(snap(down=("nas",)), now=t0 + 180, deliver=False)
    first, *then = queued(a)
    assert first == ("firing", "probe_down", "thing=gateway")  # in one tick: the parent's end and nas told
    assert sorted(then) == [("firing", "probe_down", "thing=nas"), ("resolved", "probe_down", "thing=gateway")]
    assert a.view(now=t0 + 180).active[0].suppressed_by is None


def test_a_collector_down_holds_back_the_alerts_of_its_last_state(tmp_path: Path) -> None:
    from collectors import plugins

    a = alerting(tmp_path, [])
    a.rules = {**a.rules, "collector_down": Rule("collector_down", "warning", 0),
               "array_degraded": Rule("array_degraded", "critical", 0)}
    assert "array_degraded" in {r.name for r in plugins()["mdraid"].rules}
    s = snap()
    s.statuses["mdraid"] = CollectorStatus(name="mdraid", interval=10, timeout=10, up=False, last_error="mdstat: truncated")
    t0 = 1_790_000_000.0
    a.tick(s, now=t0, deliver=False, extra=[Condition("array_degraded", "md0", "md0 degraded", {"host": "nas"})])
    assert queued(a) == [("firing", "collector_down", "mdraid")]
    assert a.suppressed == {("array_degraded", "md0"): "collector_down mdraid"}
