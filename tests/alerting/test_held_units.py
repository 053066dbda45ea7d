"""The hold of a source that is away, as pure functions: only firing alerts are held (a pending one
was never confirmed), the "(held: …)" mark is said once however many runs the source stays away,
and an alert of another plug-in's rule is not held by this one's absence."""

from __future__ import annotations

from app.alerting.conditions import RULE_SOURCES, held, unheld
from app.alerting.engine import AlertState
from app.snapshot import CollectorStatus

RULE = next(r for r, src in RULE_SOURCES.items() if src == "heatpump")
OTHER = next(r for r, src in RULE_SOURCES.items() if src == "mdraid")


def away(now: float = 1_800_000_000.0) -> CollectorStatus:
    return CollectorStatus("heatpump", 30.0, 10.0, up=False, last_run=now, last_success=now - 600)


def alert(rule: str, state: str, summary: str = "fault: compressor") -> AlertState:
    return AlertState(rule, "isg", state, "critical", summary, {}, since=1.0, fired_at=1.0 if state == "firing" else None)


def test_a_firing_alert_of_a_source_that_went_away_is_held_with_its_words_and_the_reason() -> None:
    (c,) = held([away()], {(RULE, "isg"): alert(RULE, "firing")}, present=set())
    assert c.rule == RULE and c.subject == "isg"
    assert c.summary.startswith("fault: compressor (held: source unreachable since ")


def test_a_pending_alert_is_not_held_it_was_never_confirmed() -> None:
    assert held([away()], {(RULE, "isg"): alert(RULE, "pending")}, present=set()) == []


def test_the_held_mark_is_said_once_however_many_runs_the_source_stays_away() -> None:
    first = held([away()], {(RULE, "isg"): alert(RULE, "firing")}, present=set())[0].summary
    again = held([away()], {(RULE, "isg"): alert(RULE, "firing", first)}, present=set())[0].summary
    assert again.count("(held: ") == 1
    assert unheld(again) == "fault: compressor"


def test_an_alert_of_another_plug_ins_rule_or_one_raised_again_this_run_is_not_held() -> None:
    previous = {(OTHER, "md0"): alert(OTHER, "firing"), (RULE, "isg"): alert(RULE, "firing")}
    assert held([away()], previous, present={(RULE, "isg")}) == []


def test_a_source_that_went_absent_is_held_as_absent_since_its_last_data() -> None:
    st = CollectorStatus("heatpump", 30.0, 10.0, up=True, no_data=True, last_run=2e9, last_success=2e9, last_data=1e9)
    (c,) = held([st], {(RULE, "isg"): alert(RULE, "firing")}, present=set())
    assert "(held: source absent since " in c.summary
