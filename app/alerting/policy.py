"""A channel's own rules about what it is told, and when.

- `escalate_after_minutes`: the channel is the second line. Its notifications wait that long and
  go only if the alert still fires unacknowledged then; the resolution of one it was never told
  is not sent either.
- `quiet_hours = "23:00-07:00"` (in `alerts.timezone`, default the host's): warnings wait until
  the quiet hours end; critical ones pass. A warning whose alert resolved meanwhile is not sent,
  nor its resolution: the morning brings what still matters.

What is not sent is marked `skipped` with its reason (the deliveries table shows it), so the
channel's queue goes on past it.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from zoneinfo import ZoneInfo

QUIET = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d)$")


@dataclass(frozen=True)
class QuietHours:
    start: dt.time
    end: dt.time
    zone: dt.tzinfo | None = None  # None: the host's local time

    def until(self, ts: float) -> float | None:
        """When the quiet hours that `ts` falls in end, or None outside them."""
        when = dt.datetime.fromtimestamp(ts, self.zone) if self.zone else dt.datetime.fromtimestamp(ts).astimezone()
        start = when.replace(hour=self.start.hour, minute=self.start.minute, second=0, microsecond=0)
        end = when.replace(hour=self.end.hour, minute=self.end.minute, second=0, microsecond=0)
        if self.start < self.end:  # "01:00-06:00": within one day
            return end.timestamp() if start <= when < end else None
        # "23:00-07:00": across midnight
        if when >= start:
            return (end + dt.timedelta(days=1)).timestamp()
        return end.timestamp() if when < end else None


def parse_quiet(spec: str, zone: str | None = None) -> QuietHours:
    """"23:00-07:00" -> QuietHours; ValueError with the expected shape otherwise."""
    m = QUIET.match(spec.strip())
    if not m or m.group(1, 2) == m.group(3, 4):
        raise ValueError(f"quiet_hours {spec!r}: use \"HH:MM-HH:MM\" with two different times, e.g. \"23:00-07:00\"")
    h1, m1, h2, m2 = (int(x) for x in m.groups())
    return QuietHours(dt.time(h1, m1), dt.time(h2, m2), ZoneInfo(zone) if zone else None)


def first_due(created: float, escalate_minutes: float) -> float:
    """When a notification queued at `created` may first go."""
    return created + escalate_minutes * 60


def skip_reason(kind: str, severity: str, alert_state: str | None, acked: bool, earlier_skipped: bool,
                escalating: bool, quiet: bool) -> str | None:
    """Why a due notification is not sent on this channel, or None to send it.

    `alert_state` and `acked` are the alert's now; `earlier_skipped`: this channel's last
    notification of the same alert was skipped; `quiet`: it was held for quiet hours."""
    if kind in ("resolved", "unwatched"):
        return "its firing was not sent on this channel" if earlier_skipped else None
    if not (escalating or quiet):
        return None
    if alert_state != "firing":
        return "resolved before it was due" if escalating else "resolved during quiet hours"
    if escalating and acked:
        return "acknowledged before it was due"
    return None


def held_for_quiet(severity: str, quiet: QuietHours | None, at: float) -> float | None:
    """When a notification of this severity may go, if quiet hours hold it now."""
    if quiet is None or severity == "critical":
        return None
    return quiet.until(at)
