"""PostgreSQL keeps older rollups in per-series chunks: one row per series and span, holding arrays.
(Raw samples went into Gorilla blocks on both databases instead: app/storage/blocks.py.)

Why: PostgreSQL spends about 96 bytes on a row of one point (a 24-byte tuple header, a line
pointer and a b-tree entry, for 16-36 bytes of data); a year of a 16-disk host took 6x what
SQLite needs (bench/db_size_year.py). A chunk row carries a few hundred points, and its arrays
are over PostgreSQL's 2 KB TOAST threshold, so it compresses them too: the same year went from
765 MB to well under SQLite's figure. SQLite stores points in 14-19 bytes already and is left
as it is.

Each tier keeps its newest points as rows (the ingest and the fold write and read them there,
unchanged) and moves everything below its mark into chunks:

- 5-minute rollups below the hourly watermark, a day per chunk;
- hourly rollups below the hourly watermark, a week per chunk.

A point lives in exactly one place: a write below the mark (an agent's backlog, a refold of a
late bucket) is merged into its chunk in the writer's own transaction (`absorb`), the newer value
winning. Readers go through the ``<table>_all`` views (rows UNION ALL unnested chunks) with a
condition on ``chunk`` so PostgreSQL reads only the chunks in range.

A mark moves under the store's lock, which is per process: with two servers on one database,
a late write on the other server can commit below a mark that just moved and stay a row. Readers
see it all the same (the views read rows and chunks), and the tier's next move takes it along.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Column, ColumnElement, Integer, MetaData, Table, and_, true

from app.storage import models


@dataclass(frozen=True)
class Tier:
    table: str  # the row table
    key: str  # its time column: seconds ("ts") or bucket numbers
    values: tuple[str, ...]  # the value columns, one array each in a chunk
    span: int  # keys per chunk

    @property
    def chunk_table(self) -> str:
        return f"{self.table}_chunk"

    @property
    def view(self) -> str:
        return f"{self.table}_all"

    @property
    def mark_key(self) -> str:
        return f"chunked_{self.table}"


FIVE = Tier("rollup_5m", "bucket", ("vmin", "vavg", "vmax", "n"), 288)  # a day
HOURS = Tier("rollup_1h", "bucket", ("vmin", "vavg", "vmax", "n"), 168)  # a week
TIERS = (FIVE, HOURS)
BY_TABLE = {t.table: t for t in TIERS}
PG_ONLY = frozenset(name for t in TIERS for name in (t.chunk_table, t.view))

# The views as tables for SQLAlchemy to select from; not in models.metadata (they are not
# tables, and exist on PostgreSQL only).
views = MetaData()


def _view(tier: Tier) -> Table:
    rows = models.metadata.tables[tier.table]
    cols = [Column(c.name, c.type.__class__) for c in rows.columns]
    return Table(tier.view, views, *cols, Column("chunk", Integer))


VIEWS = {t.table: _view(t) for t in TIERS}
CHUNKS = {t.table: Table(t.chunk_table, views, Column("series_id", Integer), Column("chunk", Integer))
          for t in TIERS}


def readable(dialect: str, table: Table) -> Table:
    """Where to read a tier's points: the row table on SQLite, rows and chunks on PostgreSQL."""
    return VIEWS[table.name] if dialect == "postgresql" else table


def in_chunks(src: Table, lo: int | None = None, hi: int | None = None) -> ColumnElement[bool]:
    """The chunks that can hold keys in [lo, hi): lets PostgreSQL skip the rest (the view's key is
    worked out from each chunk's arrays, so a condition on it alone would unpack them all)."""
    tier = BY_TABLE.get(src.name.removesuffix("_all"))
    if tier is None or src.name != tier.view:
        return true()
    conds = []
    if lo is not None:
        conds.append(src.c.chunk >= lo // tier.span)
    if hi is not None:
        conds.append(src.c.chunk <= (hi - 1) // tier.span)
    return and_(true(), *conds)


def move_sql(tier: Tier, restricted: bool) -> str:
    """Rows of ``tier`` below a mark into their chunks, merged with what a chunk holds already
    (the row's value wins: it is the newer write). Parameters: first id, id after the last, the
    mark; ``restricted`` adds the ids as an array and the lowest key (a writer's own rows)."""
    t, k, span = tier.table, tier.key, tier.span
    vals = ", ".join(tier.values)
    extra = f" AND series_id = ANY(%s) AND {k} >= %s" if restricted else ""
    aggs = ", ".join(f"array_agg({v} ORDER BY {k})" for v in tier.values)
    merged = ", ".join(f"array_agg({v} ORDER BY k)" for v in tier.values)
    return (
        f"WITH moved AS (DELETE FROM {t} WHERE series_id >= %s AND series_id < %s AND {k} < %s{extra} "
        f"RETURNING series_id, {k}, {vals}) "
        f"INSERT INTO {tier.chunk_table} (series_id, chunk, k, {vals}) "
        f"SELECT series_id, {k} / {span}, array_agg(({k} %% {span})::smallint ORDER BY {k}), {aggs} "
        f"FROM moved GROUP BY series_id, {k} / {span} "
        f"ON CONFLICT (series_id, chunk) DO UPDATE SET (k, {vals}) = ("
        f"SELECT array_agg(k ORDER BY k), {merged} FROM ("
        f"SELECT DISTINCT ON (k) k, {vals} FROM ("
        f"SELECT e.*, 0 AS pri FROM unnest(excluded.k, {', '.join('excluded.' + v for v in tier.values)}) "
        f"AS e(k, {vals}) UNION ALL "
        f"SELECT o.*, 1 FROM unnest({tier.chunk_table}.k, "
        f"{', '.join(tier.chunk_table + '.' + v for v in tier.values)}) AS o(k, {vals})"
        f") z ORDER BY k, pri) y)"
    )


def targets(wm1h: int) -> dict[Tier, int]:
    """Each tier's mark, in its own keys, given the hourly fold's watermark (seconds): whole chunks
    only, and only what the next fold no longer reads (5-minute rollups below the hourly one)."""
    return {
        FIVE: wm1h // 300 // FIVE.span * FIVE.span,
        HOURS: wm1h // 3600 // HOURS.span * HOURS.span,
    }


def absorb(conn, marks: dict[str, int], tier: Tier, ids: Sequence[int], lo: int, hi: int) -> None:
    """A writer's rows of ``ids`` with keys in [lo, hi) that fell below the tier's mark join their
    chunks, inside the writer's transaction. Call only on PostgreSQL."""
    top = min(hi, marks.get(tier.mark_key, 0))
    if not ids or lo >= top:
        return
    conn.exec_driver_sql(move_sql(tier, restricted=True), (0, 2**31 - 1, top, list(ids), lo))
