"""The time range a page's charts open on when the address names none.

All well: the last 24 hours. Something wrong: the shortest range in which what went wrong takes
at most the last quarter, so the chart shows the failure and the calm before it (a disk that
failed ten minutes ago drawn on 24 hours is a step in the last pixel). When it began is the
oldest pending or firing alert about what the page shows. The range chosen is put into the
page's live-update address, so the charts do not jump to another range under the reader when
the alert resolves."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from starlette.requests import Request

from app.web.site import RANGES

CALM = "24h"
# What went wrong takes at most this share of the chart's width, at its right end.
SHARE = 0.25


def range_for(began: Iterable[float], now: float) -> str:
    """The shortest range that shows what began at the earliest of `began` in its last quarter."""
    start = min(began, default=None)
    if start is None:
        return CALM
    for name, span in RANGES.items():
        if span * SHARE >= now - start:
            return name
    return list(RANGES)[-1]


def began(states: Mapping[tuple[str, str], Any], keys: Iterable[tuple[str, str]] = (),
          subject: str | None = None) -> list[float]:
    """When each pending or firing alert began: those of `keys` (rule, subject), or every one
    about `subject` (its subject, or one of its labels)."""
    wanted = set(keys)
    return [a.since for k, a in states.items() if a.state in ("pending", "firing")
            and (k in wanted or (subject is not None and (a.subject == subject or subject in a.labels.values())))]


def chosen(s: Any, request: Request, asked: str, keys: Iterable[tuple[str, str]] = (),
           subject: str | None = None) -> tuple[str, dict[str, str]]:
    """The range to draw (the one asked for when it is one) and, when it was chosen here, the
    page's live-update address that keeps it: (range, extra render context)."""
    if asked in RANGES:
        return asked, {}
    snap, _ = s.view(request)
    alerting = s.alerting_for(snap.host)
    states = alerting.states if alerting is not None else {}
    picked = range_for(began(states, keys, subject), time.time())
    query = "&".join(p for p in [request.url.query, f"range={picked}"] if p)
    return picked, {"live": f"{request.url.path}?{query}"}
