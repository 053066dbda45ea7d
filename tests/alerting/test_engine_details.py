"""The alert engine's details, each a thing a person relies on: rules that are off stay off
without hiding the others, an ongoing alert shows its latest wording, events carry their
alert, a resolved alert says when; maintenance windows parse and cover what they say."""

from __future__ import annotations

import datetime as dt

import pytest

from app.alerting.engine import Condition, Rule, evaluate, parse_window

RULES = {"a": Rule("a", "critical"), "b": Rule("b", "warning"), "off": Rule("off", enabled=False)}


def test_conditions_of_unknown_or_disabled_rules_are_skipped_and_the_rest_still_evaluated() -> None:
    conds = [Condition("nope", "x", "?"), Condition("off", "x", "?"), Condition("a", "x", "A"),
             Condition("a", "x", "A again"), Condition("b", "y", "B")]
    states, events = evaluate(conds, RULES, {}, 0)
    assert set(states) == {("a", "x"), ("b", "y")}
    assert [(e.kind, e.alert.rule, e.alert.subject) for e in events] == [("firing", "a", "x"), ("firing", "b", "y")]


def test_an_ongoing_alert_shows_its_latest_summary_labels_and_severity() -> None:
    s, _ = evaluate([Condition("a", "md0", "md0 degraded (11/12)", {"bay": "7"})], RULES, {}, 0)
    rules = {**RULES, "a": Rule("a", "warning")}
    s, ev = evaluate([Condition("a", "md0", "md0 degraded (10/12)", {"bay": "8"})], rules, s, 10)
    st = s[("a", "md0")]
    assert (st.summary, dict(st.labels), st.severity, st.since) == ("md0 degraded (10/12)", {"bay": "8"}, "warning", 0)
    assert ev == []


def test_a_reminder_carries_its_alert() -> None:
    rules = {"a": Rule("a", "critical", reminder_hours=1)}
    s, _ = evaluate([Condition("a", "md0", "x")], rules, {}, 0)
    s, ev = evaluate([Condition("a", "md0", "x")], rules, s, 3600)
    assert [(e.kind, e.alert.subject, e.alert.last_notified) for e in ev] == [("reminder", "md0", 3600)]


def test_a_resolved_alert_says_when_and_stays_resolved_while_others_resolve_after_it() -> None:
    s, _ = evaluate([Condition("a", "x", "A"), Condition("b", "y", "B")], RULES, {}, 0)
    s, ev = evaluate([Condition("b", "y", "B")], RULES, s, 100)
    assert s[("a", "x")].resolved_at == 100 and [e.kind for e in ev] == ["resolved"]
    s, ev = evaluate([], RULES, s, 200)
    assert (s[("a", "x")].state, s[("a", "x")].resolved_at) == ("resolved", 100)  # unchanged
    assert (s[("b", "y")].state, s[("b", "y")].resolved_at) == ("resolved", 200)
    assert [(e.alert.subject, e.duration) for e in ev] == [("y", 200)]


@pytest.mark.parametrize("days, want", [(["Sun"], (6,)), (["monday", "Tue"], (0, 1)), (["SAT", "sun"], (5, 6))])
def test_window_days_are_read_by_their_first_three_letters(days: list[str], want: tuple[int, ...]) -> None:
    assert parse_window(days, "01:30", 2).days == want
    assert parse_window(days, "01:30", 2).start == dt.time(1, 30)


@pytest.mark.parametrize("days, start", [(["Sonntag"], "01:00"), (["Sun"], "1 am"), (["Sun"], "25")])
def test_a_window_it_cannot_read_is_an_error_that_shows_the_right_form(days: list[str], start: str) -> None:
    with pytest.raises(ValueError, match=r'use days like "Sun" and start like "01:00"'):
        parse_window(days, start, 2)


def test_a_window_covers_from_its_start_for_its_hours_also_past_midnight() -> None:
    w = parse_window(["Sat"], "23:00", 4)
    sat = dt.datetime(2026, 11, 21, 23, 0)  # a Saturday
    assert w.covers("any", sat) and w.covers("any", sat + dt.timedelta(hours=3, minutes=59))
    assert not w.covers("any", sat - dt.timedelta(minutes=1))
    assert not w.covers("any", sat + dt.timedelta(hours=4))
    assert not w.covers("any", sat + dt.timedelta(days=1))  # Sunday 23:00 is not Saturday's


def test_a_window_limited_to_rules_covers_only_those_and_first_of_month_only_the_first_week() -> None:
    w = parse_window(["Sun"], "01:00", 6, first_of_month=True, rules=["array_degraded", "disk_hot"])
    assert w.covers("disk_hot", dt.datetime(2026, 11, 1, 2, 0))
    assert not w.covers("bgp_peer_down", dt.datetime(2026, 11, 1, 2, 0))
    assert w.covers("array_degraded", dt.datetime(2026, 3, 1, 6, 59))  # 1 March 2026 is a Sunday
    assert not w.covers("array_degraded", dt.datetime(2026, 3, 8, 2, 0))
    assert parse_window(["Sun"], "01:00", 6).covers("anything", dt.datetime(2026, 3, 8, 2, 0))
