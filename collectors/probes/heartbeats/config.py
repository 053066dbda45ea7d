"""[collectors.heartbeats]: a dead man's switch for cron jobs and timers, like healthchecks.io.

Written as a list, `[[collectors.heartbeats]] name = "nightly-backup", every = "24h", grace = "2h"`,
or as a section with its own settings and `[[collectors.heartbeats.checks]]`. A job calls its
URL (`rackpulse heartbeats url NAME` prints it) when it ran; silence past `every` plus `grace`
is `heartbeat_missed`, a call to `/fail` is `heartbeat_failed`."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, field_validator, model_validator

from collectors.config import CollectorBase, Seconds, Strict, unique_names

UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
SPAN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|min|m|h|d|w)?\s*$")


def seconds_of(value: Any) -> Any:
    """"24h", "90m", "2d", "30s" or a number of seconds, quoted ("60", as a TOML file often has it) or
    not; anything else is left for the model to refuse."""
    if isinstance(value, str):
        m = SPAN.match(value)
        if not m:
            raise ValueError(f"{value!r}: a number of seconds or a span such as \"30m\", \"24h\", \"7d\"")
        return float(m.group(1)) * UNITS[m.group(2) or "s"]
    return value


Span = Annotated[float, BeforeValidator(seconds_of), Field(gt=0)]


class Heartbeat(Strict):
    name: Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[^\x00-\x1f/]+$")]
    every: Span  # how often the job runs
    grace: Span = 3600.0  # how late it may be before it is missed
    public: bool = False  # shown on a public /status


class HeartbeatsConfig(CollectorBase):
    # How often the collector looks at the pings; a ping itself is recorded at once.
    interval: Seconds = 30.0
    checks: list[Heartbeat] = []

    @model_validator(mode="before")
    @classmethod
    def _a_list_is_the_checks(cls, data: Any) -> Any:
        return {"checks": data} if isinstance(data, list) else data

    @field_validator("checks")
    @classmethod
    def _unique(cls, checks: list[Heartbeat]) -> list[Heartbeat]:
        return unique_names(checks, "heartbeat")
