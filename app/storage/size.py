"""storage.max_size: a database that outgrows it gives up its oldest data first, a day at a time.

First the logs that grow with the lab (inventory changes, collector runs, alert events, the audit
log, finished notifications), oldest first across them, never their newest day. Then the history:
raw samples (only those already folded into rollups), then 5-minute rollups, then hourly ones,
never the newest hour. History is given up only when that can bring the database within the
bound: when the other tables alone are over it (an agent flooding inventory changes, say), deleting
every rollup would lose a year and still not fit, so nothing of the history goes and the overview
and the log say the bound cannot be met. What was given up is noted (meta key "size_trimmed").

The size is what the data takes: on SQLite the pages in use (a deleted row's page is reused, the
file does not shrink until a VACUUM), on PostgreSQL pg_database_size. PostgreSQL's files do not
shrink after a delete either, and its size says nothing of the space inside them that a VACUUM
has freed for new rows: there, each time the files have grown past the bound (beyond the size
they had at the last trim), one step of the oldest data goes and its table is vacuumed, so what
comes next fills that space instead of growing the files. Measuring after the delete, as on
SQLite, would give up everything but the newest hour at once, and again at every maintenance.
"""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import dataclass

from sqlalchemy import ColumnElement, Delete, Engine, Select, Table, delete, func, select, text, true

from app.storage import blocks, chunks
from app.storage.base import DAY, RES_1H, RES_5M
from app.storage.grouped_cache import grouped_cache
from app.storage.meta import get_meta, set_meta
from app.storage.models import (
    alert_event,
    audit,
    collector_run,
    entity_event,
    outbox,
    rollup_1h,
    rollup_5m,
    sample,
    sample_block,
)

log = logging.getLogger("rackpulse.storage")
UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
         "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}
KEEP_NEWEST = 3600  # seconds of history never given up, whatever the size
KEEP_NEWEST_LOGS = DAY  # and of the logs: today's inventory changes, runs and events explain today
HISTORY = ("sample", "sample_block", "rollup_5m", "rollup_1h", *(t.chunk_table for t in chunks.TIERS))


def parse_size(value: str | int | None) -> int | None:
    """'5GB', '500 MB', '2GiB' or a number of bytes; None or 0: no bound."""
    if value in (None, "", 0):
        return None
    if isinstance(value, int):
        return value
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?I?B?)\s*", value.upper())
    if not m or m[2] not in UNITS:
        raise ValueError(f"storage.max_size {value!r}: a number and B, KB, MB, GB, TB (or KiB ... TiB)")
    return int(float(m[1]) * UNITS[m[2]]) or None  # "0" or "0 GB" too: no bound, not "keep nothing"


def used_bytes(engine: Engine) -> int:
    with engine.connect() as c:
        if engine.dialect.name == "sqlite":
            pages = c.execute(text("PRAGMA page_count")).scalar() or 0
            free = c.execute(text("PRAGMA freelist_count")).scalar() or 0
            size = c.execute(text("PRAGMA page_size")).scalar() or 4096
            return int((pages - free) * size)
        return int(c.execute(text("SELECT pg_database_size(current_database())")).scalar() or 0)


@dataclass(frozen=True)
class Tier:
    """What can be given up, a step at a time: a history tier (its time column counted in
    ``unit`` seconds) or a log (``log=True``: only its finished rows, see ``_finished``)."""
    name: str
    table: Table
    key: str  # the time column
    step: int  # how much is given up at a time
    unit: int = 1  # seconds per unit of the time column (a rollup's bucket number)
    log: bool = False


# Plain data and plain functions, not closures built at import: what is checked at each call is the
# code that runs (a mutation test swaps functions at call time and saw none of a closure's lines).
TIERS = (
    Tier("raw samples", sample, "ts", DAY),
    Tier("5-minute rollups", rollup_5m, "bucket", DAY, unit=RES_5M),
    Tier("hourly rollups", rollup_1h, "bucket", 7 * DAY, unit=RES_1H),
)
LOGS = (
    Tier("inventory changes", entity_event, "ts", DAY, log=True),
    Tier("collector runs", collector_run, "started", DAY, log=True),
    Tier("alert events", alert_event, "ts", DAY, log=True),
    Tier("audit entries", audit, "ts", DAY, log=True),
    Tier("finished notifications", outbox, "created", DAY, log=True),
)


