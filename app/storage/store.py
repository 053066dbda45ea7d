"""Everything rackpulse keeps in SQL: samples, rollups, collector runs, state and inventory.

The Store is one object per host and engine, built from its rooms: samples.py (writing and
reading series), inventory.py (entities and their events), rollups.py (folding and retention);
base.py holds what they share. Writes of one collector run happen in one transaction, so a
crash never leaves half a run behind.
"""

from __future__ import annotations

from app.storage.base import DAY, RES_1H, RES_5M, ROLLUPS, Late, Point, SeriesLimit, labels_key
from app.storage.locks import SharedLock, rollup_lock
from app.storage.samples import SampleWriting

__all__ = ["DAY", "RES_1H", "RES_5M", "ROLLUPS", "Late", "Point", "SeriesLimit", "SharedLock", "Store", "labels_key", "rollup_lock"]


class Store(SampleWriting):
    """Samples, rollups, runs, states and inventory of one host."""
