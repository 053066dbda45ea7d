"""(1) Ingest speed: rackpulse's Store.write_rows into SQLite and PostgreSQL, beside the fastest
plain way into each, in the same run: sqlite3 executemany, and PostgreSQL's COPY (psycopg's
binary-less text COPY, the same table and primary key, the same batches, a commit each).

Data: 200 series x 5,000 timestamps at 30 s = 1,000,000 samples, inserted in time order
(as collectors write them), 1,000 rows per transaction, primary key present.

usage: python bench/ingest.py [--pg URL] [--rows N]
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

from app.storage.db import make_engine, upgrade  # noqa: E402
from app.storage.store import Store  # noqa: E402

N_SERIES, BATCH, TS0 = 200, 1_000, 1_790_000_000


def rows(n: int) -> list[tuple[int, int, float]]:
    per = n // N_SERIES
    return [(s + 1, TS0 + 30 * i, round(30 + 5 * math.sin(i / 50 + s), 1)) for i in range(per) for s in range(N_SERIES)]


def bench_store(url: str, data: list[tuple[int, int, float]]) -> float:
    upgrade(url)
    engine = make_engine(url)
    store = Store(engine, "bench")
    with engine.begin() as conn:
        store.series_ids(conn, [(f"m{s}", "[]") for s in range(N_SERIES)])
    t = time.perf_counter()
    for i in range(0, len(data), BATCH):
        store.write_rows(data[i:i + BATCH])
    el = time.perf_counter() - t
    engine.dispose()
    return len(data) / el


def bench_raw_sqlite(path: str, data: list[tuple[int, int, float]]) -> float:
    c = sqlite3.connect(path)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("PRAGMA synchronous=NORMAL")
    c.execute("CREATE TABLE sample (series_id INTEGER NOT NULL, ts BIGINT NOT NULL, value FLOAT NOT NULL, "
              "PRIMARY KEY (series_id, ts)) WITHOUT ROWID")
    c.commit()
    t = time.perf_counter()
    for i in range(0, len(data), BATCH):
        c.executemany("INSERT INTO sample (series_id, ts, value) VALUES (?, ?, ?)", data[i:i + BATCH])
        c.commit()
    el = time.perf_counter() - t
    c.close()
    return len(data) / el


def bench_pg_copy(url: str, data: list[tuple[int, int, float]]) -> float:
    import psycopg

    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as c:
        c.execute("CREATE TABLE copy_sample (series_id INTEGER NOT NULL, ts BIGINT NOT NULL, "
                  "value DOUBLE PRECISION NOT NULL, PRIMARY KEY (series_id, ts))")
        c.commit()
        t = time.perf_counter()
        for i in range(0, len(data), BATCH):
            with c.cursor() as cur, cur.copy("COPY copy_sample (series_id, ts, value) FROM STDIN") as cp:
                for row in data[i:i + BATCH]:
                    cp.write_row(row)
            c.commit()
        return len(data) / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pg", default=os.environ.get("RACKPULSE_BENCH_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test"))
    ap.add_argument("--rows", type=int, default=1_000_000)
    args = ap.parse_args()
    data = rows(args.rows)
    with tempfile.TemporaryDirectory() as d:
        raw = bench_raw_sqlite(f"{d}/raw.db", data)
        ours = bench_store(f"sqlite:///{d}/rackpulse.db", data)
    print(f"ingest rows={len(data)} batch={BATCH}")
    print(f"  raw sqlite3 executemany   {raw:12,.0f} samples/s")
    print(f"  rackpulse SQLite          {ours:12,.0f} samples/s  ({ours / raw:.0%} of raw)")
    from sqlalchemy import create_engine, text

    name = f"rackpulse_bench_{os.getpid()}"
    admin = create_engine(args.pg, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        db = args.pg.rsplit("/", 1)[0] + f"/{name}"
        copy = bench_pg_copy(db, data)
        pg = bench_store(db, data)
        print(f"  PostgreSQL COPY           {copy:12,.0f} samples/s")
        print(f"  rackpulse PostgreSQL      {pg:12,.0f} samples/s  ({pg / copy:.0%} of COPY)")
    finally:
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


if __name__ == "__main__":
    main()