def _scalar(engine: Engine, q: Select) -> int | None:
    with engine.connect() as c:
        v = c.execute(q).scalar()
    return int(v) if v is not None else None


def _drop(engine: Engine, stmt: Delete) -> int:
    with engine.begin() as c:
        return int(c.execute(stmt).rowcount or 0)


def _finished(table: Table) -> ColumnElement[bool]:
    """A log's rows that may go: every row, but for the outbox only finished deliveries and for
    alert events only those no delivery is still waiting for."""
    if table is outbox:
        return func.coalesce(outbox.c.delivered_at, outbox.c.gave_up_at).is_not(None)
    if table is alert_event:
        waiting = select(outbox.c.event_id).where(outbox.c.delivered_at.is_(None), outbox.c.gave_up_at.is_(None))
        return alert_event.c.id.not_in(waiting)
    return true()


def _packed(engine: Engine, tier: Tier) -> tuple[Table, int] | None:
    """Where a history tier keeps its older points beside its rows, and the keys a row there
    spans: raw samples' Gorilla blocks, and on PostgreSQL a rollup tier's chunks."""
    if tier.table is sample:
        return sample_block, blocks.SPAN
    if engine.dialect.name == "postgresql" and tier.table.name in chunks.BY_TABLE:
        return chunks.CHUNKS[tier.table.name], chunks.BY_TABLE[tier.table.name].span
    return None


def oldest_of(engine: Engine, tier: Tier) -> int | None:
    """A tier's oldest point in seconds: its rows' (a log's finished ones), and a history tier's
    oldest block's or chunk's start too."""
    column = tier.table.c[tier.key]
    if tier.log:
        return _scalar(engine, select(func.min(column)).where(_finished(tier.table)))
    found = [_scalar(engine, select(func.min(column) * tier.unit))]
    if packed := _packed(engine, tier):
        chunk, span = packed
        found.append(_scalar(engine, select(func.min(chunk.c.chunk) * span * tier.unit)))
    return min((t for t in found if t is not None), default=None)


