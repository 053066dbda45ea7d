"""(6) Database size after a simulated year of a 16-disk host collected every 30 s.

What the default retention keeps after a year (StorageConfig: raw samples for 90 days, 5-minute
rollups for 35, hourly rollups for the year; --days-raw 7 --days-5m 365 for the old defaults). The series are the ones a 16-disk RAID6 host
stores (per disk: health, standby, exit status, SMART passed, temperature, power-on
hours, six attribute counters; per array: degraded, active, sync ratio, four disk
counts, required, size), with realistic values: temperatures that move, counters that
stay put, hours that climb. Rows go in the order the collectors and the rollup fold
write them (time order, every series per step), so the b-tree fills as it would live.

Printed: rows, bytes per row and MB per table (SQLite's dbstat: pages, so b-tree slack counts),
MB per series-year, and that figure for the demo's two hosts (981 series; 83 % of them constant
over a minute, 11 % changing integers, 5 % floats: about this host's mix). With --pg the same rows
are copied into a new PostgreSQL database, folded points moved into chunks as a running server
does (app/storage/chunks.py), and measured there too: points per tier (rows and chunks) and
pg_total_relation_size of its row table and chunk table together.

With --prometheus the raw samples kept are also encoded with rackpulse's Gorilla codec
(app/storage/gorilla.py) and backfilled into a real Prometheus (bench/prom_tsdb.py), and both print
bytes per sample: what the same samples cost in a TSDB.

usage: python bench/db_size_year.py [--days-raw 90] [--days-5m 35] [--keep FILE] [--pg URL] [--prometheus]
"""

from __future__ import annotations

import argparse
import math
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.config import StorageConfig  # noqa: E402
from app.storage import blocks, chunks, gorilla  # noqa: E402
from app.storage.db import make_engine, upgrade  # noqa: E402
from app.storage.store import DAY, RES_1H, RES_5M, ROLLUPS, Store  # noqa: E402

NOW = 1_790_000_000 // 3600 * 3600
STEP = 30
DEMO_SERIES = 981


def series() -> list[tuple[str, str, str]]:
    """(metric, labels, kind) for a 16-disk host; kind picks the value model."""
    out = []
    for d in range(16):
        lab = f'[["serial","ZA{d:04d}"]]'
        out += [("rackpulse_disk_health", lab, "zero"), ("rackpulse_disk_standby", lab, "zero"),
                ("rackpulse_disk_smartctl_exit_status", lab, "zero"), ("rackpulse_disk_smart_healthy", lab, "one"),
                ("rackpulse_disk_temperature_celsius", lab, "temp"), ("rackpulse_disk_power_on_seconds", lab, "hours")]
        for a in ("5", "187", "188", "197", "198", "199"):
            out.append(("rackpulse_disk_smart_attribute_raw", lab[:-1] + f',["attribute","{a}"]]', "zero"))
    arr = '[["array","md0"]]'
    out += [("rackpulse_md_array_degraded", arr, "zero"), ("rackpulse_md_array_active", arr, "one"),
            ("rackpulse_md_array_sync_completed_ratio", arr, "one"), ("rackpulse_md_array_disks_required", arr, "16"),
            ("rackpulse_md_array_size_bytes", arr, "size")]
    for st in ("active", "failed", "spare", "missing"):
        out.append(("rackpulse_md_array_disks", arr[:-1] + f',["state","{st}"]]', "16" if st == "active" else "zero"))
    return out


