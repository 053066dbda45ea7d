"""Raw samples in closed 2-hour spans as Gorilla blocks (app/storage/gorilla.py), one row per
series and span, on SQLite and PostgreSQL alike.

Why: a raw sample cost 14.2 bytes as a SQLite row and 8.1 in PostgreSQL's chunk arrays; the
same week of a 16-disk host takes 0.34 bytes a sample as blocks, and 0.55 in a real Prometheus
(bench/db_size_year.py --prometheus).

Rows stay rows where SQL still reads them: above both folds' watermarks, and from the hour
before the hourly fold on (the energy page's newest hours). Below that mark (meta
``blocked_sample``) `pack` moves them into blocks, merged with a block there already (a row is
the newer write and wins). A late write below the mark (an agent's backlog) first `unpack`s the
blocks of its span back into rows, inside the writer's transaction, so the refold's SQL reads
every sample of its buckets as rows; the next `pack` takes them along again. Readers take both:
blocks decoded in Python, rows over them (a row another server wrote below a mark that had just
moved wins over the block's sample for the same second).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import Connection, delete, select, tuple_
from sqlalchemy.dialects import postgresql, sqlite

from app.storage import gorilla
from app.storage.base import RES_1H
from app.storage.models import sample, sample_block

SPAN = 7200  # seconds a block: 240 samples at 30 s (Prometheus cuts at 120)
MARK_KEY = "blocked_sample"
# Series packed per transaction: a span's rows come into Python all at once (about 240 a series),
# and 500 series' 120,000 rows left the server's RSS 3-4 MB higher after each move of the mark
# (the soak's steps); 50 series are 12,000 rows at a time.
PACK_SERIES = 50



def _chunk(ts: int) -> int:
    """The span holding second ``ts``, within the column's 32 bits (a reader's "everything" is
    2**62 seconds: PostgreSQL refused it as out of range)."""
    return max(-(2**31), min(2**31 - 1, ts // SPAN))


def target(wm5: int, wm1h: int) -> int:
    """Where blocks may reach: whole spans below what the 5-minute fold reads and below the hour
    before the hourly fold (read as rows by SampleWriting.raw_hours)."""
    return max(0, min(wm5, wm1h - RES_1H)) // SPAN * SPAN


def _upsert(conn: Connection, rows: list[dict[str, object]]) -> None:
    ins = (sqlite.insert if conn.dialect.name == "sqlite" else postgresql.insert)(sample_block)
    conn.execute(ins.on_conflict_do_update(index_elements=["series_id", "chunk"], set_={"data": ins.excluded.data}),
                 rows)


def _existing(conn: Connection, keys: Iterable[tuple[int, int]]) -> dict[tuple[int, int], bytes]:
    keys = sorted(keys)
    out: dict[tuple[int, int], bytes] = {}
    for i in range(0, len(keys), 500):
        q = select(sample_block.c.series_id, sample_block.c.chunk, sample_block.c.data).where(
            tuple_(sample_block.c.series_id, sample_block.c.chunk).in_(keys[i:i + 500]))
        out.update({(int(s), int(c)): bytes(d) for s, c, d in conn.execute(q)})
    return out


def pack(conn: Connection, first_id: int, end_id: int, mark: int) -> int:
    """Rows of series [first_id, end_id) below ``mark`` into their blocks; returns blocks written.
    The rows are taken by one DELETE … RETURNING: exactly those deleted are packed, whatever
    another server writes meanwhile."""
    taken = conn.execute(delete(sample).where(sample.c.series_id >= first_id, sample.c.series_id < end_id,
                                              sample.c.ts < mark)
                         .returning(sample.c.series_id, sample.c.ts, sample.c.value)).all()
    if not taken:
        return 0
    spans: dict[tuple[int, int], dict[int, float]] = {}
    for sid, ts, value in taken:
        spans.setdefault((int(sid), int(ts) // SPAN), {})[int(ts)] = float(value)
    rows = []
    old = _existing(conn, spans)
    for key in sorted(spans):
        points = dict(zip(*gorilla.decode(old[key]), strict=True)) if key in old else {}
        points.update(spans[key])  # the row is the newer write
        times = sorted(points)
        rows.append({"series_id": key[0], "chunk": key[1], "data": gorilla.encode(times, [points[t] for t in times])})
    for i in range(0, len(rows), 1000):
        _upsert(conn, rows[i:i + 1000])
    return len(rows)


def unpack(conn: Connection, ids: Sequence[int], lo: int, hi: int) -> int:
    """The blocks of ``ids`` holding seconds in [lo, hi) back into rows (a row there already is
    the newer write and stays), and gone; returns the blocks unpacked. In the writer's
    transaction, before a refold reads those seconds."""
    if not ids or lo >= hi:
        return 0
    where = (sample_block.c.series_id.in_(sorted(ids)), sample_block.c.chunk >= _chunk(lo),
             sample_block.c.chunk <= _chunk(hi - 1))
    found = conn.execute(select(sample_block.c.series_id, sample_block.c.chunk, sample_block.c.data).where(*where)
                         .order_by(sample_block.c.series_id, sample_block.c.chunk)).all()
    if not found:
        return 0
    ins = (sqlite.insert if conn.dialect.name == "sqlite" else postgresql.insert)(sample).on_conflict_do_nothing()
    rows = [{"series_id": int(sid), "ts": t, "value": v} for sid, _, data in found
            for t, v in zip(*gorilla.decode(bytes(data)), strict=True)]
    for i in range(0, len(rows), 5000):
        conn.execute(ins, rows[i:i + 5000])
    conn.execute(delete(sample_block).where(*where))
    return len(found)


def read(conn: Connection, ids: Sequence[int], start: int, end: int) -> dict[int, dict[int, float]]:
    """The blocks' samples of ``ids`` with start <= ts < end, per series, as {ts: value}."""
    out: dict[int, dict[int, float]] = {}
    if not ids or start >= end:
        return out
    q = (select(sample_block.c.series_id, sample_block.c.data)
         .where(sample_block.c.series_id.in_(list(ids)), sample_block.c.chunk >= _chunk(start),
                sample_block.c.chunk <= _chunk(end - 1))
         .order_by(sample_block.c.series_id, sample_block.c.chunk))
    for sid, data in conn.execute(q):
        got = out.setdefault(int(sid), {})
        times, values = gorilla.decode(bytes(data))
        if start <= times[0] and times[-1] < end:  # a block inside the range: all of it
            got.update(zip(times, values, strict=True))
            continue
        for t, v in zip(times, values, strict=True):
            if start <= t < end:
                got[t] = v
    return out


def merged(blocked: dict[int, float], rows: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    """Blocks' samples and rows of one series in time order, a row winning over a block's sample."""
    if not rows:  # blocks alone: read() took them span by span, in time order
        return list(blocked.items())
    points = dict(blocked)
    points.update((int(t), float(v)) for t, v in rows)
    return sorted(points.items())


def prune(conn: Connection, cut: int) -> int:
    """Blocks wholly before ``cut`` (seconds) gone; one that straddles it stays until it does not."""
    return conn.execute(delete(sample_block).where(sample_block.c.chunk < _chunk(cut))).rowcount or 0
