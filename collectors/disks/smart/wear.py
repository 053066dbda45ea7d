"""How worn an SSD is and when it reaches 100 % at the rate it has worn so far.

Sources, best first: NVMe's "percentage used" (the drive's own estimate of its rated life, may
pass 100); an ATA SSD's wear attribute, whose normalized value counts down from 100 (177
Wear_Leveling_Count, 231 SSD_Life_Left, 233 Media_Wearout_Indicator, 202 Percent_Lifetime_Remain,
named so by smartctl's drive database); else bytes written against a rated TBW the user gives per
model. The rate is per power-on hour (a disk that is off does not wear), so the forecast assumes
the disk stays on as it has been.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

from collectors.disks.smart.state import Disk

# ATA wear attributes by the name smartctl gives them: the normalized value is life left (100 new).
LIFE_LEFT_NAMES = ("Wear_Leveling_Count", "SSD_Life_Left", "Media_Wearout_Indicator", "Percent_Lifetime_Remain",
                   "Remaining_Lifetime_Perc", "Perc_Rated_Life_Remain")
# Bytes written: the attribute's name says its unit (drivedb.h names them so per model).
WRITTEN_UNITS = {"Total_LBAs_Written": 512, "Host_Writes_32MiB": 32 << 20, "Host_Writes_GiB": 1 << 30,
                 "Lifetime_Writes_GiB": 1 << 30, "Host_Writes_MiB": 1 << 20, "Total_Writes_GiB": 1 << 30}
NVME_DATA_UNIT = 512_000  # "data units written": thousands of 512-byte units (NVMe base specification)


@dataclass(frozen=True, slots=True)
class Wear:
    used_percent: float  # 0 new, 100 at its rated life
    source: str  # "NVMe percentage used", "SMART 177 Wear_Leveling_Count", "600 TBW rated"
    written_bytes: float | None = None
    full_at: float | None = None  # epoch when 100 % is reached at this rate; None: not wearing or past it


def written_bytes(d: Disk) -> float | None:
    for r in d.table.nvme:
        if r.name == "data_units_written" and isinstance(r.value, int | float):
            return float(r.value) * NVME_DATA_UNIT
    for a in d.table.ata:
        unit = WRITTEN_UNITS.get(a.name)
        if unit is not None and a.decoded is not None:
            return a.decoded * unit
    return None


def wear(d: Disk, rated_tbw: Mapping[str, float] | None = None, now: float | None = None) -> Wear | None:
    """The disk's wear and its forecast; None for a spinning disk (or an SSD that says nothing)."""
    now = time.time() if now is None else now
    written = written_bytes(d)
    used, source = None, ""
    if (pu := d.attributes.get("percentage_used")) is not None:
        used, source = pu, "NVMe percentage used"
    else:
        for a in d.table.ata:
            if a.name in LIFE_LEFT_NAMES and a.value is not None and 0 <= a.value <= 100:
                used, source = 100.0 - a.value, f"SMART {a.id} {a.name}"
                break
    if used is None and written is not None:
        tbw = _rated(d.model, rated_tbw or {})
        if tbw:
            used, source = written / (tbw * 1e12) * 100, f"{tbw:g} TBW rated"
    if used is None:
        return None
    hours = d.power_on_hours
    full_at = None
    if hours and used > 0 and used < 100:
        full_at = now + (100 - used) / (used / hours) * 3600
    return Wear(round(used, 2), source, written, full_at)


def _rated(model: str | None, rated: Mapping[str, float]) -> float | None:
    """A rated TBW by model: an exact name, or a pattern with * ("Samsung SSD 870 EVO*")."""
    if not model:
        return None
    for pattern, tbw in rated.items():
        if re.fullmatch(re.escape(pattern).replace(r"\*", ".*"), model):
            return tbw
    return None


def forecast_words(w: Wear) -> str:
    """ "3 % used (NVMe percentage used); 100 % at this rate in March 2031"."""
    said = f"{w.used_percent:g} % used ({w.source})"
    if w.used_percent >= 100:
        return said + ": past its rated life"
    if w.full_at is None:
        return said
    return said + "; 100 % at this rate in " + time.strftime("%B %Y", time.localtime(min(w.full_at, 253402300799)))