def value(kind: str, ts: int, i: int) -> float:
    if kind == "zero":
        return 0.0
    if kind == "one":
        return 1.0
    if kind == "16":
        return 16.0
    if kind == "size":
        return 224_010_000_000_000.0
    if kind == "hours":
        return float(20_000 + 100 * i + (ts - NOW + 365 * DAY) // 3600)
    # temperature: integer degrees, daily cycle plus drift, per-disk offset
    return float(round(34 + (i % 5) + 3 * math.sin(ts / DAY * 2 * math.pi + i) + math.sin(ts / 977)))


def bucket(kind: str, start: int, res: int, i: int) -> tuple[float, float, float, int]:
    vals = [value(kind, t, i) for t in range(start, start + res, STEP * (res // 300 if res > 300 else 1))]
    return min(vals), sum(vals) / len(vals), max(vals), res // STEP


def main() -> None:
    ap = argparse.ArgumentParser()
    defaults = StorageConfig()
    ap.add_argument("--days-raw", type=float, default=defaults.raw_days)
    ap.add_argument("--days-5m", type=float, default=defaults.rollup_5m_days)
    ap.add_argument("--keep", help="keep the database file here")
    ap.add_argument("--prometheus", action="store_true", help="also the Gorilla codec and a real Prometheus")
    ap.add_argument("--pg", help="also measure PostgreSQL, e.g. postgresql+psycopg://postgres@127.0.0.1:5432/test")
    args = ap.parse_args()
    d = tempfile.mkdtemp()
    path = args.keep or f"{d}/year.db"
    if os.path.exists(path):
        os.remove(path)
    url = f"sqlite:///{path}"
    upgrade(url)
    store = Store(make_engine(url), "nas")
    specs = series()
    with store.engine.begin() as conn:
        ids = store.series_ids(conn, [(m, lab) for m, lab, _ in specs])
    ins = "INSERT INTO {} (series_id, bucket, vmin, vavg, vmax, n) VALUES (?,?,?,?,?,?)"
    t0 = time.perf_counter()
    counts = {}
    for res in (RES_5M, RES_1H):
        rows, n = [], 0
        days = min(args.days_5m, 365) if res == RES_5M else 365
        for start in range(NOW - int(days * DAY) // res * res, NOW, res):
            for i, (sid, (_, _, kind)) in enumerate(zip(ids, specs, strict=True)):
                mn, av, mx, cnt = bucket(kind, start, res, i // 12)
                rows.append((sid, start // res, mn, av, mx, cnt))
            if len(rows) >= 50_000:
                with store.engine.begin() as conn:
                    conn.exec_driver_sql(ins.format(ROLLUPS[res].name), rows)
                n += len(rows)
                rows = []
        with store.engine.begin() as conn:
            conn.exec_driver_sql(ins.format(ROLLUPS[res].name), rows)
        counts[res] = n + len(rows)
    # The raw samples older than a day go straight in as the blocks compaction would make of them
    # (one a series and 2-hour span, app/storage/blocks.py): 90 days are 52 M samples, an hour of
    # ingest and a 3 GB file of rows before the compaction would pack them. The newest day goes in
    # through the store as a live server writes it, and is compacted as it would be.
    first = NOW - int(args.days_raw * DAY)
    recent = max(first, (NOW - DAY) // blocks.SPAN * blocks.SPAN)
    nraw = direct_blocks(store, ids, specs, first, recent)
    raw = []
    for ts in range(recent, NOW, STEP):
        raw += [(sid, ts, value(kind, ts, i // 12)) for i, (sid, (_, _, kind)) in enumerate(zip(ids, specs, strict=True))]
        if len(raw) >= 20_000:
            store.write_rows(raw)
            nraw += len(raw)
            raw = []
    store.write_rows(raw)
    nraw += len(raw)
    # As a server that ran all year holds them: folded up to now, and the raw samples below the
    # blocks' mark packed into Gorilla blocks (app/storage/blocks.py); the newest hours stay rows.
    store.mark_folded({RES_5M: NOW, RES_1H: NOW})
    store.compact()
    with store.engine.begin() as conn:
        conn.exec_driver_sql("VACUUM")  # the rows packed leave free pages; a live file reuses them
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    store.engine.dispose()
    size = sum(os.path.getsize(path + s) for s in ("", "-wal") if os.path.exists(path + s))
    print(f"db_size_year series={len(specs)} days raw={args.days_raw:g} 5m={args.days_5m:g} 1h=365 "
          f"build_s={time.perf_counter() - t0:.0f}")
    with sqlite3.connect(path) as c:
        tables = {t: (c.execute(f"SELECT count(*) FROM {t}").fetchone()[0],
                      c.execute("SELECT sum(pgsize) FROM dbstat WHERE name = ?", (t,)).fetchone()[0] or 0)
                  for t in TABLES}
        tables["sample"] = raw_points(c, tables["sample"][0], tables["sample"][1] + (
            c.execute("SELECT sum(pgsize) FROM dbstat WHERE name = 'sample_block'").fetchone()[0] or 0))
        report("sqlite", size, tables, len(specs))
    if args.pg:
        pg_copy(path, args.pg, len(specs))
    if args.prometheus:
        from prom_tsdb import compare

        times = range(NOW - int(args.days_raw * DAY), NOW, STEP)
        compare(lambda: ((m, lab, times, [value(kind, ts, i // 12) for ts in times])
                         for i, (m, lab, kind) in enumerate(specs)))


TABLES = ("sample", "rollup_5m", "rollup_1h")


def direct_blocks(store: Store, ids: list[int], specs: list[tuple[str, str, str]], first: int, end: int) -> int:
    """Raw samples from `first` to `end` written as Gorilla blocks, span by span; returns samples."""
    from app.storage.models import sample_block

    n = 0
    for span in range(first // blocks.SPAN, -(-end // blocks.SPAN)):
        times = [t for t in range(span * blocks.SPAN, (span + 1) * blocks.SPAN, STEP) if first <= t < end]
        rows = [{"series_id": sid, "chunk": span,
                 "data": gorilla.encode(times, [value(kind, t, i // 12) for t in times])}
                for i, (sid, (_, _, kind)) in enumerate(zip(ids, specs, strict=True))]
        if times:
            with store.engine.begin() as conn:
                conn.execute(sample_block.insert(), rows)
            n += len(times) * len(ids)
    return n


def raw_points(c, rows: int, nbytes: int) -> tuple[int, int]:
    """The raw tier as (samples, bytes): its rows and its blocks' samples (each block's header
    counts them), over the bytes of both tables: "bytes/row" is then bytes a raw sample."""
    packed = sum(gorilla.count(bytes(d)) for (d,) in c.execute("SELECT data FROM sample_block"))
    return rows + packed, nbytes


def report(kind: str, size: int, tables: dict[str, tuple[int, int]], n_series: int) -> None:
    for t, (rows, nbytes) in tables.items():
        print(f"  {kind:10} {t:10} rows={rows:>11,} MB={nbytes / 1e6:7.1f} bytes/row={nbytes / max(rows, 1):5.1f}")
    per = size / n_series
    print(f"  {kind:10} total MB={size / 1e6:.0f}  per series-year MB={per / 1e6:.2f}  "
          f"demo's {DEMO_SERIES} series GB={per * DEMO_SERIES / 1e9:.2f}  1,100 series GB={per * 1100 / 1e9:.2f}")


def pg_copy(path: str, url: str, n_series: int) -> None:
    """The same rows in a new PostgreSQL database with rackpulse's schema, by COPY."""
    import psycopg
    from sqlalchemy import create_engine, text

    name = f"rackpulse_bench_year_{os.getpid()}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    db = url.rsplit("/", 1)[0] + f"/{name}"
    try:
        upgrade(db)
        src = sqlite3.connect(path)
        conninfo = db.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(conninfo) as pg:
            cols = [r[1] for r in src.execute("PRAGMA table_info(series)")]
            with pg.cursor() as cur, cur.copy(f"COPY series ({', '.join(cols)}) FROM STDIN") as cp:
                for row in src.execute(f"SELECT {', '.join(cols)} FROM series"):
                    cp.write_row(row)
            pg.commit()
            # As a server that ran all year holds them: each tier's points go in in time order, a
            # chunk's span at a time, and once a span is complete its rows move into chunks
            # (app/storage/chunks.py) and autovacuum frees their space for the next rows to reuse.
            # The newest span stays rows, as on a live server just before its next move.
            t0 = time.perf_counter()
            for tier in chunks.TIERS:
                cols = [r[1] for r in src.execute(f"PRAGMA table_info({tier.table})")]
                lo, hi = src.execute(f"SELECT min({tier.key}), max({tier.key}) FROM {tier.table}").fetchone()
                for first in range(lo // tier.span * tier.span, hi + 1, tier.span):
                    with pg.cursor() as cur, cur.copy(f"COPY {tier.table} ({', '.join(cols)}) FROM STDIN") as cp:
                        for row in src.execute(f"SELECT {', '.join(cols)} FROM {tier.table} WHERE {tier.key} >= ? "
                                               f"AND {tier.key} < ? ORDER BY {tier.key}", (first, first + tier.span)):
                            cp.write_row(row)
                    if first + tier.span <= hi:
                        pg.execute(chunks.move_sql(tier, restricted=False),  # type: ignore[arg-type]
                                   (0, 2**31 - 1, first + tier.span))
                    pg.commit()
                    if (first // tier.span) % 4 == 0:  # autovacuum, roughly: now and then
                        pg.autocommit = True
                        pg.execute(f"VACUUM {tier.table}")  # type: ignore[arg-type]
                        pg.autocommit = False
            for table in ("sample", "sample_block"):  # raw samples: rows and blocks as the SQLite side packed them
                cols = [r[1] for r in src.execute(f"PRAGMA table_info({table})")]
                with pg.cursor() as cur, cur.copy(f"COPY {table} ({', '.join(cols)}) FROM STDIN") as cp:
                    for row in src.execute(f"SELECT {', '.join(cols)} FROM {table}"):
                        cp.write_row(row)
                pg.commit()
            print(f"  postgresql filled span by span, moving into chunks: {time.perf_counter() - t0:.0f} s")
            pg.autocommit = True
            pg.execute("VACUUM ANALYZE")  # what autovacuum would have done by then
            sizes = {t: (pg.execute(f"SELECT count(*) FROM {t}_all").fetchone()[0],  # type: ignore[index]
                         pg.execute("SELECT pg_total_relation_size(%s) + pg_total_relation_size(%s)",
                                    (t, f"{t}_chunk")).fetchone()[0])  # type: ignore[index]
                     for t in TABLES if t != "sample"}
            rows = pg.execute("SELECT count(*) FROM sample").fetchone()[0]  # type: ignore[index]
            both = pg.execute("SELECT pg_total_relation_size('sample') + pg_total_relation_size('sample_block')"
                              ).fetchone()[0]  # type: ignore[index]
            sizes = {"sample": raw_points(pg, rows, both), **sizes}
            total = pg.execute("SELECT pg_database_size(current_database())").fetchone()[0]  # type: ignore[index]
        report("postgresql", total, sizes, n_series)
    finally:
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


if __name__ == "__main__":
    main()
