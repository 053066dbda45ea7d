"""Delivery of queued notifications: per channel, strictly in the order they happened.

Each channel is its own queue. Its oldest undelivered notification goes first, and while that
one waits for its retry nothing after it is sent: a receiver that was down gets "firing" before
"resolved", never the other way round. In the server each channel has its own thread, so an
endpoint that hangs delays only its own queue, never the evaluation of alerts or another channel.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Sequence

from sqlalchemy import Engine, and_, select, update

from app.alerting.apprise_channel import body as message
from app.alerting.apprise_channel import notify, title
from app.alerting.channels import Channel, DeliveryError, render, send
from app.storage.models import alert, alert_event, outbox

log = logging.getLogger("rackpulse.alerts")

BATCH = 50  # rows read per trip; a channel drains its whole backlog in one call
RETRY_CAP = 300.0  # seconds: an endpoint back after an hour gets everything within minutes


def backoff(attempts: int) -> float:
    """Seconds before the next try: 10, 20, 40 ... up to 5 minutes, with jitter."""
    return min(RETRY_CAP, 5.0 * 2 ** min(attempts, 10)) * random.uniform(0.8, 1.2)  # noqa: S311


class Courier:
    def __init__(self, engine: Engine, channels: Sequence[Channel], base_url: str = "") -> None:
        self.engine = engine
        self.channels = {c.name: c for c in channels}
        self.base_url = base_url
        self._wake = {name: threading.Event() for name in self.channels}
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def deliver_channel(self, name: str, now: float | None = None) -> int:
        """Send this channel's due notifications oldest first; stop at the first one not yet due
        or failing. Returns how many were delivered."""
        ch = self.channels[name]
        sent = 0
        while not self._stop.is_set():
            with self.engine.connect() as c:
                rows = c.execute(
                    select(outbox, alert_event, alert.c.since.label("episode_since"))
                    .join(alert_event, alert_event.c.id == outbox.c.event_id)
                    .outerjoin(alert, and_(alert.c.host == alert_event.c.host, alert.c.rule == alert_event.c.rule,
                                           alert.c.subject == alert_event.c.subject))
                    .where(outbox.c.channel == name, outbox.c.delivered_at.is_(None), outbox.c.gave_up_at.is_(None))
                    .order_by(outbox.c.id).limit(BATCH)).all()
            if not rows:
                return sent
            for row in rows:
                at = now if now is not None else time.time()
                if row.next_attempt > at:
                    return sent  # the oldest waits for its retry: everything after it waits too
                if not self._send_one(ch, row, at):
                    return sent
                sent += 1
        return sent

    def _send_one(self, ch: Channel, row, now: float) -> bool:
        ev = {"id": row.event_id, "kind": row.kind, "rule": row.rule, "subject": row.subject,
              "severity": row.severity, "summary": row.summary, "labels": json.loads(row.labels), "ts": row.ts,
              "duration": row.duration, # The episode's start, unless a newer episode of the same alert has begun since.
              "since": row.episode_since if row.episode_since is not None and row.episode_since <= row.ts else None}
        try:
            if ch.format == "apprise":
                notify(ch, title(ev), message(ev, self.base_url))
            else:
                body, headers = render(ch, ev, self.base_url)
                send(ch, body, headers)
        except (DeliveryError, ValueError) as exc:
            attempts = row.attempts + 1
            give_up = now - row.created > ch.max_age_hours * 3600
            with self.engine.begin() as c:
                c.execute(update(outbox).where(outbox.c.id == row.id).values(
                    attempts=attempts, next_attempt=now + backoff(attempts), last_error=str(exc)[:500],
                    gave_up_at=now if give_up else None))
            if attempts == 1:
                log.warning("channel %s: delivery failed (%s); will retry", ch.name, exc)
            if give_up:
                log.error("channel %s: gave up on event %d after %d attempts", ch.name, row.event_id, attempts)
                return True  # the queue goes on past a notification it gave up on
            return False
        with self.engine.begin() as c:
            c.execute(update(outbox).where(outbox.c.id == row.id).values(
                delivered_at=time.time(), attempts=row.attempts + 1, last_error=None))
        return True

    # -- the server's threads ----------------------------------------------------------------

    def wake(self) -> None:
        """New notifications were queued: every channel looks now instead of at its next poll."""
        for ev in self._wake.values():
            ev.set()

    def start(self, poll: float = 5.0) -> None:
        for name in self.channels:
            t = threading.Thread(target=self._run, args=(name, poll), name=f"courier-{name}", daemon=True)
            t.start()
            self._threads.append(t)

    def _run(self, name: str, poll: float) -> None:
        while not self._stop.is_set():
            try:
                self.deliver_channel(name)
            except Exception:  # noqa: BLE001 - a database hiccup must not end this channel's thread
                log.exception("channel %s: delivery round failed", name)
            self._wake[name].wait(poll)
            self._wake[name].clear()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self.wake()
        deadline = time.monotonic() + timeout  # one bound for all channels (their threads are daemons)
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
        self._threads.clear()
