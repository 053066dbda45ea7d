"""Each series' closed hours, kept between views: an hour the hourly fold has closed does not
change, so /energy reads it once, not on every view (a year of a source is 8,760 rollups, 94 % of
a 12-month chart's cost before, measured with bench/energy_page.py). When the fold moves on, only
the hours it closed are read and added.

Read again whole when the store's count of rewrites moves (a late batch refolded hours; on
PostgreSQL also once a minute, for another server's refolds) and when a view asks for hours before
the kept ones."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from app.energy.hours import HourTable
from app.energy.reading import HourPoint, SeriesStore

H = 3600
SERIES_KEPT = 64  # a store's energy series (a lab has a dozen sources); past it the oldest read goes


def energy_of(points: Sequence[HourPoint], level: float | None = None) -> list[tuple[int, float]]:
    """(hour's start, joules) from a counter's hourly points (ts, vmin, vavg, vmax): an hour's
    highest value minus the hour before's (`level` before the first; else the first's lowest)."""
    out = []
    before = level
    for p in points:
        used = p.vmax - (p.vmin if before is None else before)
        out.append((int(p.ts), used if used > 0.0 else 0.0))  # a counter that fell (a reset not caught) counts nothing
        before = p.vmax
    return out


@dataclass
class Closed:
    """A series' hours up to the fold, and the counter's level at the fold (the last one's highest
    value): where the first hour after it is counted from."""

    table: HourTable
    level: float | None


def read_closed(store: SeriesStore, series_id: int, start: int, end: int, level: float | None = None) -> Closed:
    """The hours that start in [start, end), each counted from the hour before's highest value
    (read too, unless `level` gives it)."""
    points = store.hours(series_id, start if level is not None else start - H, end)
    pairs = [(t, j) for t, j in energy_of(points, level) if t >= start]
    return Closed(HourTable(pairs), points[-1].vmax if points else level)


@dataclass
class Book:
    start: int  # the first hour kept
    fold: int  # the hours before this are kept: the store's hourly fold when last read
    generation: int
    closed: Closed


class Books:
    """The kept hours of one store's series. Thread-safe: pages are served from a pool."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[int, Book] = OrderedDict()

    def forget(self) -> None:
        """Nothing kept: the next view reads every hour (a bench's cold view)."""
        with self._lock:
            self._kept.clear()

    def closed(self, store: SeriesStore, series_id: int, start: int, fold: int, generation: int) -> Closed:
        """The series' hours from `start` up to the fold, read only where not kept."""
        with self._lock:  # one read at a time: two views at once read a series once
            book = self._kept.get(series_id)
            if book is not None and book.generation == generation and book.start <= start and book.fold <= fold:
                if book.fold < fold:  # the fold closed more hours: those only, counted from the level
                    more = read_closed(store, series_id, book.fold, fold, book.closed.level)
                    # a new table, not the kept one changed: a view may be summing it now
                    book.closed = Closed(book.closed.table.extended(zip(more.table.starts, more.table.joules_of,
                                                                        strict=True)), more.level)
                    book.fold = fold
            else:
                book = Book(start, fold, generation, read_closed(store, series_id, start, fold))
            self._kept[series_id] = book
            self._kept.move_to_end(series_id)
            while len(self._kept) > SERIES_KEPT:
                self._kept.popitem(last=False)
            return book.closed


_BOOKS: weakref.WeakKeyDictionary[SeriesStore, Books] = weakref.WeakKeyDictionary()
_BOOKS_LOCK = threading.Lock()


def books(store: SeriesStore) -> Books:
    """One per store (a host's): kept as long as the store is."""
    with _BOOKS_LOCK:
        found = _BOOKS.get(store)
        if found is None:
            found = _BOOKS[store] = Books()
        return found
