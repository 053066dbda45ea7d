"""The demo's past: after its first collection, every series it stored gets two days of
5-minute rollups and a month of hourly ones that end at the value the live story starts from,
so every chart the demo shows opens on a full day (the disks' temperatures get a year, and a
season, from seed_history below).

Each series' past is shaped by what it is: a counter climbs to where it is now, a state (a
number with words: up, degraded) holds, a temperature swings a few degrees with the day, any
other gauge a few percent; a ratio stays within 0..1."""

from __future__ import annotations

import logging
import math
import random
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from app.snapshot import SELF_METRICS
from app.storage.base import RES_1H, RES_5M, labels_key
from app.storage.models import sample, series
from collectors import all_metric_specs
from collectors.base import CollectResult, MetricSpec

DAYS_5M = 2  # 5-minute rollups: the 24 h charts, and a day before
DAYS_1H = 30  # hourly: the 7 d and 30 d charts


@dataclass
class FirstRound:
    started: float
    rates: dict[int, float]  # series id -> its rate per second between the round's two collections


class _Noting:
    """The store, noting what each of the first round's runs wrote: the rates its past is seeded
    with are the round's own. Read back from the store they took the live server's samples too,
    written beside them a moment apart: a whole-kWh counter read as 0 or 1 kWh a second."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.seen: dict[tuple[str, str], list[tuple[float, float]]] = {}

    def write_run(self, collector: str, started: float, duration: float, ok: bool, error: str | None,
                  result: CollectResult | None, skip: frozenset[str] = frozenset()) -> None:
        self.store.write_run(collector, started, duration, ok, error, result, skip)
        for s in result.samples if result is not None else ():
            if s.metric not in skip:
                self.seen.setdefault((s.metric, labels_key(s.labels)), []).append((started, s.value))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def rates(self) -> dict[int, float]:
        keys = [k for k, points in self.seen.items() if len(points) > 1]
        with self.store.engine.begin() as conn:
            ids = self.store.series_ids(conn, keys)
        out = {}
        for sid, key in zip(ids, keys, strict=True):
            (t0, v0), (t1, v1) = self.seen[key][-2:]
            if t1 > t0 and v1 >= v0:
                out[sid] = (v1 - v0) / (t1 - t0)
        return out


def first_round(cfg: Any, root: Path, store: Any, gap: float = 1.0, speed: float = 1.0,
                advance: bool = True) -> FirstRound:
    """Two collections of every collector into the store, `gap` seconds apart, as `serve` will
    do them: the series whose past is then seeded, and each counter's rate (a rate, a CPU's busy
    share, needs two readings). The story moves on by the time that passed at `speed`, so the
    rates seeded are the ones the live story goes on with (`advance`: it writes the story's next
    moment itself; not while the story's driver runs and writes it). Returns when it started,
    and the rates its two collections measured."""
    import asyncio

    from app.demo.story import attach_simulations, story_state, write_tree
    from app.disks.bay_labels import host_bays
    from app.scheduler import Scheduler, Snapshot
    from collectors import build_collectors, host_context

    colls = build_collectors(cfg, host=host_context(cfg, host_bays(cfg)))
    attach_simulations(colls, root)
    started = time.time()
    noting = _Noting(store)
    sched = Scheduler(colls, cfg.schedules(colls), Snapshot(host=cfg.host), noting)
    # A rehearsal with collectors of its own: their news ("ISG … connected") is the live ones'
    # to tell, so the terminal said it twice (issue 64). Warnings still show.
    quiet = logging.getLogger("collectors")
    level = quiet.level
    quiet.setLevel(max(level, logging.WARNING))
    try:
        asyncio.run(sched.run_all_once())
        time.sleep(gap)  # the collectors' own clocks (a rate per second) see the gap too
        if advance:
            write_tree(root, story_state((time.time() - started) * speed))
        asyncio.run(sched.run_all_once())
    finally:
        quiet.setLevel(level)
        for c in colls.values():  # the ISG's Modbus connection, the PVE API's client
            close = getattr(c, "close", None)
            if callable(close):
                close()
    return FirstRound(started, noting.rates())


def rates(store: Any) -> dict[int, float]:
    """Each series' rate per second between its two newest samples (a counter's, in the demo)."""
    q = (select(sample.c.series_id, sample.c.ts, sample.c.value).join(series, series.c.id == sample.c.series_id)
         .where(series.c.host == store.host).order_by(sample.c.series_id, sample.c.ts))
    seen: dict[int, list[tuple[int, float]]] = {}
    with store.engine.connect() as conn:
        for sid, ts, value in conn.execute(q):
            seen.setdefault(int(sid), []).append((int(ts), float(value)))
    out = {}
    for sid, points in seen.items():
        (t0, v0), (t1, v1) = points[-2] if len(points) > 1 else points[-1], points[-1]
        if t1 > t0 and v1 >= v0:
            out[sid] = (v1 - v0) / (t1 - t0)
    return out


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
    if metric.endswith("_ratio"):  # a share (CPU busy, a disk's busy time): a few points of it
        return "swing", max(abs(now_value) * 0.3, 0.02)
    return "swing", abs(now_value) * rng.uniform(0.02, 0.06)


def value_at(kind: str, size: float, now_value: float, ts: int, now: int, span: int, phase: float,
             rate: float | None = None) -> float:
    if kind == "counter":
        # At about the rate it climbs now (bytes a second), never below zero; else half of where
        # it is now a month ago. The charts of its rate then show the live rate's past.
        past = now_value - climbed(rate or now_value * 0.5 / span, ts, now, phase)
        if past < 0 and rate:  # younger than the past asked for: it started again (a reboot) before
            past %= max(now_value, rate * 86400)
        past = max(0.0, past)
        return float(math.floor(past)) if now_value == int(now_value) else past  # whole events stay whole
    if kind == "hold":
        return now_value
    day = math.sin((ts - now) / 86400 * 2 * math.pi + phase) - math.sin(phase)  # 0 now: no cliff
    return now_value + size * day


# A counter's rate in the past varies around the one measured now: by the week (±25 %, a lab's
# busy and quiet days) and by a spell of 3.3 days (±12 %, the weather a house's heating follows).
# Every day of the 30-day energy chart was the same height.
WEEK, SPELL = 7 * 86400, 3.3 * 86400
BY_WEEK, BY_SPELL = 0.25, 0.12


def climbed(rate: float, ts: float, now: float, phase: float) -> float:
    """How far a counter climbing at about `rate` a second rose from `ts` to `now`: the integral of
    rate·(1 + 0.25·sin(week) + 0.12·sin(spell)), in closed form so that it ends where it is now and
    never falls (the rate stays above 63 % of the measured one)."""
    def integral(t: float) -> float:
        return (t - BY_WEEK * WEEK / (2 * math.pi) * math.cos(2 * math.pi * t / WEEK + phase)
                - BY_SPELL * SPELL / (2 * math.pi) * math.cos(2 * math.pi * t / SPELL + 2 * phase))
    return rate * (integral(now) - integral(ts))


def seed_everything(store: Any, now: int, days_5m: int = DAYS_5M, days_1h: int = DAYS_1H,
                    specs: Mapping[str, MetricSpec] | None = None, skip: set[int] | None = None,
                    stop: threading.Event | None = None, rate_of: Mapping[int, float] | None = None) -> int:
    """Rollups before `now` for every series of the store's host with a sample; returns how many
    series. Buckets that exist already (a disk's year) are left as they are. A set `stop` ends it
    between series (the demo stopping: its folder is removed only once nothing writes there).
    `rate_of`: each counter's rate now (the first round's); without it, read from the store."""
    specs = specs if specs is not None else {**all_metric_specs(), **SELF_METRICS}
    rng = random.Random(7)
    rows: dict[int, list[dict[str, Any]]] = {RES_5M: [], RES_1H: []}
    # Written in batches as they are made, never held whole: the 1.36 million rows as dicts in one
    # list were +563 MB of the demo's peak (559-561 MB).
    batch_rows = 100_000
    seeded = 0
    span = days_1h * 86400
    rate_of = rate_of if rate_of is not None else rates(store)
    for sid, (metric, v) in sorted(latest_values(store).items()):
        if stop is not None and stop.is_set():
            return seeded
        if skip and sid in skip:
            continue
        spec = specs.get(metric)
        kind, size = shape(metric, spec, v, rng)
        phase = rng.uniform(0, 2 * math.pi)
        ratio = metric.endswith("_ratio")
        for res, days in ((RES_5M, days_5m), (RES_1H, days_1h)):
            end = now // res * res
            for ts in range(end - days * 86400, end, res):
                avg = value_at(kind, size, v, ts, now, span, phase, rate_of.get(sid))
                if kind == "swing" and size:
                    avg += rng.uniform(-0.1, 0.1) * size
                lo, hi = (avg, avg) if kind != "swing" else (avg - size * 0.15, avg + size * 0.15)
                if ratio:
                    avg, lo, hi = (min(1.0, max(0.0, x)) for x in (avg, lo, hi))
                rows[res].append({"series_id": sid, "bucket": ts // res, "vmin": min(lo, avg), "vavg": avg,
                                  "vmax": max(hi, avg), "n": res // 30})
        seeded += 1
        if len(rows[RES_5M]) + len(rows[RES_1H]) >= batch_rows:
            store.import_rollups(rows, {})
            rows = {RES_5M: [], RES_1H: []}
    store.import_rollups(rows, {RES_5M: now // RES_5M * RES_5M, RES_1H: now // RES_1H * RES_1H})
    return seeded


def seed_history(store: Any, now: float | None = None, days: int = 30, stop: threading.Event | None = None) -> int:
    """A month of 5-minute rollups and a year of hourly ones, so the charts have a past."""
    from app.demo.story import story_state
    from app.storage.store import labels_key

    now = int(now or time.time())
    state = story_state(0)
    rng = random.Random(42)
    keys = []
    for d in state["disks"]:
        keys.append((("rackpulse_disk_temperature_celsius", labels_key((("serial", d["serial"]),))), d["temp"]))
        keys.append((("rackpulse_disk_health", labels_key((("serial", d["serial"]),))), 0))
    rows: dict[int, list[dict[str, Any]]] = {RES_5M: [], RES_1H: []}
    with store.engine.begin() as conn:
        ids = store.series_ids(conn, [k for k, _ in keys])
    def wave(ts: float) -> float:  # a day's swing and a season's
        return math.sin(ts / 86400 * 2 * math.pi) * 2 + math.sin(ts / (86400 * 91) * 2 * math.pi) * 4

    for sid, (_, base) in zip(ids, keys, strict=True):
        if stop is not None and stop.is_set():
            return len(ids)
        # An hour the 5-minute rollups cover is their fold, as the real rollups are: a chart of
        # hourly ones shows the same highest and lowest as one of 5-minute ones.
        hours: dict[int, list[dict[str, Any]]] = {}
        for res, span in ((RES_5M, days * 86400), (RES_1H, 365 * 86400)):
            end = now // res * res
            for ts in range(end - span, end, res):
                folded = hours.get(ts // RES_1H) if res == RES_1H else None
                if folded:
                    rows[res].append({"series_id": sid, "bucket": ts // res, "vmin": min(r["vmin"] for r in folded),
                                      "vavg": sum(r["vavg"] for r in folded) / len(folded),
                                      "vmax": max(r["vmax"] for r in folded), "n": sum(r["n"] for r in folded)})
                    continue
                avg = 0.0
                if base:
                    # The past ends where the live story starts (base now), not a season away from it.
                    avg = base + wave(ts) - wave(now) + rng.uniform(-0.3, 0.3)
                row = {"series_id": sid, "bucket": ts // res, "vmin": avg - 0.5 if base else 0,
                       "vavg": avg, "vmax": avg + 0.5 if base else 0, "n": res // 30}
                rows[res].append(row)
                if res == RES_5M:
                    hours.setdefault(ts // RES_1H, []).append(row)
        if len(rows[RES_5M]) + len(rows[RES_1H]) >= 100_000:  # in batches, as seed_everything
            store.import_rollups(rows, {})
            rows = {RES_5M: [], RES_1H: []}
    store.import_rollups(rows, {RES_5M: now // RES_5M * RES_5M, RES_1H: now // RES_1H * RES_1H})
    return len(ids)
