"""`rackpulse db copy`: every table from one database URL to another (SQLite -> PostgreSQL).

The destination is migrated to the latest revision first and must hold no series yet, so a
copy never mixes two histories. Rows keep their ids (samples refer to series by id); on
PostgreSQL the id sequences are moved past the copied ids afterwards.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Table, func, select, text

from app.storage import chunks, models
from app.storage.db import make_engine, upgrade

CHUNK = 20_000
# Parents before children; everything the app stores.
ORDER = ("meta", "series", "sample", "sample_block", "rollup_5m", "rollup_1h", "collector_run", "collector_state", "entity",
         "entity_event", "alert", "alert_event", "outbox", "silence", "agent", "ingest_digest", "monitor", "heartbeat",
         "web_user", "api_token", "audit")


class CopyError(Exception):
    pass


def copy_database(src_url: str, dst_url: str, progress: Callable[[str, int], None] | None = None) -> dict[str, int]:
    upgrade(src_url)  # an old source gets the same columns as the destination
    upgrade(dst_url)
    src, dst = make_engine(src_url), make_engine(dst_url)
    counts: dict[str, int] = {}
    try:
        with dst.connect() as c:
            if c.execute(select(func.count()).select_from(models.series)).scalar():
                raise CopyError("the destination already holds series: copy into an empty database")
        for name in ORDER:
            table: Table = models.metadata.tables[name]
            counts[name] = _copy_table(src, dst, table)
            if progress:
                progress(name, counts[name])
        if dst.dialect.name == "postgresql":
            with dst.begin() as c:
                for name in ORDER:
                    table = models.metadata.tables[name]
                    if "id" in table.c:
                        c.execute(text(f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                                       f"coalesce((SELECT max(id) FROM {name}), 0) + 1, false)"))
    finally:
        src.dispose()
        dst.dispose()
    return counts


def _copy_table(src, dst, table: Table) -> int:
    """Keyset pagination over the primary key: constant memory for tables of any size."""
    if table.name in chunks.BY_TABLE:
        return _copy_points(src, dst, table)
    pk = list(table.primary_key.columns)
    cols = [c.name for c in table.columns]
    n = 0
    last: tuple | None = None
    while True:
        q = select(table).order_by(*pk).limit(CHUNK)
        if last is not None:
            from sqlalchemy import tuple_

            q = q.where(tuple_(*pk) > tuple_(*last))
        with src.connect() as c:
            rows = c.execute(q).all()
        if not rows:
            return n
        with dst.begin() as c:
            c.execute(table.insert(), [dict(zip(cols, r, strict=True)) for r in rows])
        n += len(rows)
        last = tuple(getattr(rows[-1], p.name) for p in pk)


def _copy_points(src, dst, table: Table) -> int:
    """A tier of points, read where it lives (on PostgreSQL rows and chunks alike, through its
    view) in one streamed query, written as rows (a PostgreSQL destination moves the old ones
    into chunks at its next fold)."""
    view = chunks.readable(src.dialect.name, table)
    cols = [c.name for c in table.columns]
    q = select(*(view.c[c] for c in cols)).order_by(view.c.series_id, view.c[chunks.BY_TABLE[table.name].key])
    n = 0
    with src.connect() as c:
        result = c.execution_options(stream_results=True, yield_per=CHUNK).execute(q)
        for part in result.partitions(CHUNK):
            with dst.begin() as d:
                d.execute(table.insert(), [dict(zip(cols, r, strict=True)) for r in part])
            n += len(part)
    return n
