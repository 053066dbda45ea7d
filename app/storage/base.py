"""What the Store's rooms share: the resolutions, how a label set is keyed, the statements
every run executes, and the connection-level state each part of the Store reads."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from typing import Any, NamedTuple, TypedDict

from sqlalchemy import Engine, bindparam, func, select, update
from sqlalchemy.dialects import postgresql, sqlite

from app.storage.locks import rollup_lock
from app.storage.models import (
    collector_run,
    collector_state,
    entity,
    meta,
    rollup_1h,
    rollup_5m,
    series,
)
from collectors.base import Labels

RES_5M, RES_1H = 300, 3600
FOLD_SERIES = 500  # series per fold transaction: short enough that ingest (SQLite: one writer) barely waits
ROLLUPS = {RES_5M: rollup_5m, RES_1H: rollup_1h}
DAY = 86400


@functools.lru_cache(maxsize=65536)  # agents send the same label sets every run
def labels_key(labels: Labels) -> str:
    return json.dumps([list(p) for p in labels], separators=(",", ":"))


# Statements every collector run executes, built once (see CLAIM in app/ingest/records.py for why).
_RUN_INSERT = collector_run.insert()
_STILL_HERE = update(entity).where(entity.c.host == bindparam("b_host"), entity.c.collector == bindparam("b_collector"),
                                   entity.c.present.is_(True)).values(last_seen=bindparam("b_now"))
_WATERMARKS = select(meta.c.key, meta.c.value).where(
    meta.c.key.in_([f"{k}_{r}" for k in ("rollup", "claim") for r in (RES_5M, RES_1H)]))



class Late:
    """Samples written below the rollup claim in one transaction, refolded once at its end."""

    def __init__(self, claim: int) -> None:
        self.claim = claim
        self.ids: set[int] = set()
        self.span: tuple[int, int] | None = None

    def add(self, ids: Iterable[int], ts: int) -> None:
        self.ids.update(ids)
        self.span = (min(self.span[0], ts), max(self.span[1], ts)) if self.span else (ts, ts)


class Point(NamedTuple):
    ts: int
    vmin: float
    vavg: float
    vmax: float


class SeriesLimit(Exception):
    """A write would give the host more series than it may have (agents.max_series_per_host)."""


def _pg_array(items: Iterable[int | float], kind: type = int) -> str:
    """A PostgreSQL array literal of numbers (``kind`` int or float: a bool or numpy value prints as
    a plain number). repr() of a float round-trips exactly; the callers have left out NaN and
    infinities, which PostgreSQL would read under other names."""
    return "{" + ",".join(map(repr, map(kind, items))) + "}"


def _text(v: Any) -> str | None:
    if v is None:
        return None
    return v if isinstance(v, str) else json.dumps(v, default=str)


class KnownEntity(TypedDict):
    """An entity of this host as the store last wrote it (its cache, against which a run is diffed)."""

    collector: str
    attrs: dict[str, object]
    present: bool


class StoreBase:
    """The state the Store's parts share (one instance per host and engine)."""

    def __init__(self, engine: Engine, host: str, max_series: int | None = None) -> None:
        self.engine = engine
        self.host = host
        # For agent hosts: a host that invents label values must not grow the database and this
        # process without end. None: no limit (this server's own collectors).
        self.max_series = max_series
        self._series_count: int | None = None
        self.dialect = engine.dialect.name
        self._ids: dict[tuple[str, str], int] = {}
        # The same ids keyed the way samples carry them, (metric, labels tuple): the ingest path
        # looks up every sample of every run, and this skips building the JSON key each time.
        self._sample_ids: dict[tuple[str, Labels], int] = {}
        ph = "?" if self.dialect == "sqlite" else "%s"
        if self.dialect == "sqlite":
            self._insert_sql = f"INSERT OR IGNORE INTO sample (series_id, ts, value) VALUES ({ph}, {ph}, {ph})"
        else:
            self._insert_sql = (
                f"INSERT INTO sample (series_id, ts, value) VALUES ({ph}, {ph}, {ph}) ON CONFLICT DO NOTHING"
            )
        # PostgreSQL: a whole batch as three arrays in one statement, one round trip instead of
        # one per row (psycopg's pipelined executemany took 12 ms for 500 rows, this ~2 ms). The
        # arrays go as text literals we join ourselves: psycopg's list dumper quotes element by
        # element in Python (1.1 ms of CPU per 500 rows, this 0.5 ms; the server parses either).
        self._unnest_sql = ("INSERT INTO sample (series_id, ts, value) SELECT * FROM "
                            "unnest(%s::integer[], %s::bigint[], %s::float8[]) ON CONFLICT DO NOTHING")
        self._unnest_one_ts_sql = ("INSERT INTO sample (series_id, ts, value) SELECT s, %s::bigint, v FROM "
                                   "unnest(%s::integer[], %s::float8[]) AS t(s, v) ON CONFLICT DO NOTHING")
        self._entities: dict[tuple[str, str], KnownEntity] | None = None
        # Statements every run executes, built once (see CLAIM in app/ingest/records.py for why).
        upsert = self._insert(collector_state)
        self._state_upsert = upsert.on_conflict_do_update(
            index_elements=["host", "collector"], set_={"updated": upsert.excluded.updated, "state": upsert.excluded.state})
        self.lock = rollup_lock(engine)

    # -- series and samples -------------------------------------------------------------

    def _insert(self, table):
        return (sqlite.insert if self.dialect == "sqlite" else postgresql.insert)(table)

    def series_ids(self, conn, keys: Iterable[tuple[str, str]]) -> list[int]:
        """Ids for (metric, labels_json) pairs, creating the series that are new."""
        keys = list(keys)
        missing = {k for k in keys if k not in self._ids}
        if missing and self.max_series is not None:
            self._load_ids(conn, {m for m, _ in missing})  # known to the database, not yet to this cache
            missing = {k for k in missing if k not in self._ids}
            if missing:
                if self._series_count is None:
                    self._series_count = int(conn.execute(
                        select(func.count()).select_from(series).where(series.c.host == self.host)).scalar_one())
                if self._series_count + len(missing) > self.max_series:
                    raise SeriesLimit(f"host {self.host!r} has {self._series_count} series and this would add "
                                      f"{len(missing)}, beyond its limit of {self.max_series} "
                                      "(agents.max_series_per_host)")
                self._series_count += len(missing)
        if missing:
            rows = [{"host": self.host, "metric": m, "labels": lab} for m, lab in missing]
            conn.execute(self._insert(series).on_conflict_do_nothing(), rows)
            self._load_ids(conn, {m for m, _ in missing})
        return [self._ids[k] for k in keys]

    def _load_ids(self, conn, metrics: set[str]) -> None:
        for sid, m, lab in conn.execute(
            select(series.c.id, series.c.metric, series.c.labels).where(
                series.c.host == self.host, series.c.metric.in_(metrics)
            )
        ):
            self._ids[(m, lab)] = sid
