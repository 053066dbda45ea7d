"""Delivery of queued notifications: per channel, strictly in the order they happened.

Each channel is its own queue. Its oldest undelivered notification goes first, and while that
one waits for its retry nothing after it is sent: a receiver that was down gets "firing" before
"resolved", never the other way round. Like Alertmanager's group_wait, the oldest waits
`group_wait` seconds for the other events of its host and kind: those queued within it go with
it as one notification ("3 problems on nas1"), unless the channel says `group = false`. In the
server each channel has its own thread, so an endpoint that hangs delays only its own queue,
never the evaluation of alerts or another channel.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Engine, and_, select, update

from app.alerting.apprise_channel import group_body, group_title, notify
from app.alerting.channels import Channel, DeliveryError, Notice, render_group, send
from app.alerting.policy import held_for_quiet, skip_reason
from app.logsafe import redact
from app.storage.models import alert, alert_event, outbox

log = logging.getLogger("rackpulse.alerts")

Row = Any  # an outbox row joined with its alert event and the alert's episode start

BATCH = 50  # rows read per trip; a channel drains its whole backlog in one call
RETRY_CAP = 300.0  # seconds: an endpoint back after an hour gets everything within minutes


def backoff(attempts: int) -> float:
    """Seconds before the next try: 10, 20, 40 ... up to 5 minutes, with jitter."""
    return min(RETRY_CAP, 5.0 * 2 ** min(attempts, 10)) * random.uniform(0.8, 1.2)  # noqa: S311


def notice(row: Row) -> Notice:
    # The episode's start, unless a newer episode of the same alert has begun since.
    since = row.episode_since if row.episode_since is not None and row.episode_since <= row.ts else None
    return {"id": row.event_id, "kind": row.kind, "rule": row.rule, "subject": row.subject,
            "severity": row.severity, "summary": row.summary, "labels": json.loads(row.labels), "ts": row.ts,
            "duration": row.duration, "since": since}


def try_channel(ch: Channel, base_url: str = "", host: str = "") -> tuple[bool, str]:
    """Send a test notification now, beside the outbox: (delivered, what the service answered)."""
    ev: Notice = {"id": 0, "kind": "firing", "rule": "test", "subject": ch.name, "severity": "info",
                  "summary": f"rackpulse test notification to channel {ch.name}: if you read this, it arrives",
                  "labels": {"host": host} if host else {}, "ts": time.time(), "duration": None, "since": None}
    try:
        if ch.format == "apprise":
            return True, notify(ch, group_title([ev]), group_body([ev], base_url))
        body, headers = render_group(ch, [ev], base_url)
        return True, f"HTTP {send(ch, body, headers)}"
    except (DeliveryError, ValueError) as exc:
        return False, redact(str(exc))


class Courier:
    def __init__(self, engine: Engine, channels: Sequence[Channel], base_url: str = "",
                 group_wait: float = 0.0) -> None:
        self.engine = engine
        self.channels = {c.name: c for c in channels}
        self.base_url = base_url
        self.group_wait = group_wait  # seconds; 0: every event on its own
        self._wake = {name: threading.Event() for name in self.channels}
        self._due: dict[str, float] = {}  # channel -> when its oldest waiting notification is due
        self._poll: float | None = None  # set once the threads run
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.may_send: Callable[[], bool] = lambda: True  # False on a standby server (app/leader.py)

    def deliver_channel(self, name: str, now: float | None = None) -> int:
        """Send this channel's due notifications oldest first; stop at the first one not yet due
        or failing. Returns how many events were delivered."""
        ch = self.channels.get(name)
        if ch is None or not self.may_send():
            return 0  # removed in the browser meanwhile, or another server sends
        sent = 0
        while not self._stop.is_set():
            at = now if now is not None else time.time()
            q = (select(outbox, alert_event, alert.c.since.label("episode_since"),
                        alert.c.state.label("alert_state"), alert.c.acked_at.label("alert_acked"))
                 .join(alert_event, alert_event.c.id == outbox.c.event_id)
                 .outerjoin(alert, and_(alert.c.host == alert_event.c.host, alert.c.rule == alert_event.c.rule,
                                        alert.c.subject == alert_event.c.subject))
                 .where(outbox.c.channel == name, outbox.c.delivered_at.is_(None), outbox.c.gave_up_at.is_(None)))
            quiet_end = ch.quiet.until(at) if ch.quiet else None
            if quiet_end is not None:
                # Quiet hours: only critical ones are read; the rest wait, out of the way of these.
                q = q.where(alert_event.c.severity == "critical")
                self._due[name] = quiet_end
            with self.engine.connect() as c:
                rows = c.execute(q.order_by(outbox.c.id).limit(BATCH)).all()
            if not rows:
                return sent
            waiting = list(rows)
            while waiting:
                at = now if now is not None else time.time()
                if waiting[0].next_attempt > at:
                    self._due[name] = min(waiting[0].next_attempt, self._due.get(name, waiting[0].next_attempt))
                    return sent  # the oldest waits for its retry: everything after it waits too
                reason = self._skipped(ch, waiting[0])
                if reason:
                    self._mark_skipped(waiting.pop(0), reason, at)
                    continue
                group = self._group(ch, waiting, at)
                if not group:
                    self._due[name] = waiting[0].created + self.group_wait
                    return sent  # the oldest waits for the rest of its group
                if not self._send(ch, group, at):
                    return sent
                sent += len(group)
                done = {r.id for r in group}
                waiting = [r for r in waiting if r.id not in done]
        return sent

    def _skipped(self, ch: Channel, row: Row) -> str | None:
        """Why this channel's policy (escalation, quiet hours) does not send this row now."""
        escalating = ch.escalate_after_minutes > 0
        if not escalating and ch.quiet is None:
            return None  # a channel without a policy sends everything
        held = held_for_quiet(row.severity, ch.quiet, row.created) is not None
        older_episode = row.episode_since is not None and row.episode_since > row.ts
        state = "resolved" if older_episode else row.alert_state
        earlier = False
        if row.kind in ("resolved", "unwatched"):
            with self.engine.connect() as c:
                last = c.execute(select(outbox.c.skipped).join(alert_event, alert_event.c.id == outbox.c.event_id)
                                 .where(outbox.c.channel == ch.name, outbox.c.id < row.id,
                                        alert_event.c.host == row.host, alert_event.c.rule == row.rule,
                                        alert_event.c.subject == row.subject)
                                 .order_by(outbox.c.id.desc()).limit(1)).first()
            earlier = last is not None and last.skipped is not None
        return skip_reason(row.kind, row.severity, state, row.alert_acked is not None and not older_episode,
                           earlier, escalating, held)

    def _mark_skipped(self, row: Row, reason: str, at: float) -> None:
        with self.engine.begin() as c:
            c.execute(update(outbox).where(outbox.c.id == row.id).values(delivered_at=at, skipped=reason))

    def _group(self, ch: Channel, rows: Sequence[Row], at: float) -> list[Row]:
        """The oldest row and the rows of its host and kind queued within group_wait of it, or
        nothing while that window is still open. A row whose alert has an earlier row left out
        stays out too, so one alert's events keep their order."""
        head = rows[0]
        if not ch.group or self.group_wait <= 0:
            return [head]
        if at < head.created + self.group_wait:
            return []
        group, left_out = [head], set()
        for r in rows[1:]:
            if r.created > head.created + self.group_wait:
                break
            alert_key = (r.host, r.rule, r.subject)
            if (r.host == head.host and r.kind == head.kind and alert_key not in left_out
                    and r.next_attempt <= at and not self._skipped(ch, r)):
                group.append(r)
            else:
                left_out.add(alert_key)
        return group

    def _send(self, ch: Channel, rows: list[Row], now: float) -> bool:
        """Deliver these rows as one notification; on failure all of them wait for the retry."""
        evs = [notice(row) for row in rows]
        head, ids = rows[0], [r.id for r in rows]
        try:
            if ch.format == "apprise":
                notify(ch, group_title(evs), group_body(evs, self.base_url))
            else:
                body, headers = render_group(ch, evs, self.base_url)
                send(ch, body, headers)
        except (DeliveryError, ValueError) as exc:
            attempts = head.attempts + 1
            give_up = now - head.created > ch.max_age_hours * 3600
            with self.engine.begin() as c:
                c.execute(update(outbox).where(outbox.c.id.in_(ids)).values(
                    attempts=attempts, next_attempt=now + backoff(attempts), last_error=str(exc)[:500],
                    gave_up_at=now if give_up else None))
            if attempts == 1:
                log.warning("channel %s: delivery failed (%s); will retry", ch.name, exc)
            if give_up:
                log.error("channel %s: gave up on event %d after %d attempts", ch.name, head.event_id, attempts)
                return True  # the queue goes on past a notification it gave up on
            return False
        with self.engine.begin() as c:
            c.execute(update(outbox).where(outbox.c.id.in_(ids)).values(
                delivered_at=time.time(), attempts=head.attempts + 1, last_error=None))
        return True

    # -- the server's threads ----------------------------------------------------------------

    def set_channels(self, channels: Sequence[Channel]) -> None:
        """Channels made or changed in the browser: a new one gets its thread, a removed one's
        thread ends at its next look (its queue stays in the database)."""
        self.channels = {c.name: c for c in channels}
        for name in self.channels:
            if name not in self._wake:
                self._wake[name] = threading.Event()
                if self._poll is not None:
                    self._start_one(name, self._poll)

    def wake(self) -> None:
        """New notifications were queued: every channel looks now instead of at its next poll."""
        for ev in self._wake.values():
            ev.set()

    def start(self, poll: float = 5.0) -> None:
        self._poll = poll
        for name in self.channels:
            self._start_one(name, poll)

    def _start_one(self, name: str, poll: float) -> None:
        t = threading.Thread(target=self._run, args=(name, poll), name=f"courier-{name}", daemon=True)
        t.start()
        self._threads.append(t)

    def _run(self, name: str, poll: float) -> None:
        while not self._stop.is_set():
            if name not in self.channels:  # removed in the browser
                self._wake.pop(name, None)
                return
            try:
                self.deliver_channel(name)
            except Exception:  # noqa: BLE001 - a database hiccup must not end this channel's thread
                log.exception("channel %s: delivery round failed", name)
            # At the next poll, or when the oldest's group window closes if that is sooner.
            due = self._due.pop(name, None)
            wake = self._wake.get(name)
            if wake is None:
                return
            wake.wait(poll if due is None else min(poll, max(0.05, due - time.time())))
            wake.clear()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self.wake()
        deadline = time.monotonic() + timeout  # one bound for all channels (their threads are daemons)
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
        self._threads.clear()
