"""Notification channels made in the browser, kept in the database beside the TOML's (the
`monitor` table, section "alerts.channels"): each one's entry is what `[[alerts.channels]]`
could say, checked by the same model (ChannelConfig) before it is stored and again when read.
Its URL is a secret like the TOML's: stored because it must be used, never shown again."""

from __future__ import annotations

import logging
from typing import Any

from pydantic import ValidationError
from sqlalchemy.engine import Engine

from app.alerting.channels import Channel
from app.storage.monitors import SavedMonitor, list_monitors

log = logging.getLogger("rackpulse.alerts")

SECTION = "alerts.channels"


def saved_configs(engine: Engine, host: str) -> list[tuple[SavedMonitor, Any]]:
    """Each saved channel with its checked ChannelConfig (None when this version cannot read it)."""
    from app.alerting.config import ChannelConfig

    out: list[tuple[SavedMonitor, Any]] = []
    for m in list_monitors(engine, host, SECTION):
        try:
            out.append((m, ChannelConfig.model_validate(m.spec)))
        except ValidationError:
            log.warning("channel %r made in the browser is not understood by this version: not used", m.name)
            out.append((m, None))
    return out


def channel_of(c: Any, zone: str | None) -> Channel:
    """The Channel a checked ChannelConfig describes (the TOML's and the browser's alike)."""
    from app.alerting.policy import parse_quiet

    return Channel(c.name, c.url.get_secret_value(), c.format, tuple(c.severities), tuple(c.rules), c.timeout,
                   {k: v.get_secret_value() for k, v in c.headers.items()}, c.template, c.max_age_hours, c.group,
                   c.escalate_after_minutes, parse_quiet(c.quiet_hours, zone) if c.quiet_hours else None)


def saved_channels(engine: Engine, host: str, zone: str | None) -> list[Channel]:
    return [channel_of(c, zone) for _, c in saved_configs(engine, host) if c is not None]
