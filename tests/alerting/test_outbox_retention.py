"""Finished notifications leave the outbox after OUTBOX_KEEP_DAYS; what waits never does, and each
channel's newest delivery and newest error stay for its line on the alerts page."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from app.alerting import queries
from app.storage.db import make_engine, upgrade
from app.storage.models import outbox

NOW = 1_800_000_000.0
DAY = 86400.0


def row(i: int, channel: str, age_days: float, **state: object) -> dict[str, object]:
    created = NOW - age_days * DAY
    return {"id": i, "event_id": i, "channel": channel, "created": created, "attempts": 1,
            "next_attempt": created, "delivered_at": None, "gave_up_at": None, "last_error": None,
            "skipped": None, **state}


def test_old_finished_deliveries_go_and_waiting_ones_and_each_channels_last_word_stay(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    upgrade(url)
    engine = make_engine(url)
    old = NOW - 90 * DAY
    rows = [
        row(1, "hook", 90, delivered_at=old),  # old and not its newest delivery: goes
        row(2, "hook", 80, delivered_at=old + 10 * DAY),  # hook's newest delivery: stays
        row(3, "hook", 70, gave_up_at=old + 20 * DAY, last_error="status 502"),  # its newest error: stays
        row(4, "hook", 60, gave_up_at=old + 30 * DAY),  # given up, no error kept: goes
        row(5, "mail", 100, delivered_at=old, skipped="quiet hours"),  # a skip: goes
        row(6, "mail", 100, last_error="timed out"),  # still waiting (retrying), however old: stays
        row(7, "mail", 2, delivered_at=NOW - DAY),  # recent: stays
        row(8, "mail", 50, delivered_at=NOW - 50 * DAY, last_error="refused"),  # finally sent; mail's newest error: stays
    ]
    with engine.begin() as c:
        c.execute(outbox.insert(), rows)
        before = (sorted(c.execute(queries.CHANNEL_COUNTS).all())[0][1], dict(c.execute(queries.CHANNEL_ERRORS).all()))
    assert queries.forget_delivered(engine, now=NOW) == 3
    with engine.connect() as c:
        assert sorted(c.execute(select(outbox.c.id)).scalars()) == [2, 3, 6, 7, 8]
        after = (sorted(c.execute(queries.CHANNEL_COUNTS).all())[0][1], dict(c.execute(queries.CHANNEL_ERRORS).all()))
    assert after == before == (old + 10 * DAY, {"hook": "status 502", "mail": "refused"})
    assert queries.forget_delivered(engine, now=NOW) == 0
    engine.dispose()
