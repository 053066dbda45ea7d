"""The alert engine: pure state transitions, testable as a table.

``evaluate(conditions, rules, previous, now)`` takes what is wrong right now (one
``Condition`` per rule and subject) and the stored states, and returns the new states
and the events to notify: pending -> firing after ``for``, firing -> resolved when the
condition clears (with how long it lasted), and reminders every N hours while firing
and not acknowledged. Silences and maintenance windows keep the state but hold the
notifications back.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Rule:
    name: str
    severity: str = "critical"  # critical | warning | info
    for_seconds: float = 0.0
    reminder_hours: float = 0.0  # 0: no reminders
    enabled: bool = True


@dataclass(frozen=True)
class Condition:
    """Something wrong right now: the rule, what it is about, and what to tell a human."""

    rule: str
    subject: str
    summary: str
    labels: Mapping[str, str] = field(default_factory=dict)
    severity: str | None = None  # a two-level rule's level now; None: the rule's severity


SEVERITY_RANK = {"info": 0, "warning": 1, "critical": 2}


# How an alert ends whose collector a reload removed: nothing read says the problem is gone.
UNWATCHED = "no longer watched: removed from the config"


@dataclass(frozen=True)
class AlertState:
    rule: str
    subject: str
    state: str  # pending | firing | resolved
    severity: str
    summary: str
    labels: Mapping[str, str]
    since: float
    fired_at: float | None = None
    resolved_at: float | None = None
    last_notified: float | None = None
    acked_at: float | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.rule, self.subject)


@dataclass(frozen=True)
class Event:
    kind: str  # firing | resolved | reminder | escalated | unwatched
    alert: AlertState
    duration: float | None = None  # for resolved: how long it was firing


def evaluate(
    conditions: Iterable[Condition],
    rules: Mapping[str, Rule],
    previous: Mapping[tuple[str, str], AlertState],
    now: float,
    muted: set[tuple[str, str]] | None = None,
    unwatched: set[tuple[str, str]] | None = None,
) -> tuple[dict[tuple[str, str], AlertState], list[Event]]:
    """Next states and the events to send. ``muted`` keys change state but send nothing.
    ``unwatched`` keys are alerts whose source is no longer watched (a reload removed its
    collector): they end as "no longer watched", not as resolved.

    An episode is pending -> firing -> resolved. A condition that holds again after its alert
    resolved starts a new episode (pending, then firing once); it never brings the old one back.
    Each episode sends one ``firing`` and one ``resolved``, and reminders at the rule's interval.
    """
    muted = muted or set()
    states: dict[tuple[str, str], AlertState] = {}
    events: list[Event] = []
    for c in conditions:
        rule = rules.get(c.rule)
        if rule is None or not rule.enabled:
            continue
        key = (c.rule, c.subject)
        if key in states:
            continue  # the same rule and subject twice in one evaluation: the first one counts
        old = previous.get(key)
        st, told = _step(_holding(c, rule, old, now), old, rule, now, key in muted)
        events += told
        states[key] = st
    for key, old in previous.items():
        if key not in states:
            ended = _ended(old, now, events, key in (unwatched or ()))
            if ended is not None:
                states[key] = ended
    return states, events


def _holding(c: Condition, rule: Rule, old: AlertState | None, now: float) -> AlertState:
    """The alert of a condition that holds now: a new episode, or the one under way with the
    condition's words."""
    severity = c.severity or rule.severity
    if old is None or old.state == "resolved":
        # A new episode: nothing of the last one (its ack, its notifications) carries over.
        return AlertState(c.rule, c.subject, "pending", severity, c.summary, dict(c.labels), since=now)
    # Within an episode the severity only rises: a disk back from 65 to 55 °C is still the
    # episode that reached critical (no second escalation, no resolve) until it clears.
    if c.severity is not None and SEVERITY_RANK.get(old.severity, 2) > SEVERITY_RANK.get(severity, 2):
        severity = old.severity
    return replace(old, summary=c.summary, labels=dict(c.labels), severity=severity)


