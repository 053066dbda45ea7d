"""storage.max_size: a database that outgrows it gives up its oldest data first, a day at a time:
raw samples (only those already folded into rollups), then 5-minute rollups, then hourly ones.
The newest hour is never touched. What was given up is noted (meta key "size_trimmed") and the
overview says so.

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
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Engine, delete, func, select, text, update

from app.storage import chunks
from app.storage.base import DAY, RES_1H, RES_5M
from app.storage.models import meta, rollup_1h, rollup_5m, sample

log = logging.getLogger("rackpulse.storage")
UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
         "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}
KEEP_NEWEST = 3600  # seconds never given up, whatever the size


def parse_size(value: str | int | None) -> int | None:
    """'5GB', '500 MB', '2GiB' or a number of bytes; None or 0: no bound."""
    if value in (None, "", 0):
        return None
    if isinstance(value, int):
        return value
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?I?B?)\s*", value.upper())
    if not m or m[2] not in UNITS:
        raise ValueError(f"storage.max_size {value!r}: a number and B, KB, MB, GB, TB (or KiB ... TiB)")
    return int(float(m[1]) * UNITS[m[2]])


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
    name: str
    oldest: Callable[[Engine], int | None]  # its oldest point's time, if any
    drop_before: Callable[[Engine, int], int]  # delete before a time; rows deleted
    step: int  # how much is given up at a time


def _oldest(engine: Engine, q) -> int | None:
    with engine.connect() as c:
        v = c.execute(q).scalar()
    return int(v) if v is not None else None


def _drop(engine: Engine, stmt) -> int:
    with engine.begin() as c:
        return int(c.execute(stmt).rowcount or 0)


def _oldest_of(table, key, unit: int):
    """A tier's oldest point: its rows', and on PostgreSQL its oldest chunk's start too."""
    def oldest(engine: Engine) -> int | None:
        found = [_oldest(engine, select(func.min(table.c[key]) * unit))]
        if engine.dialect.name == "postgresql":
            tier, chunk = chunks.BY_TABLE[table.name], chunks.CHUNKS[table.name]
            found.append(_oldest(engine, select(func.min(chunk.c.chunk) * tier.span * unit)))
        return min((t for t in found if t is not None), default=None)
    return oldest


def _drop_before(table, key, unit: int):
    """Delete a tier's points before a time: rows, and on PostgreSQL the chunks wholly before it."""
    def drop(engine: Engine, t: int) -> int:
        n = _drop(engine, delete(table).where(table.c[key] < t // unit))
        if engine.dialect.name == "postgresql":
            tier, chunk = chunks.BY_TABLE[table.name], chunks.CHUNKS[table.name]
            n += _drop(engine, delete(chunk).where(chunk.c.chunk < t // unit // tier.span))
        return n
    return drop


TIERS = (
    Tier("raw samples", _oldest_of(sample, "ts", 1), _drop_before(sample, "ts", 1), DAY),
    Tier("5-minute rollups", _oldest_of(rollup_5m, "bucket", RES_5M), _drop_before(rollup_5m, "bucket", RES_5M), DAY),
    Tier("hourly rollups", _oldest_of(rollup_1h, "bucket", RES_1H), _drop_before(rollup_1h, "bucket", RES_1H),
         7 * DAY),
)
TABLE_OF = {"raw samples": "sample", "5-minute rollups": "rollup_5m", "hourly rollups": "rollup_1h"}


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
    if pg and (used <= max_bytes or used <= int(_meta(engine, PG_TRIMMED_AT) or 0)):
        return said
    for tier in TIERS:
        limit = min(keep_from, folded_up_to) if tier.name == "raw samples" else keep_from
        while used > max_bytes:
            oldest = tier.oldest(engine)
            if oldest is None or oldest >= limit:
                break
            cut = min(oldest + tier.step, limit)
            n = tier.drop_before(engine, cut)
            said.append(f"{tier.name} before {time.strftime('%Y-%m-%d %H:%M', time.localtime(cut))} ({n} rows)")
            if n == 0:
                break
            if pg:  # the space goes back to PostgreSQL for new rows; the files keep their size
                _vacuum(engine, tier)
                _set_meta(engine, PG_TRIMMED_AT, str(used_bytes(engine)))
                break
            used = used_bytes(engine)
        if said and (pg or used <= max_bytes):
            break
    if said:
        note = {"at": now, "max_bytes": max_bytes, "dropped": said[-1], "steps": len(said)}
        _set_meta(engine, "size_trimmed", json.dumps(note))
        log.warning("storage.max_size (%d bytes) reached: gave up %s", max_bytes, "; ".join(said))
    return said


PG_TRIMMED_AT = "size_trimmed_pg_bytes"  # PostgreSQL: the database's size after its last trim


def _meta(engine: Engine, key: str) -> str | None:
    with engine.connect() as c:
        return c.execute(select(meta.c.value).where(meta.c.key == key)).scalar()


def _set_meta(engine: Engine, key: str, value: str) -> None:
    with engine.begin() as c:
        if c.execute(update(meta).where(meta.c.key == key).values(value=value)).rowcount == 0:
            c.execute(meta.insert().values(key=key, value=value))


def _vacuum(engine: Engine, tier: Tier) -> None:
    """VACUUM (not FULL: it takes no lock that stops reads or ingest) the tier's tables."""
    table = TABLE_OF[tier.name]
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
        c.execute(text(f"VACUUM {table}, {chunks.BY_TABLE[table].chunk_table}"))


def last_trim(engine: Engine) -> dict[str, object] | None:
    v = _meta(engine, "size_trimmed")
    return json.loads(v) if v else None
