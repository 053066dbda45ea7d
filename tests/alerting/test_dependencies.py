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


# -- the pieces, pinned (mutation testing found each let through) -------------------------------

@pytest.mark.parametrize(("pattern", "value", "fits"), [
    (None, "anything", True), ("probe_down", "probe_down", True), ("probe_down", "probe_down2", False),
    ("probe_*", "probe_loss", True), ("probe_?", "probe_a", True), ("probe_[ab]", "probe_c", False),
    ("probe_down", "probe_*", False),  # a value with a star is not a pattern
])
def test_a_match_is_exact_or_a_shell_pattern(pattern: str | None, value: str, fits: bool) -> None:
    assert Match(pattern, None).matches((value, "x")) is fits
    assert Match(None, pattern).matches(("x", value)) is fits


@pytest.mark.parametrize(("a", "b", "meet"), [
    (Match("probe_*", "gate*"), Match("probe_down", "gateway"), True),
    (Match("probe_down", "gateway"), Match("probe_*", "gate*"), True),  # either way round
    (Match("probe_*", "gate*"), Match("vpn_down", "gateway"), False),  # the rule cannot be both
    (Match("probe_*", "gate*"), Match("probe_down", "nas"), False),  # nor the subject
    (Match(None, "nas"), Match("probe_down", None), True),  # None meets anything
    (Match("probe_down", None), Match(None, None), True),
])
def test_two_matches_may_meet_when_both_rule_and_subject_can(a: Match, b: Match, meet: bool) -> None:
    assert a.may_meet(b) is meet and b.may_meet(a) is meet


def test_a_match_is_said_as_its_rule_and_subject() -> None:
    assert (str(Match("probe_down", "gateway")), str(Match(None, "nas")), str(Match("vpn_*"))) == (
        "probe_down gateway", "* nas", "vpn_*")


def test_a_firing_agent_silent_explains_the_hosts_alerts_but_not_itself() -> None:
    states = firing(("agent_silent", "ceph1"))
    got = explained(states, [("vpn_down", "a"), ("agent_silent", "ceph1")], [], {})
    assert got == {("vpn_down", "a"): "agent_silent ceph1"}
    # Told by the runtime for the host, it wins over the host's own.
    assert explained(states, [("vpn_down", "a")], [], {}, explained_by="agent_silent edge") == {
        ("vpn_down", "a"): "agent_silent edge"}


def test_each_dependency_is_tried_until_one_explains() -> None:
    vpn = Dependency(Match("vpn_down", "site-b"), (Match("bgp_peer_down"),))
    states = firing(("vpn_down", "site-b"))
    got = explained(states, [("bgp_peer_down", "10.0.9.1"), ("probe_down", "nas")], [GATEWAY, vpn], {})
    assert got == {("bgp_peer_down", "10.0.9.1"): "vpn_down site-b"}


def test_a_ring_of_three_is_found_and_a_chain_that_ends_is_not() -> None:
    a = Dependency(Match("probe_down", "a"), (Match("probe_down", "b"),))
    b = Dependency(Match("probe_down", "b"), (Match("probe_down", "c"),))
    c = Dependency(Match("probe_down", "c"), (Match("probe_down", "a"),))
    end = Dependency(Match("probe_down", "c"), (Match("vpn_down"),))
    assert find_cycle([a, b, c]) == [0, 1, 2, 0]
    assert find_cycle([a, b, end]) is None
    assert find_cycle([end, a, b]) is None  # visited from a later start, each node once
    # Two chains into one node already done: no ring found for the second visit.
    d = Dependency(Match("probe_down", "d"), (Match("probe_down", "c"),))
    assert find_cycle([end, a, b, d]) is None
    assert find_cycle([end, a, b, d, c]) == [1, 2, 4, 1]