def drop_before(engine: Engine, tier: Tier, t: int) -> int:
    """Delete a tier's points before a time (a log's finished ones), and a history tier's blocks
    or chunks wholly before it too. Returns the rows (and blocks and chunks) deleted."""
    column = tier.table.c[tier.key]
    if tier.log:
        return _drop(engine, delete(tier.table).where(column < t, _finished(tier.table)))
    n = _drop(engine, delete(tier.table).where(column < t // tier.unit))
    if packed := _packed(engine, tier):
        chunk, span = packed
        n += _drop(engine, delete(chunk).where(chunk.c.chunk < t // tier.unit // span))
    if n and tier.unit > 1:  # rollups went: a chart kept with them is not read again
        grouped_cache(engine).changed()
    return n


def table_bytes(engine: Engine) -> dict[str, int] | None:
    """Bytes each table takes with its indexes, or None where the database cannot say (a SQLite
    built without its dbstat table). Read only when the database is over its bound."""
    with engine.connect() as c:
        if engine.dialect.name == "sqlite":
            try:
                rows = c.execute(text("SELECT s.tbl_name, SUM(d.pgsize) FROM dbstat AS d "
                                      "JOIN sqlite_schema AS s ON s.name = d.name GROUP BY s.tbl_name")).all()
            except Exception:  # noqa: BLE001 - no dbstat here: the history is then judged on the whole size
                return None
        else:
            rows = c.execute(text("SELECT relname, pg_total_relation_size(relid) FROM pg_catalog.pg_statio_user_tables"
                                  )).all()
    return {str(name): int(size or 0) for name, size in rows}


def _other_bytes(engine: Engine, used: int) -> int:
    """What the database takes beyond the history (logs, inventory, state, alerts, people)."""
    sizes = table_bytes(engine)
    if sizes is None:
        return 0
    return max(0, used - sum(v for k, v in sizes.items() if k in HISTORY))


def _trim_logs(engine: Engine, max_bytes: int, now: float, pg: bool, used: int) -> tuple[list[str], int]:
    """The logs' oldest days, oldest first across them, until within the bound or at their newest day."""
    said: list[str] = []
    limit = int(now - KEEP_NEWEST_LOGS)
    while used > max_bytes:
        found = [(o, tier) for tier in LOGS if (o := oldest_of(engine, tier)) is not None and o < limit]
        if not found:
            break
        oldest, tier = min(found, key=lambda x: x[0])
        cut = min(oldest + tier.step, limit)
        n = drop_before(engine, tier, cut)
        said.append(f"{tier.name} before {time.strftime('%Y-%m-%d %H:%M', time.localtime(cut))} ({n} rows)")
        if n == 0:
            break
        if pg:
            _vacuum(engine, tier)
            break
        used = used_bytes(engine)
    return said, used


def trim(engine: Engine, max_bytes: int, folded_up_to: int, now: float | None = None) -> list[str]:
    """Give up the oldest data until the database is within max_bytes; returns what went, in
    words. Raw samples go only up to ``folded_up_to`` (the 5-minute fold's watermark): what is
    not rolled up yet would be lost, not coarsened. On PostgreSQL, one step each time the files
    have grown past the bound (see the module's docstring)."""
    now = now or time.time()
    keep_from = int(now - KEEP_NEWEST)
    said: list[str] = []
    pg = engine.dialect.name == "postgresql"
    used = used_bytes(engine)
    if pg and (used <= max_bytes or used <= int(get_meta(engine, PG_TRIMMED_AT) or 0) + PG_SLACK):
        return said
    said, used = _trim_logs(engine, max_bytes, now, pg, used)
    unmet = None
    if not (pg and said) and used > max_bytes:
        other = _other_bytes(engine, used)
        if other >= max_bytes:
            # deleting every rollup would not fit: keep the history, say what takes the room
            unmet = (f"the bound cannot be met without the newest day: {other // 10**6} MB are not history "
                     f"(inventory changes, runs, events, alerts kept for their newest day); the history was kept")
    for tier in TIERS if unmet is None and not (pg and said) else ():
        limit = min(keep_from, folded_up_to) if tier.name == "raw samples" else keep_from
        while used > max_bytes:
            oldest = oldest_of(engine, tier)
            if oldest is None or oldest >= limit:
                break
            cut = min(oldest + tier.step, limit)
            n = drop_before(engine, tier, cut)
            said.append(f"{tier.name} before {time.strftime('%Y-%m-%d %H:%M', time.localtime(cut))} ({n} rows)")
            if n == 0:
                break
            if pg:  # the space goes back to PostgreSQL for new rows; the files keep their size
                _vacuum(engine, tier)
                break
            used = used_bytes(engine)
        if said and (pg or used <= max_bytes):
            break
    if said or unmet:
        note: dict[str, object] = {"at": now, "max_bytes": max_bytes, "dropped": said[-1] if said else "nothing",
                                   "steps": len(said)}
        if unmet:
            note["unmet"] = unmet
            log.warning("storage.max_size (%d bytes): %s", max_bytes, unmet)
        set_meta(engine, "size_trimmed", json.dumps(note))
        if said:
            log.warning("storage.max_size (%d bytes) reached: gave up %s", max_bytes, "; ".join(said))
    if pg and said:  # measured after the note: its own page is not growth
        set_meta(engine, PG_TRIMMED_AT, str(used_bytes(engine)))
    return said


PG_TRIMMED_AT = "size_trimmed_pg_bytes"  # PostgreSQL: the database's size after its last trim
# ...and how much more than that is still not growth: writing the notes of a trim (a meta row
# updated is a new row version) can take a page or two, and read as growth that gave up another day.
PG_SLACK = 256 * 1024


def _vacuum(engine: Engine, tier: Tier) -> None:
    """VACUUM (not FULL: it takes no lock that stops reads or ingest) the tier's tables."""
    table = tier.table.name
    packed = _packed(engine, tier)
    tables = f"{table}, {packed[0].name}" if packed else table
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
        c.execute(text(f"VACUUM {tables}"))


def last_trim(engine: Engine) -> dict[str, object] | None:
    v = get_meta(engine, "size_trimmed")
    return json.loads(v) if v else None
