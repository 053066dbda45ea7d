"""(2) A 30-day chart for one series, read from rollups through Store.history.

Builds 35 days of 5-minute and a year of hourly rollups for 200 series (what a 16-disk host keeps),
plus 12 hours of raw samples (the last hour after the rollup watermark), then times the charts
the pages read: 12 hours, 30 days (the disk page's), a year. Prints median and p95 of 30 runs;
on PostgreSQL once as rows and again after the older points moved into chunks (app/storage/chunks.py).

usage: python bench/chart_query.py [--db sqlite|pg]
"""

from __future__ import annotations

import argparse
import gc
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.storage.db import make_engine, upgrade  # noqa: E402
from app.storage.store import DAY, RES_1H, RES_5M, ROLLUPS, Store  # noqa: E402

N_SERIES = 200


def build(store: Store, now: int) -> None:
    with store.engine.begin() as conn:
        ids = store.series_ids(conn, [(f"m{s}", "[]") for s in range(N_SERIES)])
    ph = "?" if store.dialect == "sqlite" else "%s"
    sql = "INSERT INTO {} (series_id, bucket, vmin, vavg, vmax, n) VALUES (" + ",".join([ph] * 6) + ")"
    for res, span in ((RES_5M, 35 * DAY), (RES_1H, 365 * DAY)):
        end = now // res * res
        for t0 in range(end - span, end, 86400):  # a day at a time, every series: as the fold writes
            rows = []
            for ts in range(t0, min(t0 + 86400, end), res):
                for sid in ids:
                    v = 30 + 5 * math.sin(ts / 86400 + sid)
                    rows.append((sid, ts // res, round(v - 1, 1), v, round(v + 1, 1), res // 30))
            with store.engine.begin() as conn:
                conn.exec_driver_sql(sql.format(ROLLUPS[res].name), rows)
    store.mark_folded({RES_5M: now // RES_5M * RES_5M - 3600, RES_1H: now // RES_1H * RES_1H})
    tail = [(sid, now - 12 * 3600 + 30 * i, 31.0 + (i // 40) % 3) for sid in ids for i in range(12 * 120)]
    for i in range(0, len(tail), 50_000):
        store.write_rows(tail[i:i + 50_000])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", help="database URL (default: a new SQLite file)")
    args = ap.parse_args()
    now = 1_790_000_000
    with tempfile.TemporaryDirectory() as d:
        url = args.url or f"sqlite:///{d}/chart.db"
        upgrade(url)
        store = Store(make_engine(url), "bench")
        t = time.perf_counter()
        build(store, now)
        built = time.perf_counter() - t
        # The build leaves millions of freed objects' worth of GC generations behind; a
        # server freezes its start-up heap the same way (app/web/app.py lifespan).
        gc.collect()
        gc.freeze()
        sid = store.find_series("m42")
        assert sid is not None
        print(f"chart_query db={store.dialect} series={N_SERIES} build_s={built:.1f}")
        measure(store, sid, now, "rows")
        if store.dialect == "postgresql":  # the same points once a running server has chunked them
            t = time.perf_counter()
            store.compact()
            print(f"  compact_s={time.perf_counter() - t:.1f}")
            measure(store, sid, now, "chunks")
        store.engine.dispose()


def measure(store: Store, sid: int, now: int, layout: str) -> None:
    """Median, p95 and max of 30 reads of each chart the pages draw: 12 hours (raw samples),
    30 days (5-minute rollups; the disk page's), a year (hourly)."""
    for name, span in (("12h", 12 * 3600), ("30d", 30 * DAY), ("365d", 365 * DAY)):
        times, n = [], 0
        for _ in range(30):
            t = time.perf_counter()
            n = len(store.history(sid, now - span, now))
            times.append((time.perf_counter() - t) * 1000)
        times.sort()
        print(f"  {layout:6} chart={name:4} points={n:5} median_ms={statistics.median(times):.2f} "
              f"p95_ms={times[int(len(times) * 0.95) - 1]:.2f} max_ms={times[-1]:.2f}")


if __name__ == "__main__":
    main()
