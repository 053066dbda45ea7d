"""The alert engine over many episodes: whatever sequence of failures, heals, silences and
clock steps it sees, each episode sends one firing and one resolved, reminders only at the
rule's interval, and a condition that returns starts a new episode instead of reviving the old."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.alerting.engine import Condition, Rule, evaluate

KEY = ("r", "md0")
COND = Condition("r", "md0", "md0 degraded")

steps = st.lists(st.tuples(st.booleans(), st.integers(min_value=0, max_value=400)), min_size=1, max_size=60)


def run(seq: list[tuple[bool, int]], rule: Rule, muted_at: frozenset[int] = frozenset(),
        steps_out: list[int] | None = None) -> list[tuple[str, int]]:
    states: dict = {}
    now, out = 0, []
    for i, (present, step) in enumerate(seq):
        now += step
        states, events = evaluate([COND] if present else [], {"r": rule}, states, now,
                                  muted={KEY} if i in muted_at else set())
        out += [(e.kind, now) for e in events]
        if steps_out is not None:
            steps_out += [i] * len(events)
    return out


def model(seq: list[tuple[bool, int]], for_s: int, reminder_s: float) -> list[tuple[str, int]]:
    """What a person expects, written as plainly as possible."""
    now, episode, out = 0, None, []
    for present, step in seq:
        now += step
        if not present:
            if episode and episode["fired"]:
                out.append(("resolved", now))
            episode = None
            continue
        if episode is None:
            episode = {"since": now, "fired": False, "told": None}
        if not episode["fired"]:
            if now - episode["since"] >= for_s:
                episode.update(fired=True, told=now)
                out.append(("firing", now))
        elif reminder_s and now - episode["told"] >= reminder_s:
            episode["told"] = now
            out.append(("reminder", now))
    return out


@settings(max_examples=400, deadline=None)
@given(steps, st.sampled_from([0, 30, 120]), st.sampled_from([0.0, 0.1]))
def test_the_engine_sends_what_a_person_expects_for_any_sequence(seq, for_s, reminder_h) -> None:  # type: ignore[no-untyped-def]
    got = run(seq, Rule("r", "critical", for_s, reminder_h))
    assert got == model(seq, for_s, reminder_h * 3600)


@settings(max_examples=400, deadline=None)
@given(steps, st.sampled_from([0, 30]))
def test_every_episode_sends_one_firing_then_one_resolved(seq, for_s) -> None:  # type: ignore[no-untyped-def]
    kinds = [k for k, _ in run(seq, Rule("r", "critical", for_s))]
    assert kinds[::2] == ["firing"] * len(kinds[::2])
    assert kinds[1::2] == ["resolved"] * len(kinds[1::2])
    # As many firings as runs of failures that lasted `for` (with for = 0: every run of failures).
    if for_s == 0:
        runs = sum(1 for i, (p, _) in enumerate(seq) if p and (i == 0 or not seq[i - 1][0]))
        assert kinds.count("firing") == runs


@settings(max_examples=300, deadline=None)
@given(steps, st.sets(st.integers(min_value=0, max_value=59)))
def test_a_silence_holds_news_back_but_never_doubles_it_nor_strands_a_firing(seq, muted_at) -> None:  # type: ignore[no-untyped-def]
    at: list[int] = []
    got = run(seq, Rule("r", "critical", 0), frozenset(muted_at), at)
    kinds = [k for k, _ in got]
    assert kinds[::2] == ["firing"] * len(kinds[::2]) and kinds[1::2] == ["resolved"] * len(kinds[1::2])
    # No news of trouble while muted (the all-clear of a firing that was told still goes out).
    assert not {i for (k, _), i in zip(got, at, strict=True) if k != "resolved"} & muted_at
    # Never more firings than runs of failures.
    runs = sum(1 for i, (p, _) in enumerate(seq) if p and (i == 0 or not seq[i - 1][0]))
    assert kinds.count("firing") <= runs


def test_fail_heal_fail_fires_twice_and_then_stays_quiet() -> None:
    rule = {"r": Rule("r", "critical", 0, 0)}
    s, ev1 = evaluate([COND], rule, {}, 0)
    s, ev2 = evaluate([], rule, s, 1)
    s, ev3 = evaluate([COND], rule, s, 2)
    later = []
    for t in range(3, 23):
        s, ev = evaluate([COND], rule, s, t)
        later += ev
    assert [e.kind for e in ev1 + ev2 + ev3] == ["firing", "resolved", "firing"]
    assert later == [] and s[KEY].state == "firing"


def test_a_new_episode_forgets_the_last_ones_acknowledgement() -> None:
    from dataclasses import replace

    rule = {"r": Rule("r", "critical", 0, 1)}
    s, _ = evaluate([COND], rule, {}, 0)
    s = {KEY: replace(s[KEY], acked_at=10)}
    s, ev = evaluate([], rule, s, 20)
    assert [e.kind for e in ev] == ["resolved"]  # acknowledged, and still told that it is over
    s, _ = evaluate([COND], rule, s, 30)
    assert s[KEY].acked_at is None
    s, ev = evaluate([COND], rule, s, 30 + 3600)
    assert [e.kind for e in ev] == ["reminder"]


def test_an_alert_that_fired_under_a_silence_is_told_once_the_silence_ends() -> None:
    rule = {"r": Rule("r", "critical", 0, 0)}
    s, ev = evaluate([COND], rule, {}, 0, muted={KEY})
    assert ev == [] and s[KEY].state == "firing"
    s, ev = evaluate([COND], rule, s, 10)
    assert [e.kind for e in ev] == ["firing"]
    s, ev = evaluate([COND], rule, s, 20)
    assert ev == []


def test_the_same_alert_twice_in_one_evaluation_fires_once() -> None:
    s, ev = evaluate([COND, Condition("r", "md0", "again")], {"r": Rule("r")}, {}, 0)
    assert [e.kind for e in ev] == ["firing"] and s[KEY].summary == "md0 degraded"
