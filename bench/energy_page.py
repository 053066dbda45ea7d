"""(16) The /energy figures: the month's report and the stacked chart over 24 h, 30 d and 12 months.

Builds a year of hourly rollups of rackpulse_energy_joules_total and rackpulse_power_watts for 8
sources (three plugs, a UPS, two BMCs, the CPUs, the heat pump), then times what a page view and
the energy watch read: the report (two months of hours per source), each chart range, the whole
page's work per range (its table and chart from one read: `view`), warm (the folded hours kept
between views, app/energy/book.py) and cold (the first view after a start or a refold), and the
watch's baselines (a week of each source's power). Prints median and p95 of 30 runs.

usage: python bench/energy_page.py [--url DATABASE_URL]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.energy import book, ledger  # noqa: E402
from app.energy.chart import since, stack  # noqa: E402
from app.energy.config import EnergyConfig  # noqa: E402
from app.energy.ledger import hourly_by_source, report  # noqa: E402
from app.energy.watch import baselines  # noqa: E402
from app.storage.db import make_engine, upgrade  # noqa: E402
from app.storage.store import DAY, RES_1H, Store, labels_key  # noqa: E402
from app.web.energy import table_and_chart  # noqa: E402
from collectors.base import Sample  # noqa: E402

SOURCES = {"rack": 330.0, "network": 34.0, "desk": 75.0, "ups12v": 93.0, "r720": 184.0, "r430": 96.0, "cpu": 38.0,
           "heatpump": 600.0}


def build(store: Store, now: int) -> None:
    keys = []
    for s in SOURCES:
        keys.append(("rackpulse_energy_joules_total", labels_key(Sample.of("x", 0, source=s).labels)))
        keys.append(("rackpulse_power_watts", labels_key(Sample.of("x", 0, source=s).labels)))
    with store.engine.begin() as conn:
        ids = store.series_ids(conn, keys)
    rows = []
    end = now // RES_1H * RES_1H
    for i, watts in enumerate(SOURCES.values()):
        energy, power = ids[2 * i], ids[2 * i + 1]
        for n, ts in enumerate(range(end - 365 * DAY, end, RES_1H)):
            before, after = n * 3600 * watts, (n + 1) * 3600 * watts
            rows.append({"series_id": energy, "bucket": ts // RES_1H, "vmin": before, "vavg": (before + after) / 2,
                         "vmax": after, "n": 120})
            rows.append({"series_id": power, "bucket": ts // RES_1H, "vmin": watts, "vavg": watts, "vmax": watts,
                         "n": 120})
    store.import_rollups({RES_1H: rows}, {RES_1H: end})


def timed(fn, runs: int = 30) -> tuple[float, float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    out.sort()
    return statistics.median(out), out[int(len(out) * 0.95) - 1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", help="database URL (default: a new SQLite file)")
    args = ap.parse_args()
    now = 1_795_867_200  # 2026-11-28 12:00 UTC
    cfg = EnergyConfig(price_per_kwh=0.30, timezone="Europe/Berlin", inside={"r720": "rack", "r430": "rack",
                                                                               "cpu": "ups12v"})
    with tempfile.TemporaryDirectory() as d:
        url = args.url or f"sqlite:///{d}/energy.db"
        upgrade(url)
        store = Store(make_engine(url), "bench")
        t = time.perf_counter()
        build(store, now)
        print(f"energy_page: {len(SOURCES)} sources, a year of hourly rollups each "
              f"({time.perf_counter() - t:.1f} s to build), {store.dialect}")
        med, p95 = timed(lambda: report(store, {}, cfg, now))
        print(f"  report (today, month, last month, projection): median {med:.1f} ms, p95 {p95:.1f} ms")
        tz = cfg.zone()
        for rng in ("24h", "30d", "12mo"):
            med, p95 = timed(lambda rng=rng: stack(hourly_by_source(store, since(rng, now, tz), now), cfg.inside, rng,
                                                   now, tz))
            print(f"  chart {rng:>4}: median {med:.1f} ms, p95 {p95:.1f} ms")
        ledger.clock = lambda: now
        for rng in ("24h", "30d", "12mo"):
            med, p95 = timed(lambda rng=rng: table_and_chart(store, {}, cfg, rng))
            cold, _ = timed(lambda rng=rng: (book.books(store).forget(), table_and_chart(store, {}, cfg, rng)), runs=5)
            print(f"  view  {rng:>4} (table and chart): warm median {med:.1f} ms, p95 {p95:.1f} ms; cold median {cold:.1f} ms")
        med, p95 = timed(lambda: baselines(store, now, 7), runs=10)
        print(f"  baselines (7 days of each source's power): median {med:.1f} ms, p95 {p95:.1f} ms")


if __name__ == "__main__":
    main()
