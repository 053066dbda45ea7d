"""Alerts, I/O side: load states, evaluate, store transitions, fill the outbox, deliver.

Every notification is written to the outbox in the same transaction as the transition
that caused it, and leaves the outbox only once a channel answered 2xx: a restart or an
endpoint that is down loses nothing. Each payload carries the event id, so a receiver can
drop the rare duplicate of a delivery that succeeded just before a crash.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, TypedDict

from sqlalchemy import Engine, and_, select, update

from app.alerting import queries
from app.alerting.channels import Channel
from app.alerting.conditions import BUILTIN, Conditions, MetricRule, rule_sources, source_label
from app.alerting.delivery import Courier, try_channel
from app.alerting.dependencies import Dependency, explained
from app.alerting.engine import AlertState, Condition, Rule, Window, evaluate
from app.alerting.policy import first_due
from app.alerting.records import (
    ActiveAlert,
    AlertsView,
    ChannelHealth,
    HistoryEntry,
    OutboxEntry,
    Recorded,
    Silence,
)
from app.alerting.silences import (
    ALL_SILENCE_HOURS,
    PATTERN_MAX,
    SILENCES_MAX,
    SILENCES_SECONDS,
    SilenceRow,
    covered_until,
    matches,
    matches_all,
)
from app.alerting.sources import source_of
from app.snapshot import Snapshot
from app.storage.models import alert, alert_event, outbox, silence

log = logging.getLogger("rackpulse.alerts")


class Settings(TypedDict):
    """What the config sets of an Alerting, but its channels (app/alerting/setup.py: settings_of)."""

    rules: dict[str, Rule]
    user_rules: list[MetricRule]
    windows: list[Window]
    base_url: str
    dependencies: list[Dependency]
    group_wait: float


class Alerting:
    def __init__(self, engine: Engine, host: str, rules: dict[str, Rule] | None = None,
                 user_rules: Sequence[MetricRule] = (), channels: Sequence[Channel] = (),
                 windows: Sequence[Window] = (), base_url: str = "", conditions: Conditions | None = None,
                 dependencies: Sequence[Dependency] = (), group_wait: float = 0.0) -> None:
        self.engine, self.host = engine, host
        self.rules = dict(rules if rules is not None else BUILTIN)
        self.user_rules = list(user_rules)
        for ur in self.user_rules:
            self.rules[ur.rule.name] = ur.rule
        self.channels = {c.name: c for c in channels}
        self.windows = list(windows)
        self.base_url = base_url
        self.conditions = conditions or Conditions()
        self.dependencies = list(dependencies)
        self.rule_source = rule_sources()
        self.suppressed: dict[tuple[str, str], str] = {}  # key -> the parent that explains it, last tick
        self.trials: dict[str, tuple[float, bool, str]] = {}  # channel -> its last test: when, ok, answer
        self.courier = Courier(engine, channels, base_url, group_wait)
        self.states: dict[tuple[str, str], AlertState] = self._load()
        # Several servers on one PostgreSQL: an acknowledgement may have been taken by another one
        # (a standby's page): the database says, and each evaluation reads it.
        self.shared = engine.dialect.name == "postgresql"
        self._all_silenced: tuple[float, list[SilenceRow]] | None = None  # silenced_all_until's last reading
        self.evaluations = 0  # since start-up; shown by /api/alerts
        # The scheduler thread evaluates while web requests acknowledge: without one lock over
        # both, an ack landing mid-evaluation was overwritten by the states that evaluation
        # computed from before it (the page kept offering "Acknowledge" and reminders went on).
        self.lock = threading.RLock()

    # -- state ----------------------------------------------------------------------------

    def _load(self) -> dict[tuple[str, str], AlertState]:
        with self.engine.connect() as c:
            rows = c.execute(select(alert).where(alert.c.host == self.host)).all()
        return {(r.rule, r.subject): AlertState(r.rule, r.subject, r.state, r.severity, r.summary,
                                                json.loads(r.labels), r.since, r.fired_at, r.resolved_at,
                                                r.last_notified, r.acked_at) for r in rows}

    def muted(self, now: float, keys: set[tuple[str, str]]) -> set[tuple[str, str]]:
        """Keys whose notifications are held back: silenced, or in a maintenance window."""
        with self.engine.connect() as c:
            sil = c.execute(queries.SILENCE_PATTERNS, {"host": self.host, "now": now}).all()
        when = dt.datetime.fromtimestamp(now).astimezone()
        out = set()
        for key in keys:
            if any(matches(r, key[0]) and matches(s, key[1]) for r, s in sil):
                out.add(key)
            elif any(w.covers(key[0], when) for w in self.windows):
                out.add(key)
        return out

    def tick(self, snap: Snapshot, now: float | None = None, extra: Sequence[Condition] = (),
             deliver: bool = True, explained_by: str | None = None) -> list[Recorded]:
        """One evaluation: returns the events it recorded (and queued for delivery).
        ``extra``: conditions from elsewhere (agents that went silent); ``explained_by``: a parent
        outside this host that explains all of it (its agent is silent)."""
        now = now or time.time()
        with self.lock:
            if self.shared:
                self._take_acks()
            conds = self.conditions.build(snap, self.user_rules, self.states, now) + list(extra)
            keys = set(self.states) | {(c.rule, c.subject) for c in conds}
            muted = self.muted(now, keys)
            gone = self._unwatched(snap)
            new_states, events = evaluate(conds, self.rules, self.states, now, muted, gone)
            # Parents are known once this evaluation is: a parent and its children that begin to
            # fire in the same tick must not both be told, so evaluate again with the explained
            # ones held back (evaluate is pure: the first result is simply dropped).
            suppressed = explained(new_states, keys, self.dependencies, self.rule_source, explained_by)
            if set(suppressed) - muted:
                new_states, events = evaluate(conds, self.rules, self.states, now, muted | set(suppressed), gone)
            self.suppressed = suppressed
            recorded = self._store(new_states, events, now)
            self.states = new_states
            self.evaluations += 1
        if deliver:
            self.deliver(now)
        return recorded

    def _unwatched(self, snap: Snapshot) -> set[tuple[str, str]]:
        """The firing alerts of collectors a reload removed (their collector_down too), and of
        sources a reload removed from a collector's section (a BMC taken out of [collectors.ipmi])."""
        removed: set[str] = getattr(snap, "unwatched", set())
        gone: dict[str, set[str]] = getattr(snap, "unwatched_sources", {})
        if not removed and not gone:
            return set()
        out = set()
        for k, st in self.states.items():
            if st.state != "firing":
                continue
            plugin = source_of(self.rule_source, *k)
            if plugin in removed or (k[0] == "collector_down" and k[1] in removed):
                out.add(k)
            elif plugin in gone and (label := source_label(plugin)) and st.labels.get(label) in gone[plugin]:
                out.add(k)
        return out

    def _take_acks(self) -> None:
        """The acknowledgements another server stored for alerts firing here (one small query)."""
        firing = {k for k, st in self.states.items() if st.state == "firing" and st.acked_at is None}
        if not firing:
            return
        with self.engine.connect() as c:
            rows = c.execute(select(alert.c.rule, alert.c.subject, alert.c.acked_at).where(
                alert.c.host == self.host, alert.c.state == "firing", alert.c.acked_at.is_not(None))).all()
        taken = {(r, s): at for r, s, at in rows if (r, s) in firing}
        if taken:
            self.states = {**self.states, **{k: replace(self.states[k], acked_at=at) for k, at in taken.items()}}

    def _store(self, states: dict[tuple[str, str], AlertState], events: list[Any], now: float) -> list[Recorded]:
        recorded: list[Recorded] = []
        with self.engine.begin() as c:
            for key, st in states.items():
                values = {"state": st.state, "severity": st.severity, "summary": st.summary,
                          "labels": json.dumps(dict(st.labels)), "since": st.since, "fired_at": st.fired_at,
                          "resolved_at": st.resolved_at, "last_notified": st.last_notified, "acked_at": st.acked_at}
                old = self.states.get(key)
                if old is None:
                    c.execute(alert.insert().values(host=self.host, rule=st.rule, subject=st.subject, **values))
                elif old != st:
                    c.execute(update(alert).where(alert.c.host == self.host, alert.c.rule == st.rule,
                                                  alert.c.subject == st.subject).values(**values))
            gone = set(self.states) - set(states)  # pending alerts that cleared before `for`
            for rule, subject in gone:
                c.execute(alert.delete().where(alert.c.host == self.host, alert.c.rule == rule,
                                               alert.c.subject == subject))
            for ev in events:
                st = ev.alert
                res = c.execute(alert_event.insert().values(
                    host=self.host, rule=st.rule, subject=st.subject, ts=now, kind=ev.kind, severity=st.severity,
                    summary=st.summary, labels=json.dumps(dict(st.labels)), duration=ev.duration))
                inserted = res.inserted_primary_key
                assert inserted is not None  # an insert always has one
                event_id = int(inserted[0])
                for ch in self.channels.values():
                    if ch.wants(st.rule, st.severity):
                        c.execute(outbox.insert().values(event_id=event_id, channel=ch.name, created=now, attempts=0,
                                                         next_attempt=first_due(now, ch.escalate_after_minutes)))
                recorded.append({"id": event_id, "kind": ev.kind, "rule": st.rule, "subject": st.subject,
                                 "summary": st.summary})
                log.info("alert %s %s: %s", ev.kind, st.rule, st.summary)
        return recorded

    # -- delivery -------------------------------------------------------------------------

    def deliver(self, now: float | None = None) -> int:
        """Send what is due on every channel, each in order, here and now (tests, `tick`)."""
        return sum(self.courier.deliver_channel(name, now) for name in self.courier.channels)

    def reconfigure(self, settings: Settings) -> None:
        """A reloaded config's rules, windows, dependencies, base URL and group wait (settings_of),
        keeping every alert's state: what fires, since when, acknowledged, notified."""
        with self.lock:
            self.rules = dict(settings["rules"])
            self.user_rules = list(settings["user_rules"])
            for ur in self.user_rules:
                self.rules[ur.rule.name] = ur.rule
            self.windows = list(settings["windows"])
            self.dependencies = list(settings["dependencies"])
            self.base_url = self.courier.base_url = settings["base_url"]
            self.courier.group_wait = settings["group_wait"]

    def set_channels(self, channels: Sequence[Channel]) -> None:
        """The config file's channels and the browser's, after one was added, changed or removed."""
        with self.lock:
            self.channels = {c.name: c for c in channels}
        self.courier.set_channels(channels)

    def try_channel(self, name: str, now: float | None = None) -> tuple[bool, str]:
        """A test notification on one channel now; the answer is kept for the alerts page."""
        ch = self.channels.get(name)
        if ch is None:
            raise KeyError(name)
        ok, said = try_channel(ch, self.base_url, self.host)
        self.trials[name] = (now or time.time(), ok, said)
        log.info("channel %s: test notification %s: %s", name, "delivered" if ok else "failed", said)
        return ok, said

    def channel_health(self) -> list[ChannelHealth]:
        """Per channel: its kind (never its URL), the last success, the last error, what waits."""
        with self.engine.connect() as c:
            counts = {ch: (last, waiting, gave_up) for ch, last, waiting, gave_up in c.execute(queries.CHANNEL_COUNTS)}
            errors = dict(c.execute(queries.CHANNEL_ERRORS).all())
        out = []
        for name, ch in self.channels.items():
            last, waiting, gave_up = counts.get(name, (None, 0, 0))
            kind = ch.url.split("://", 1)[0] + "://" if ch.format == "apprise" else ch.format
            out.append(ChannelHealth(name=name, kind=kind, last_success=last, last_error=errors.get(name),
                                     waiting=waiting, gave_up=gave_up, trial=self.trials.get(name)))
        return out

    # -- people ---------------------------------------------------------------------------

    def ack(self, rule: str, subject: str, now: float | None = None, note: str = "") -> bool:
        """Acknowledge a firing alert: no more reminders until it resolves. The note says why or
        what is being done, for whoever looks next."""
        now = now or time.time()
        with self.lock:
            st = self.states.get((rule, subject))
            if (st is None or st.state != "firing") and self.shared:
                # a standby does not evaluate this host: what fires is what the leader stored
                self.states = self._load()
                st = self.states.get((rule, subject))
            if st is None or st.state != "firing":
                return False
            with self.engine.begin() as c:
                c.execute(update(alert).where(and_(alert.c.host == self.host, alert.c.rule == rule,
                                                   alert.c.subject == subject)).values(acked_at=now,
                                                                                       ack_note=note or None))
                c.execute(alert_event.insert().values(host=self.host, rule=rule, subject=subject, ts=now,
                                                      kind="ack", severity=st.severity, summary=st.summary,
                                                      labels=json.dumps(dict(st.labels)), note=note or None))
            self.states = {**self.states, (rule, subject): replace(st, acked_at=now)}
        return True

    def silence(self, rule: str | None, subject: str | None, hours: float, reason: str = "",
                now: float | None = None, everything: bool = False) -> int:
        """Hold back this host's notifications whose rule and subject match (a shell-style
        pattern, "md*", or None for any) for `hours`; returns the silence's id. A silence that
        matches every alert, critical ones included, must say so (`everything`) and lasts at
        most ALL_SILENCE_HOURS; ValueError otherwise, or for a pattern over PATTERN_MAX."""
        now = now or time.time()
        for what, pattern in (("rule", rule), ("subject", subject)):
            if pattern is not None and len(pattern) > PATTERN_MAX:
                raise ValueError(f"the {what} pattern is {len(pattern)} characters; at most {PATTERN_MAX}")
        if matches_all(rule, "rule") and matches_all(subject):
            if not everything:
                raise ValueError("this silence matches every alert, critical ones included: confirm with \"all\" "
                                 "to silence everything")
            if hours > ALL_SILENCE_HOURS:
                raise ValueError(f"a silence of every alert lasts at most {ALL_SILENCE_HOURS // 24} days")
        with self.engine.begin() as c:
            rows: list[SilenceRow] = [(r[0], r[1], r[2]) for r in c.execute(select(silence.c.rule, silence.c.subject, silence.c.until).where(
                silence.c.host == self.host, silence.c.until > now))]
            live = len(rows)
            self._guard_together(rows, (rule or None, subject or None, now + hours * 3600), now, everything)
            if live >= SILENCES_MAX:
                raise ValueError(f"{live} silences are in force on {self.host} already (at most {SILENCES_MAX}): "
                                 "end some, or make one that covers them (a pattern such as \"md*\")")
            res = c.execute(silence.insert().values(host=self.host, rule=rule or None, subject=subject or None,
                                                    until=now + hours * 3600, reason=reason, created=now))
            inserted = res.inserted_primary_key
            assert inserted is not None
        self._all_silenced = None  # after the commit: a reading between could not see it yet
        return int(inserted[0])

    def _guard_together(self, rows: list[SilenceRow], new: SilenceRow, now: float,
                        everything: bool) -> None:
        """A silence that, with those in force, covers every rule for every subject is a silence of
        everything and is guarded as one: 18 silences "a*" to "z*", one per first letter of the
        rule names, muted every rule for 90 days without "all" and the overview said nothing."""
        before, after = covered_until(rows, self._rule_names()), covered_until([*rows, new], self._rule_names())
        if after is None or before is not None:
            return
        if not everything:
            raise ValueError(f"with the {len(rows)} silences in force this one silences every alert, critical ones "
                             "included: confirm with \"all\" to silence everything")
        if after - now > ALL_SILENCE_HOURS * 3600:
            raise ValueError(f"with the silences in force every alert would be silenced for "
                             f"{(after - now) / 86400:.0f} days; at most {ALL_SILENCE_HOURS // 24} days")

    def _rule_names(self) -> set[str]:
        return set(BUILTIN) | set(self.rules)

    def expire(self, silence_id: int, now: float | None = None) -> bool:
        """End a silence now; False when it is not this host's or already over."""
        now = now or time.time()
        with self.engine.begin() as c:
            done = c.execute(update(silence).where(silence.c.id == silence_id, silence.c.host == self.host,
                                                   silence.c.until > now).values(until=now))
        self._all_silenced = None
        return bool(done.rowcount)

    def _fired_with(self, keys: set[tuple[str, str]]) -> dict[tuple[str, str], str]:
        """The words each firing alert fired with (its summary now may say another value: the
        alerts page shows both, "= 30 now" beside "fired at = 16")."""
        if not keys:
            return {}
        with self.engine.connect() as c:
            return {(r, sub): text for r, sub, text in c.execute(
                queries.FIRED_WITH, {"host": self.host, "rules": sorted({r for r, _ in keys})}) if (r, sub) in keys}

    def silenced_all_until(self, now: float | None = None) -> float | None:
        """When the latest silence of every alert ends, if one is in force (the overview says so).
        Read from the database at most every SILENCES_SECONDS (another server, or the API on
        this one, may have made one) and at once after a change here: the overview asks on every view."""
        now = now or time.time()
        cached = self._all_silenced
        if cached is None or time.monotonic() - cached[0] >= SILENCES_SECONDS:
            with self.engine.connect() as c:
                rows = c.execute(select(silence.c.rule, silence.c.subject, silence.c.until).where(
                    silence.c.host == self.host, silence.c.until > now)).all()
            cached = self._all_silenced = (time.monotonic(), [(r[0], r[1], r[2]) for r in rows])
        return covered_until([r for r in cached[1] if r[2] > now], self._rule_names())

    def view(self, now: float | None = None, rule: str = "", severity: str = "") -> AlertsView:
        """What the alerts page shows; the history narrowed to a rule and a severity when asked."""
        now = now or time.time()
        with self.engine.connect() as c:
            history = c.execute(queries.HISTORY[(bool(rule), bool(severity))],
                                {"host": self.host, "rule": rule, "severity": severity}).all()
            box = c.execute(queries.OUTBOX_NEWEST).all()
        return AlertsView(evaluations=self.evaluations, active=self.active(now),
                          history=[HistoryEntry(**r._mapping) for r in history],
                          outbox=[OutboxEntry(**r._mapping) for r in box],
                          silences=self.silences_in_force(now), rules=sorted(self.rules),
                          channels=self.channel_health())

    def active(self, now: float | None = None) -> list[ActiveAlert]:
        """The alerts pending and firing, firing and critical first, each with its mute, what it
        fired with, what suppresses it and its ack note: from memory, and the notes read only
        when one is acknowledged (the API's /alerts read the whole page's history: 2.5 ms)."""
        now = now or time.time()
        muted = self.muted(now, set(self.states))
        active = [s for s in self.states.values() if s.state in ("pending", "firing")]
        active.sort(key=lambda s: (s.state != "firing", s.severity != "critical", -(s.fired_at or s.since)))
        notes: dict[tuple[str, str], str] = {}
        if any(s.acked_at for s in active):
            with self.engine.connect() as c:
                notes = {(r, sub): n for r, sub, n in c.execute(queries.ACK_NOTES, {"host": self.host})}
        fired = self._fired_with({s.key for s in active if s.state == "firing"})
        return [ActiveAlert(**{**s.__dict__, "labels": dict(s.labels)}, muted=s.key in muted,
                            fired_with=fired.get(s.key), suppressed_by=self.suppressed.get(s.key),
                            ack_note=notes.get(s.key) if s.acked_at else None) for s in active]

    def silences_in_force(self, now: float | None = None) -> list[Silence]:
        now = now or time.time()
        with self.engine.connect() as c:
            rows = c.execute(queries.SILENCES_IN_FORCE, {"host": self.host, "now": now}).all()
        return [Silence(**r._mapping) for r in rows]
