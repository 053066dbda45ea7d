"""Where a disk's failure-predicting ATA counters stand against published failure statistics.

Source: Backblaze, "What SMART Stats Tell Us About Hard Drives" (Andy Klein, 6 October 2016),
https://www.backblaze.com/blog/what-smart-stats-indicate-hard-drive-failures/ , over the
SMART data of about 68,000 drives: for each of five attributes, the share of working drives
and of failed drives whose raw value was above zero. Backblaze investigates a drive when any
of the five is above zero; 76.7 % of its failed drives had at least one above zero, against
4.2 % of the working ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

SOURCE = ("Backblaze, “What SMART Stats Tell Us About Hard Drives” (6 October 2016)",
          "https://www.backblaze.com/blog/what-smart-stats-indicate-hard-drive-failures/")

# attribute id: (name, % of working drives with raw > 0, % of failed drives with raw > 0)
STATS: dict[str, tuple[str, float, float]] = {
    "5": ("Reallocated sectors", 1.1, 42.2),
    "187": ("Reported uncorrectable errors", 0.5, 43.5),
    "188": ("Command timeouts", 4.8, 44.5),
    "197": ("Current pending sectors", 0.7, 43.1),
    "198": ("Offline uncorrectable sectors", 0.3, 33.0),
}
ANY_WORKING, ANY_FAILED = 4.2, 76.7


@dataclass(frozen=True)
class Standing:
    id: str  # the ATA attribute id, "5"
    name: str
    raw: float
    working: float  # % of working drives with a raw value above zero
    failed: float  # % of failed drives with one
    above_zero: bool
    words: str


def standing(attributes: Mapping[str, float]) -> list[Standing]:
    """One row per attribute the disk reports: its raw value and what that means in words."""
    rows = []
    for attr, (name, working, failed) in STATS.items():
        raw = attributes.get(attr)
        if raw is None:
            continue
        if raw > 0:
            words = (f"above zero, like {failed:g} % of the drives that failed and only {working:g} % of those "
                     "still working")
        else:
            words = f"zero, like {100 - working:g} % of working drives"
        rows.append(Standing(attr, name, raw, working, failed, raw > 0, words))
    return rows
