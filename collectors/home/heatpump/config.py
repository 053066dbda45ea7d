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