def _step(st: AlertState, old: AlertState | None, rule: Rule, now: float, muted: bool
          ) -> tuple[AlertState, list[Event]]:
    """Where a holding alert goes next, and what is told of it (nothing while muted)."""
    escalated = (old is not None and old.state == "firing" and old.last_notified is not None
                 and SEVERITY_RANK.get(st.severity, 2) > SEVERITY_RANK.get(old.severity, 2))
    if st.state == "pending":
        if now - st.since >= rule.for_seconds:
            st = replace(st, state="firing", fired_at=now)
            if not muted:
                st = replace(st, last_notified=now)
                return st, [Event("firing", st)]
    elif st.last_notified is None:
        # It began firing while silenced; the silence is over and it still holds: tell it now, once.
        if not muted:
            st = replace(st, last_notified=now)
            return st, [Event("firing", st)]
    elif escalated and not muted:
        # One notification: the same episode, now worse (an ack is of the warning, not of this).
        st = replace(st, last_notified=now, acked_at=None)
        return st, [Event("escalated", st)]
    elif rule.reminder_hours > 0 and st.acked_at is None and not muted:
        last = st.last_notified if st.last_notified is not None else now
        if now - last >= rule.reminder_hours * 3600:
            st = replace(st, last_notified=now)
            return st, [Event("reminder", st)]
    return st, []


def _ended(old: AlertState, now: float, events: list[Event], unwatched: bool = False) -> AlertState | None:
    """An alert whose condition no longer holds: resolved (told if its firing was), kept as
    resolved, or gone (a pending one that cleared before `for`). One whose source is no longer
    watched ends the same way, told as "unwatched" in words that do not say it is fixed."""
    if old.state == "resolved":
        return old
    if old.state != "firing":
        return None  # a pending alert whose condition cleared before `for` simply disappears
    if unwatched:
        summary = f"{old.summary.split(' (held: ')[0]} ({UNWATCHED})"
        st = replace(old, state="resolved", resolved_at=now, summary=summary)
        if old.last_notified is not None:
            events.append(Event("unwatched", st, duration=now - (old.fired_at or old.since)))
        return st
    st = replace(old, state="resolved", resolved_at=now)
    # Tell exactly when the firing was told: an alert that fired under a silence resolves
    # quietly, and one that was told resolves aloud even if silenced since (a receiver must
    # never be left with a "firing" that never ends). Acknowledged ones too: the ack stopped
    # the reminders, not the news that it is over.
    if old.last_notified is not None:
        events.append(Event("resolved", st, duration=now - (old.fired_at or old.since)))
    return st


@dataclass(frozen=True)
class Window:
    """A recurring maintenance window: weekdays, a start time and a length; optionally only the
    first such weekday of the month (Debian's monthly RAID check runs the first Sunday)."""

    days: tuple[int, ...]  # 0 = Monday
    start: dt.time
    hours: float
    first_of_month: bool = False
    rules: tuple[str, ...] = ()  # empty: every rule

    def covers(self, rule: str, when: dt.datetime) -> bool:
        if self.rules and rule not in self.rules:
            return False
        for back in range(0, 8):
            day = when.date() - dt.timedelta(days=back)
            if day.weekday() not in self.days or (self.first_of_month and day.day > 7):
                continue
            begin = dt.datetime.combine(day, self.start, tzinfo=when.tzinfo)
            if begin <= when < begin + dt.timedelta(hours=self.hours):
                return True
        return False


def parse_window(days: list[str], start: str, hours: float, first_of_month: bool = False,
                 rules: list[str] | None = None) -> Window:
    names = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    try:
        idx = tuple(names.index(d.strip().lower()[:3]) for d in days)
        hh, mm = (int(x) for x in start.split(":"))
    except ValueError:
        raise ValueError(f"maintenance window: days {days!r} / start {start!r} not understood "
                         "(use days like \"Sun\" and start like \"01:00\")") from None
    return Window(idx, dt.time(hh, mm), hours, first_of_month, tuple(rules or ()))
