"""One full heat-pump poll of every block a WPM 3 serves, against a pymodbus ISG simulator
on loopback: requests and wall time per poll (median and p95 of N polls).

usage: python bench/heatpump_poll.py [--polls 50]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from collectors.home.heatpump.collector import HeatpumpCollector  # noqa: E402
from demo.heatpump import start_isg  # noqa: E402


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


if __name__ == "__main__":
    main()
