"""The statements the alerts page and every evaluation run, built once; the outbox's retention.

Building a SQLAlchemy expression costs more than running it here (its cache key, its
comparisons): the alerts page spent about a tenth of its time building the same six queries
on every view (py-spy on the demo). Parameters are bound at each call."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import Engine, Select, and_, bindparam, delete, func, select

from app.storage.models import alert, alert_event, outbox, silence

# silences in force on a host: (rule, subject) patterns, and the whole rows for the page
SILENCE_PATTERNS = select(silence.c.rule, silence.c.subject).where(
    silence.c.host == bindparam("host"), silence.c.until > bindparam("now"))
SILENCES_IN_FORCE = select(silence).where(
    silence.c.host == bindparam("host"), silence.c.until > bindparam("now")).order_by(silence.c.until)

# per channel: its last delivery (not a skip), what waits, what was given up
CHANNEL_COUNTS = select(
    outbox.c.channel, func.max(outbox.c.delivered_at).filter(outbox.c.skipped.is_(None)),
    func.count(outbox.c.id).filter(and_(outbox.c.delivered_at.is_(None), outbox.c.gave_up_at.is_(None))),
    func.count(outbox.c.gave_up_at)).group_by(outbox.c.channel)
# per channel: the error of its newest delivery that had one
CHANNEL_ERRORS = select(outbox.c.channel, outbox.c.last_error).where(outbox.c.id.in_(
    select(func.max(outbox.c.id)).where(outbox.c.last_error.is_not(None)).group_by(outbox.c.channel)))

ACK_NOTES = select(alert.c.rule, alert.c.subject, alert.c.ack_note).where(
    alert.c.host == bindparam("host"), alert.c.ack_note.is_not(None))
FIRED_WITH = (select(alert_event.c.rule, alert_event.c.subject, alert_event.c.summary)
              .where(alert_event.c.host == bindparam("host"), alert_event.c.kind == "firing",
                     alert_event.c.rule.in_(bindparam("rules", expanding=True)))
              .order_by(alert_event.c.id))
OUTBOX_NEWEST = (select(outbox, alert_event.c.rule, alert_event.c.subject, alert_event.c.kind)
                 .join(alert_event, alert_event.c.id == outbox.c.event_id)
                 .order_by(outbox.c.id.desc()).limit(50))


def _history(by_rule: bool, by_severity: bool) -> Select[Any]:
    q = select(alert_event).where(alert_event.c.host == bindparam("host"))
    if by_rule:
        q = q.where(alert_event.c.rule == bindparam("rule"))
    if by_severity:
        q = q.where(alert_event.c.severity == bindparam("severity"))
    return q.order_by(alert_event.c.id.desc()).limit(100)


# the newest 100 events of a host, narrowed to a rule and/or a severity
HISTORY = {(r, s): _history(r, s) for r in (False, True) for s in (False, True)}


# Finished deliveries are kept this long: the outbox otherwise grew with every notification,
# and the alerts page counted it whole on every view.
OUTBOX_KEEP_DAYS = 30


def forget_delivered(engine: Engine, now: float | None = None, keep_days: float = OUTBOX_KEEP_DAYS) -> int:
    """Deliveries finished (sent, skipped or given up) more than keep_days ago leave the outbox;
    those waiting never do, and each channel keeps its newest delivery and its newest error, so
    the channels table still says when each last worked and how it last failed (its "given up"
    count becomes the last keep_days'). Returns the rows removed."""
    cut = (now or time.time()) - keep_days * 86400
    finished = func.coalesce(outbox.c.delivered_at, outbox.c.gave_up_at)
    newest_ok = select(func.max(outbox.c.id)).where(outbox.c.delivered_at.is_not(None),
                                                    outbox.c.skipped.is_(None)).group_by(outbox.c.channel)
    newest_error = select(func.max(outbox.c.id)).where(outbox.c.last_error.is_not(None)).group_by(outbox.c.channel)
    with engine.begin() as c:
        return int(c.execute(delete(outbox).where(finished.is_not(None), finished < cut,
                                                  outbox.c.id.not_in(newest_ok), outbox.c.id.not_in(newest_error)))
                   .rowcount or 0)
