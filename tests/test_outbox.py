"""The agent's outbox: order, acknowledgement, restart, and staying within its bound by
folding old runs into rollups before anything is dropped."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from app.agent.outbox import Outbox, fold

T0 = 1_795_000_000 // 3600 * 3600


def run(started: float, value: float, n_series: int = 1, collector: str = "smart") -> dict[str, Any]:
    return {"kind": "run", "collector": collector, "started": started, "duration": 0.1, "ok": True,
            "samples": [["rackpulse_disk_temperature_celsius", {"serial": f"S{i}"}, value + i] for i in range(n_series)]
            + [["rackpulse_disk_info", {"serial": "S0", "model": "WDC"}, 1]],
            "state": {"t": started}, "entities": []}


def test_records_come_out_in_order_and_leave_only_when_acknowledged(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "o.db", 10_000_000)
    seqs = [box.put(run(T0 + i, i)) for i in range(5)]
    assert seqs == sorted(seqs)
    first = box.take(10_000_000, max_records=2)
    assert [p.seq for p in first] == seqs[:2]
    assert json.loads(first[0].with_seq())["seq"] == seqs[0]
    assert [p.seq for p in box.take(10_000_000)] == seqs  # not acked yet: still there
    box.ack(seqs[1])
    assert [p.seq for p in box.take(10_000_000)] == seqs[2:]
    st = box.stats()
    # what still waits, by number: the healthz answer that says whether an outage's backlog is gone
    assert (st["records"], st["oldest_seq"], st["newest_seq"]) == (3, seqs[2], seqs[4])


def test_the_outbox_survives_a_restart_with_its_instance_its_records_and_the_last_states(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "o.db", 10_000_000)
    box.put(run(T0, 1))
    box.put(run(T0 + 30, 2))
    instance = box.instance
    box.close()
    again = Outbox(tmp_path / "o.db", 10_000_000)
    assert again.instance == instance
    assert len(again.take(10_000_000)) == 2
    assert again.states() == {"smart": {"t": T0 + 30}}
    assert Outbox(tmp_path / "other.db", 1000).instance != instance


def test_take_respects_the_batch_size_but_always_returns_at_least_one(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "o.db", 10_000_000)
    for i in range(10):
        box.put(run(T0 + i, i, n_series=50))
    one = len(box.take(10_000_000)[0].body)
    assert len(box.take(one * 3 + 10)) == 3
    assert len(box.take(1)) == 1


def test_fold_gives_min_mean_max_and_count_per_bucket_and_skips_unstored_metrics() -> None:
    recs = [run(T0 + 0, 10), run(T0 + 100, 20), run(T0 + 200, 60), run(T0 + 300, 5)]
    out = fold(recs, 300, {"smart": frozenset({"rackpulse_disk_info"})})
    assert out["kind"] == "rollup" and out["res"] == 300
    assert out["series"] == [["rackpulse_disk_temperature_celsius", {"serial": "S0"},
                              [[T0 // 300, 10, 30.0, 60, 3], [T0 // 300 + 1, 5, 5.0, 5, 1]]]]
    hourly = fold([out], 3600)
    assert hourly["series"][0][2] == [[T0 // 3600, 5, 23.75, 60, 4]]


def test_an_outbox_over_its_bound_folds_the_oldest_runs_first_and_keeps_every_series(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "o.db", 60_000, {"smart": frozenset({"rackpulse_disk_info"})})
    rnd = random.Random(7)
    for i in range(6 * 120):  # six hours at 30 s, ten series
        box.put(run(T0 + 30 * i, rnd.uniform(30, 40), n_series=10))
    st = box.stats()
    assert st["bytes"] <= 60_000 and st["dropped_points"] == 0
    recs = [json.loads(p.body) for p in box.take(10**9)]
    # The oldest run is kept without its samples (they are in the rollup): with nothing before it
    # to compare with, it might have changed the inventory.
    kept = [r for r in recs if r["kind"] == "run" and not r["samples"]]
    assert [r["started"] for r in kept] == [T0]
    recs = [r for r in recs if r not in kept]
    kinds = [r["kind"] for r in recs]
    assert kinds[0] == "rollup" and kinds[-1] == "run"  # old data rolled up, the newest still raw
    assert kinds == sorted(kinds, key=lambda k: k != "rollup")  # rollups all come before raw runs
    # every one of the ten series is still there, from the first bucket on, with all its points counted
    covered: dict[tuple[tuple[str, str], ...], int] = {}
    for r in recs:
        for _, lab, pts in r.get("series", []):
            key = tuple(sorted(lab.items()))
            covered[key] = covered.get(key, 0) + sum(p[4] for p in pts)
    raw = {tuple(sorted(lab.items())): 0 for r in recs if r["kind"] == "run" for _, lab, _ in r["samples"]}
    assert len(covered) == 10
    runs_left = sum(1 for r in recs if r["kind"] == "run")
    assert all(n + runs_left == 720 for n in covered.values())
    assert len(raw) == 11  # raw runs still carry the info series (the server does not store it)
    first = min(p[0] for r in recs if r["kind"] == "rollup" for _, _, pts in r["series"] for p in pts)
    assert first * r_res(recs[0]) == T0


def r_res(rec: dict[str, Any]) -> int:
    return int(rec["res"])


def test_when_even_hourly_rollups_overflow_the_oldest_hours_go_and_are_counted(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "o.db", 6_000)
    for i in range(24 * 12):  # a day at 5 min, 40 series: hourly rollups alone exceed 6 KB
        box.put(run(T0 + 300 * i, float(i % 7), n_series=40))
    st = box.stats()
    assert st["bytes"] <= 6_000 and st["dropped_points"] > 0
    recs = [json.loads(p.body) for p in box.take(10**9)]
    newest = max(r["started"] for r in recs if r["kind"] == "run")
    assert newest == T0 + 300 * (24 * 12 - 1)  # the latest run is never what goes


def test_a_rejected_record_is_set_aside_and_no_longer_sent(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "o.db", 10_000_000)
    box.put(run(T0, 1))
    box.put(run(T0 + 1, 2))
    bad = box.take(10_000_000)[0]
    box.reject(bad, "HTTP 400: malformed batch")
    assert [p.seq for p in box.take(10_000_000)] == [bad.seq + 1]
    assert box.stats()["rejected"] == 1


def test_a_damaged_outbox_is_kept_aside_and_the_agent_starts_an_empty_one(tmp_path: Path) -> None:
    path = tmp_path / "o.db"
    path.write_bytes(b"this is not a database, a disk filled up while it was written" * 100)
    box = Outbox(path, 10_000_000)
    box.put(run(T0, 1))
    assert box.stats()["records"] == 1
    aside = [p for p in tmp_path.iterdir() if ".damaged-" in p.name]
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"this is not a database")


def test_a_truncated_outbox_is_kept_aside_too(tmp_path: Path) -> None:
    path = tmp_path / "o.db"
    box = Outbox(path, 100_000_000)
    for i in range(300):
        box.put(run(T0 + i, i, n_series=20))
    box.close()
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.truncate(size // 2)
    again = Outbox(path, 100_000_000)
    assert again.stats()["records"] == 0 and again.take(1000) == []
    aside = [p for p in tmp_path.iterdir() if ".damaged-" in p.name and not p.name.endswith(("-wal", "-shm"))]
    assert len(aside) == 1 and aside[0].stat().st_size == size // 2


def test_runs_that_changed_the_inventory_survive_folding_without_their_samples(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "o.db", 40_000)
    healthy = [["disk", "S1", {"state": "ok", "bay": "bay 3"}]]
    for i in range(6 * 120):  # six hours at 30 s; the disk fails at 1 h and is replaced at 2 h
        rec = run(T0 + 30 * i, 35.0, n_series=10)
        rec["entities"] = healthy if i < 120 else [["disk", "S1", {"state": "failing", "bay": "bay 3"}]] \
            if i < 240 else [["disk", "S2", {"state": "ok", "bay": "bay 3"}]]
        box.put(rec)
    assert box.stats()["bytes"] <= 40_000
    recs = [json.loads(p.body) for p in box.take(10**9)]
    assert any(r["kind"] == "rollup" for r in recs)
    stripped = {r["started"]: r["entities"] for r in recs if r["kind"] == "run" and not r["samples"]}
    # the first run (nothing to compare with), the failure and the replacement: each at its time
    assert sorted(stripped) == [T0, T0 + 30 * 120, T0 + 30 * 240]
    assert stripped[T0 + 30 * 120][0][2]["state"] == "failing" and stripped[T0 + 30 * 240][0][1] == "S2"
    # and every sample of those runs is counted in the rollups, none twice
    counted = sum(p[4] for r in recs if r["kind"] == "rollup" for m, lab, pts in r["series"]
                  if lab == {"serial": "S0"} for p in pts)
    raw = sum(1 for r in recs if r["kind"] == "run" and r["samples"])
    assert counted + raw == 720
