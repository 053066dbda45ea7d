"""[collectors.smart]: which disks smartctl asks, and how (never waking a sleeping disk)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator

from collectors.config import Argv, CollectorBase, Seconds
from collectors.disks.smart.schedule import SelfTestConfig


class SmartConfig(CollectorBase):
    interval: Seconds = 300.0
    timeout: Seconds = 60.0
    smartctl: Argv = ["smartctl"]
    # Devices to query; empty means `smartctl --scan` decides.
    devices: list[str] = []
    # Never wake a sleeping disk: smartctl --nocheck=<this>. "never" disables the check.
    nocheck: str = "standby"
    temperature_warning: float = 50.0
    # How many disks are asked at once: a 24-bay shelf at 150 ms a disk takes 3.6 s one by one.
    parallel: int = Field(4, ge=1, le=64)
    # Scheduled self-tests (off by default: the one command sent to a disk that is not a read).
    selftest: SelfTestConfig = SelfTestConfig()
    # Rated endurance (TB written) by model, for SSDs that report no wear of their own:
    # {"Samsung SSD 870 EVO 1TB" = 600}; * matches anything ("Samsung SSD 870 EVO*").
    rated_tbw: dict[str, Annotated[float, Field(gt=0)]] = {}

    @field_validator("nocheck")
    @classmethod
    def _nocheck(cls, v: str) -> str:
        if v not in ("never", "sleep", "standby", "idle"):
            raise ValueError("must be one of never, sleep, standby, idle")
        return v
