"""[energy]: what a kWh costs, its time-of-use bands, the month's budget, and which sources another
already counts (the servers behind the UPS)."""

from __future__ import annotations

import math
import re
from datetime import tzinfo
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

_HHMM = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")


class Tariff(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    start: str = Field(alias="from")  # "22:00", local time
    to: str  # "06:00": a band may run past midnight
    price: Annotated[float, Field(ge=0)]

    @field_validator("start", "to")
    @classmethod
    def _clock(cls, v: str) -> str:
        if not _HHMM.fullmatch(v):
            raise ValueError(f"{v!r} is not a time of day as HH:MM")
        return v

    def minutes(self) -> tuple[int, int]:
        (h0, m0), (h1, m1) = (map(int, t.split(":")) for t in (self.start, self.to))
        return h0 * 60 + m0, h1 * 60 + m1

    def covers(self, minute_of_day: int) -> bool:
        a, b = self.minutes()
        return a <= minute_of_day < b if a < b else (minute_of_day >= a or minute_of_day < b)


class EnergyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    price_per_kwh: Annotated[float, Field(ge=0)] = 0.0  # outside every tariff band
    currency: str = "EUR"
    monthly_budget: Annotated[float, Field(gt=0)] | None = None  # energy_budget: the projection past it
    tariffs: list[Tariff] = []
    # A source whose energy another source already counts, so the lab's total counts it once:
    # {r720 = "ups"} when the UPS feeds the server whose BMC also reports its draw.
    inside: dict[str, str] = {}
    # The time zone days, months and tariff bands are in ("Europe/Berlin"); unset: this machine's.
    timezone: str | None = None
    # power_above_baseline: a source drawing more than baseline_ratio times its median of the last
    # baseline_days days, and at least baseline_min_watts more than it (for as long as
    # [alerts.rules.power_above_baseline] for_seconds says, 30 minutes unless set).
    baseline_ratio: Annotated[float, Field(gt=1)] = 1.5
    baseline_days: Annotated[int, Field(ge=2, le=60)] = 7
    baseline_min_watts: Annotated[float, Field(ge=0)] = 20.0

    @field_validator("timezone")
    @classmethod
    def _zone(cls, v: str | None) -> str | None:
        if v is not None:
            from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

            try:
                ZoneInfo(v)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(f"unknown time zone {v!r} (a name such as \"Europe/Berlin\")") from None
        return v

    @model_validator(mode="after")
    def _one_price_a_minute(self) -> EnergyConfig:
        """Two bands over the same minute are refused, both named: the first used to win silently."""
        owner: list[Tariff | None] = [None] * 1440
        for band in self.tariffs:
            for m in range(1440):
                if not band.covers(m):
                    continue
                other = owner[m]
                if other is not None:
                    both = sorted(x for x in range(1440) if band.covers(x) and other.covers(x))
                    raise ValueError(f"tariff bands {other.start}-{other.to} and {band.start}-{band.to} overlap "
                                     f"from {m // 60:02d}:{m % 60:02d} ({len(both)} minutes a day): one price a minute")
                owner[m] = band
        return self

    def zone(self) -> tzinfo | None:
        """None: this machine's local time (datetime's naive local, with its daylight saving)."""
        from zoneinfo import ZoneInfo

        return ZoneInfo(self.timezone) if self.timezone else None

    def price_at(self, minute_of_day: int) -> float:
        """The price of a kWh used at this minute of the (local) day: the first band that covers it."""
        return next((t.price for t in self.tariffs if t.covers(minute_of_day)), self.price_per_kwh)

    def price_of_hour(self, minute_of_day: int) -> float:
        """The price of a kWh used evenly over the hour that starts at this minute, by the minute:
        a band from 22:30 prices half of the 22:00 hour (by the hour's start it priced all of it)."""
        return math.fsum(self.price_at((minute_of_day + m) % 1440) for m in range(60)) / 60
