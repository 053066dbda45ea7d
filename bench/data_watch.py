"""What judging the data sets costs the server: DataWatch.update (app/data/watch.py) over the demo
host's snapshot at the story's failing moment (md0 rebuilding, restic and borg read, two sets),
and over a host with 50 sets and 40 repositories of 20 groups each (a large home lab). It runs
every 30 s (app/runtime DATA_TICK) and when /data is asked for before it.

usage: python bench/data_watch.py [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def timed(fn, rounds: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    took = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        took.append(time.perf_counter() - t0)
    return statistics.median(took) * 1000, max(took) * 1000


def demo_snapshot():  # type: ignore[no-untyped-def]
    from tests.peers import DEMO_PEERS
    from tests.test_web import demo_app

    app = demo_app(Path(tempfile.mkdtemp()), 80, runs=2, shared=False)
    return app, DEMO_PEERS


def large_snapshot():  # type: ignore[no-untyped-def]
    from app.data.config import DataConfig, DataSet
    from app.scheduler import Snapshot
    from tests.states import one

    now = time.time()
    snap = Snapshot(host="big")
    snap.states["host"] = one("host", {"filesystems": [{"mountpoint": f"/srv/{i}", "device": f"/dev/md{i}",
                                                        "fstype": "ext4"} for i in range(50)]})
    snap.states["mdraid"] = one("mdraid", {"arrays": [{"name": f"md{i}", "level": "raid6", "disks_total": 12,
                                                       "missing": i % 3} for i in range(50)]})
    snap.states["restic"] = one("restic", {"repos": [{"name": f"r{r}", "location": f"/mnt/r{r}", "groups": [
        {"host": f"h{g}", "paths": [f"/srv/{(r + g) % 50}"], "newest": now - 3600 * g, "count": 30}
        for g in range(20)]} for r in range(40)]})
    sets = DataConfig(sets=[DataSet(name=f"s{i}", path=f"/srv/{i}/data") for i in range(50)])
    return snap, sets


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=200)
    rounds = ap.parse_args().rounds
    from app.data.watch import DataWatch

    app, peers = demo_snapshot()
    try:
        rt = app.state.runtime
        w = DataWatch()
        med, worst = timed(lambda: w.update(rt.snap, rt.cfg.data, time.time()), rounds)
        print(f"demo host, 2 sets, restic + borg: {med:.2f} ms median, {worst:.2f} ms worst of {rounds}")
    finally:
        for p in peers:
            p.stop()
    snap, sets = large_snapshot()
    w = DataWatch()
    med, worst = timed(lambda: w.update(snap, sets, time.time()), max(rounds // 10, 5))
    print(f"50 sets, 50 arrays, 40 restic repositories x 20 groups: {med:.2f} ms median, {worst:.2f} ms worst")


if __name__ == "__main__":
    main()
