"""[collectors.rapl]: the CPUs' own energy counters (RAPL), under host_root/sys/class/powercap."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from collectors.config import CollectorBase, Seconds


class RaplConfig(CollectorBase):
    interval: Seconds = 30.0
    # The lab energy source its packages make together (/energy). A plug or a BMC that already
    # measures this server holds it: [energy] inside = { cpu = "rack" } counts it once.
    source: Annotated[str, Field(min_length=1)] = "cpu"
    # A zone rising faster than this is a bad read or a counter someone reset (writing 0 to
    # energy_uj), not power: its rise is not booked.
    max_watts: Annotated[float, Field(gt=0)] = 2000.0
