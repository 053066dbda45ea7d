"""What the bill reads of the store, as Protocols: the energy room never imports storage (the
rules in app/rooms.py), and `store: Any` said nothing of what it needs. The Store of
app/storage/store.py is one; a test's list of points is another."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol


class HourPoint(Protocol):
    """A point of a series' history: its start and the lowest, mean and highest value in it."""

    @property
    def ts(self) -> int: ...
    @property
    def vmin(self) -> float: ...
    @property
    def vavg(self) -> float: ...
    @property
    def vmax(self) -> float: ...


class Reading(Protocol):
    """A sample of the latest snapshot, as the report reads a source's watts now."""

    @property
    def metric(self) -> str: ...
    @property
    def value(self) -> float: ...
    @property
    def labels(self) -> Iterable[tuple[str, str]]: ...


class SeriesStore(Protocol):
    def series_of(self, metric: str) -> Sequence[tuple[int, Mapping[str, str]]]:
        """Every series of `metric` on this host: (id, its labels)."""
        ...

    def history(self, series_id: int, start: int, end: int, max_points: int = ...,
                thinned: bool = ...) -> Sequence[HourPoint]:
        """Its points from `start` to `end`: raw samples for short ranges, rollups otherwise."""
        ...

    def hours(self, series_id: int, start: int, end: int) -> Sequence[HourPoint]:
        """Its hourly points from `start` to `end`, every one (the rollups up to the hourly fold,
        the raw samples after it grouped by the hour)."""
        ...

    def raw_hours(self, series_ids: Sequence[int], start: int, end: int) -> Mapping[int, Sequence[HourPoint]]:
        """Several series' raw samples from `start` to `end`, grouped by the hour: the hours not
        folded yet."""
        ...

    def hourly_fold(self) -> tuple[int, int]:
        """(where the hourly rollups end, a count that moves whenever folded hours are rewritten):
        the hours before the first do not change while the second stays."""
        ...
