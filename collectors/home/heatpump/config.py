"""[collectors.heatpump]: the ISG web gateway's Modbus TCP address (read-only)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from collectors.config import CollectorBase, Seconds


class HeatpumpConfig(CollectorBase):
    # The ISG's address; empty means no heat pump ("no data").
    host: str = ""
    port: Annotated[int, Field(ge=1, le=65535)] = 502
    unit: Annotated[int, Field(ge=0, le=247)] = 1
    # One full poll every 30 s is what the ISG tolerates well; do not go much lower.
    interval: Seconds = 30.0
    command_timeout: Seconds = 3.0
    # heatpump_backup_heater: the booster (NHZ) made more than this share of a day's heat on a day
    # whose mean outside temperature was above backup_below_celsius (colder, the booster is meant
    # to help; warmer, it is a setting: the bivalence point or a hot-water program), on a day with
    # at least backup_min_kwh of heat (a mild day's few kWh make the share noise).
    backup_share: Annotated[float, Field(gt=0, lt=1)] = 0.10
    backup_below_celsius: float = -5.0
    backup_min_kwh: Annotated[float, Field(ge=0)] = 5.0
    # heatpump_short_cycling: more compressor starts than this within an hour.
    max_starts_per_hour: Annotated[int, Field(ge=1)] = 3
    # The heating season for the seasonal COP: from this month to the one before it (7: July to June).
    season_start_month: Annotated[int, Field(ge=1, le=12)] = 7
