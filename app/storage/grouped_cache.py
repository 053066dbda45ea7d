"""Charts of long ranges, kept for a minute: a year's chart is 8,760 hourly rollups grouped by
the database into 1,460 points, most of its cost (measured: bench/page_cpu.py), and those points
change only when the hourly fold moves on (a new key: the range's last folded hour is in it) or
when late samples refold hours already folded (this process says so with `changed`; a refold by
another server on the same PostgreSQL shows within `TTL`). The newest part, after the fold, is
never kept: it is read fresh on every request."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from sqlalchemy import Engine

from app.storage.base import Point

TTL = 60.0  # seconds: the longest a refold by another process goes unseen
ENTRIES = 32  # charts (a year at 1,460 points is about 250 KB): a few hosts' worth of open pages

Key = tuple[int, int, int, int, int]  # series, resolution, first bucket, end bucket, buckets a point


class GroupedCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[int, Key], tuple[float, list[Point]]] = OrderedDict()
        self.generation = 0

    def changed(self) -> None:
        """Folded rollups were rewritten (late samples, an agent's compacted backlog, retention):
        nothing kept before is read again."""
        with self._lock:
            self.generation += 1
            self._kept.clear()

    def get(self, key: Key, read: Callable[[], list[Point]], now: float | None = None) -> list[Point]:
        now = time.monotonic() if now is None else now
        with self._lock:
            generation = self.generation  # taken before the read: a change during it wins
            hit = self._kept.get((generation, key))
            if hit is not None and now - hit[0] <= TTL:
                self._kept.move_to_end((generation, key))
                return list(hit[1])  # a copy: the caller may add the newest points to it
        points = read()
        with self._lock:
            if generation == self.generation:
                self._kept[(generation, key)] = (now, points)
                self._kept.move_to_end((generation, key))
                while len(self._kept) > ENTRIES:
                    self._kept.popitem(last=False)
        return list(points)


_CACHES: dict[int, GroupedCache] = {}


def grouped_cache(engine: Engine) -> GroupedCache:
    """One per engine, as its rollup lock: every Store on the same database shares it."""
    return _CACHES.setdefault(id(engine), GroupedCache())
