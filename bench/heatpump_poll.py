"""One full heat-pump poll of every block a WPM 3 serves, against a pymodbus ISG simulator
on loopback: requests and wall time per poll (median and p95 of N polls); then the same with
a full day book (120 days and two years of months), and the size of the state it writes every
poll (and an agent sends).

usage: python bench/heatpump_poll.py [--polls 50]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.demo.heatpump import start_isg  # noqa: E402
from collectors.home.heatpump.collector import HeatpumpCollector  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--polls", type=int, default=50)
    args = ap.parse_args()
    isg = start_isg(lambda: 65.0)
    port = isg.port
    c = HeatpumpCollector("127.0.0.1", port, timeout=2)
    c.collect()  # detection and connection
    wall, cpu = [], []
    for _ in range(args.polls):
        t0, c0 = time.perf_counter(), time.process_time()
        c.collect()
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    wall.sort()
    print(f"heatpump_poll controller=WPM 3 requests_per_poll={c.requests} polls={args.polls} "
          f"wall_ms median={statistics.median(wall):.1f} p95={wall[int(len(wall) * 0.95) - 1]:.1f} "
          f"client_cpu_ms median={statistics.median(cpu):.1f} (server on the same 2 cores)")
    import datetime as dt
    import json

    from collectors.home.heatpump.ledger import HeatpumpDay
    from collectors.state import dump

    first = dt.date.today() - dt.timedelta(days=120)
    c.days = [HeatpumpDay(date=(first + dt.timedelta(days=i)).isoformat(), heat_heating=41.0 + i % 9,
                          electricity_heating=12.3, heat_hot_water=8.0, electricity_hot_water=3.1,
                          backup_heating=float(i % 4), outside_sum=-123.4 * (i % 5), outside_count=2880,
                          starts=14, max_starts_per_hour=2, defrosts=9, defrost_seconds=2700.0) for i in range(120)]
    c.months = [HeatpumpDay(date=f"{2024 + m // 12}-{m % 12 + 1:02d}", days=30, heat_heating=1300.0,
                            electricity_heating=380.0) for m in range(24)]
    cpu = []
    for _ in range(args.polls):
        c0 = time.process_time()
        state = c.collect().state
        cpu.append((time.process_time() - c0) * 1000)
    size = len(json.dumps(dump(state)))
    print(f"heatpump_poll with a full day book: client_cpu_ms median={statistics.median(cpu):.1f} "
          f"state_json_bytes={size}")


if __name__ == "__main__":
    main()
