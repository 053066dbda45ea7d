"""The demo's past: after its first collection, every series it stored gets two days of
5-minute rollups and a month of hourly ones that end at the value the live story starts from,
so every chart the demo shows opens on a full day (the disks' temperatures get a year, and a
season, from story.seed_history).

Each series' past is shaped by what it is: a counter climbs to where it is now, a state (a
number with words: up, degraded) holds, a temperature swings a few degrees with the day, any
other gauge a few percent; a ratio stays within 0..1."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from app.scheduler import SELF_METRICS
from app.storage.base import RES_1H, RES_5M
from app.storage.models import sample, series
from collectors import all_metric_specs
from collectors.base import MetricSpec

DAYS_5M = 2  # 5-minute rollups: the 24 h charts, and a day before
DAYS_1H = 30  # hourly: the 7 d and 30 d charts


def first_round(cfg: Any, root: Path, store: Any) -> float:
    """One collection of every collector into the store, as `serve` will do it: the series whose
    past is then seeded. Returns when it started."""
    import asyncio

    from app.bay_labels import host_bays
    from app.scheduler import Scheduler, Snapshot
    from collectors import build_collectors, host_context
    from demo.story import attach_simulations

    colls = build_collectors(cfg, host=host_context(cfg, host_bays(cfg)))
    attach_simulations(colls, root)
    started = time.time()
    asyncio.run(Scheduler(colls, cfg.schedules(colls), Snapshot(host=cfg.host), store).run_all_once())
    return started


def latest_values(store: Any) -> dict[int, tuple[str, float]]:
    """Each of the host's series with a sample: (its metric, its newest value)."""
    newest = (select(sample.c.series_id, func.max(sample.c.ts).label("ts")).group_by(sample.c.series_id)
              .subquery())
    q = (select(series.c.id, series.c.metric, sample.c.value)
         .join(newest, newest.c.series_id == series.c.id)
         .join(sample, (sample.c.series_id == newest.c.series_id) & (sample.c.ts == newest.c.ts))
         .where(series.c.host == store.host))
    with store.engine.connect() as conn:
        return {int(sid): (str(metric), float(value)) for sid, metric, value in conn.execute(q)}


def shape(metric: str, spec: MetricSpec | None, now_value: float, rng: random.Random
          ) -> tuple[str, float]:
    """How this series' past moves: ("counter" | "hold" | "swing"), and its swing's size."""
    if spec is not None and spec.kind == "counter":
        return "counter", 0.0
    if (spec is not None and spec.states) or metric.endswith(("_info", "_status", "_state")):
        return "hold", 0.0
    if metric.endswith("_celsius"):
        return "swing", 2.0
    return "swing", abs(now_value) * rng.uniform(0.02, 0.06)


def value_at(kind: str, size: float, now_value: float, ts: int, now: int, span: int, phase: float) -> float:
    if kind == "counter":  # a steady rate up to where it is now: half of it a month ago
        past = max(0.0, now_value * (1 - 0.5 * (now - ts) / span))
        return float(math.floor(past)) if now_value == int(now_value) else past  # whole events stay whole
    if kind == "hold":
        return now_value
    day = math.sin((ts - now) / 86400 * 2 * math.pi + phase) - math.sin(phase)  # 0 now: no cliff
    return now_value + size * day


def seed_everything(store: Any, now: int, days_5m: int = DAYS_5M, days_1h: int = DAYS_1H,
                    specs: Mapping[str, MetricSpec] | None = None, skip: set[int] | None = None) -> int:
    """Rollups before `now` for every series of the store's host with a sample; returns how many
    series. Buckets that exist already (a disk's year) are left as they are."""
    specs = specs if specs is not None else {**all_metric_specs(), **SELF_METRICS}
    rng = random.Random(7)
    rows: dict[int, list[dict[str, Any]]] = {RES_5M: [], RES_1H: []}
    seeded = 0
    span = days_1h * 86400
    for sid, (metric, v) in sorted(latest_values(store).items()):
        if skip and sid in skip:
            continue
        spec = specs.get(metric)
        kind, size = shape(metric, spec, v, rng)
        phase = rng.uniform(0, 2 * math.pi)
        ratio = metric.endswith("_ratio")
        for res, days in ((RES_5M, days_5m), (RES_1H, days_1h)):
            end = now // res * res
            for ts in range(end - days * 86400, end, res):
                avg = value_at(kind, size, v, ts, now, span, phase)
                if kind == "swing" and size:
                    avg += rng.uniform(-0.1, 0.1) * size
                lo, hi = (avg, avg) if kind != "swing" else (avg - size * 0.15, avg + size * 0.15)
                if ratio:
                    avg, lo, hi = (min(1.0, max(0.0, x)) for x in (avg, lo, hi))
                rows[res].append({"series_id": sid, "bucket": ts // res, "vmin": min(lo, avg), "vavg": avg,
                                  "vmax": max(hi, avg), "n": res // 30})
        seeded += 1
    store.import_rollups(rows, {RES_5M: now // RES_5M * RES_5M, RES_1H: now // RES_1H * RES_1H})
    return seeded
