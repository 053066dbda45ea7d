"""(27) The soak: a `rackpulse demo` running for an hour with a client every 100 ms walking the
pages, its server's RSS printed each minute. After minute 10 (the seeding done, the caches full)
the RSS should stay within 5 MB; the last line says whether it did, and by how much it moved.
The demo collects as it does for a person (every 30 s, its agent pushing), so what the soak sees
is the collectors', the store's and the pages' memory together.

usage: python bench/soak.py [--minutes 60] [--every 0.1] [--settle 10] [--interval 30]
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from page_cpu import ROOT, Demo  # noqa: E402

# What a person's open tabs ask for: the pages, their live fragments, charts, the API and a scrape.
PATHS = ["/", "/host", "/disks", "/disks/ZA1049HK", "/network", "/probes", "/power", "/heatpump", "/alerts",
         "/events", "/status", "/hosts", "/collectors", "/energy", "/energy?range=12mo", "/metrics", "/api/v1/alerts",
         "/api/series?metric=rackpulse_disk_temperature_celsius&label=serial%3DZA1049HK&range=24h",
         "/api/series?metric=rackpulse_disk_temperature_celsius&label=serial%3DZA1049HK&range=30d"]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=int, default=60)
    ap.add_argument("--every", type=float, default=0.1, help="seconds between two requests")
    ap.add_argument("--settle", type=float, default=10, help="minutes before the RSS is judged")
    ap.add_argument("--interval", type=int, default=30, help="the demo's collection interval, seconds")
    args = ap.parse_args()
    demo = Demo(ROOT, interval=args.interval)
    errors = requests = 0
    per_minute: list[float] = []
    try:
        demo.ready(stop_agent=False)
        start = time.monotonic()
        conn = http.client.HTTPConnection("127.0.0.1", demo.port, timeout=30)
        paths = itertools.cycle(PATHS)
        next_at, next_minute = start, start + 60
        print(f"soak: minute 0, rss {rss_mb(demo.pid):.1f} MB", flush=True)
        while len(per_minute) < args.minutes:
            try:
                conn.request("GET", next(paths))
                r = conn.getresponse()
                r.read()
                errors += r.status >= 400
            except (OSError, http.client.HTTPException):
                errors += 1
                conn = http.client.HTTPConnection("127.0.0.1", demo.port, timeout=30)
            requests += 1
            if time.monotonic() >= next_minute:
                per_minute.append(rss_mb(demo.pid))
                print(f"soak: minute {len(per_minute)}, rss {per_minute[-1]:.1f} MB, {requests} requests, "
                      f"{errors} errors", flush=True)
                next_minute += 60
            next_at += args.every
            time.sleep(max(0.0, next_at - time.monotonic()))
    finally:
        demo.stop()
    judged = per_minute[int(args.settle):]
    if judged:
        spread = max(judged) - min(judged)
        print(f"soak: after minute {args.settle:g}: {min(judged):.1f}-{max(judged):.1f} MB, spread {spread:.1f} MB "
              f"({'flat' if spread <= 5 else 'NOT flat'}: within 5 MB); {requests} requests, {errors} errors")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the finally stops the demo
    main()
