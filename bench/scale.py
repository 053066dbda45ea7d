"""Scale curves: 1, 10, 50 and 100 agent hosts pushing into one `rackpulse serve`, on SQLite and
PostgreSQL. Each simulated agent (bench/agents.py's SimAgent: a keep-alive connection, gzip
batches of one collector run) sends ``--series`` samples every ``--interval`` seconds (the
demo host has about 1,100 series). While they push, one reader asks for the pages a person
opens (overview, /hosts, /alerts, an agent host's /power) and /metrics, one after the other.

Printed per host count: server CPU (cores) and RSS, batch latency p50/p99 (the ingest lag a
batch sees), each page's p50/p99 and /metrics' size in series.

usage: python bench/scale.py [--hosts 1,10,50,100] [--db sqlite|postgresql|both] [--series 1100]
                             [--interval 15] [--seconds 30]
"""

from __future__ import annotations

import argparse
import http.client
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from agents import SimAgent, bench_database, proc_stats  # noqa: E402

from tests.agent_hosts import free_port, get_json, rackpulse, server_config, stop, wait_for  # noqa: E402

PAGES = ["/", "/hosts", "/alerts", "/h/agent-000/power", "/metrics"]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def reader(port: int, stop_at: float, out: dict[str, list[float]], sizes: dict[str, int]) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    while time.time() < stop_at:
        for path in PAGES:
            t = time.perf_counter()
            conn.request("GET", path, headers={"Accept-Encoding": "gzip"} if path == "/metrics" else {})
            r = conn.getresponse()
            body = r.read()
            out.setdefault(path, []).append((time.perf_counter() - t) * 1000)
            sizes[path] = len(body)
        time.sleep(0.2)
    conn.request("GET", "/metrics")
    sizes["series"] = sum(1 for ln in conn.getresponse().read().decode().splitlines() if ln and ln[0] != "#")


def run(kind: str, hosts: int, args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="rackpulse-bench-scale-"))
    with bench_database(kind, tmp, hosts) as (url, tokens):
        measure(kind, url, tokens, tmp, args)


def measure(kind: str, url: str, tokens: dict[str, str], tmp: Path, args: argparse.Namespace) -> None:
    hosts = len(tokens)
    port = free_port()
    server = rackpulse("serve", "--config", str(server_config(tmp / "server.toml", url, port, test_speed=False,
                                                            silent_after=60)), log=tmp / "server.log")
    try:
        wait_for(lambda: get_json(f"http://127.0.0.1:{port}/healthz"), what="server")
        sims = [SimAgent(h, t, port, args.series) for h, t in tokens.items()]
        for s in sims:  # a first batch each, so every host exists before anything is timed
            s.instance = "bench-" + s.host
            s.send()
            s.latencies.clear()
        start = time.time() + 0.5
        end = start + args.seconds
        for i, s in enumerate(sims):
            s.schedule = (start + args.interval * i / len(sims), args.interval, end)
        lat: dict[str, list[float]] = {}
        sizes: dict[str, int] = {}
        cpu0, _, _ = proc_stats(server.pid)
        t0 = time.time()
        read = threading.Thread(target=reader, args=(port, end, lat, sizes))
        read.start()
        for s in sims:
            s.start()
        for s in sims:
            s.join()
        read.join()
        wall = time.time() - t0
        cpu1, rss, hwm = proc_stats(server.pid)
        batches = sorted(x * 1000 for s in sims for x in s.latencies)
        errors = sum(s.errors for s in sims)
        pages = "  ".join(f"{p} {pct(v, 0.5):.1f}/{pct(v, 0.99):.1f}" for p, v in lat.items())
        print(f"{kind:10s} {hosts:4d} hosts  CPU {(cpu1 - cpu0) / wall:4.2f} cores  RSS {rss:5.0f} MB "
              f"(peak {hwm:.0f})  batch p50/p99 {pct(batches, 0.5):.0f}/{pct(batches, 0.99):.0f} ms  "
              f"errors {errors}  /metrics {sizes.get('series', 0):,} series", flush=True)
        print(f"           pages p50/p99 ms: {pages}", flush=True)
    finally:
        stop(server)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", default="1,10,50,100")
    ap.add_argument("--db", choices=("sqlite", "postgresql", "both"), default="both")
    ap.add_argument("--series", type=int, default=1100)
    ap.add_argument("--interval", type=float, default=15.0)
    ap.add_argument("--seconds", type=float, default=30.0)
    args = ap.parse_args()
    print(f"== bench/scale.py: agent hosts x {args.series} series every {args.interval:g} s, {args.seconds:g} s each, "
          f"{os.cpu_count()} cores")
    for kind in (("sqlite", "postgresql") if args.db == "both" else (args.db,)):
        for n in (int(x) for x in args.hosts.split(",")):
            run(kind, n, args)


if __name__ == "__main__":
    # `timeout 300 python bench/...` sends SIGTERM: as an exception, so the `finally` blocks stop
    # the servers and agents this bench started (they run in sessions of their own and would
    # otherwise be left running, as two once were for an hour).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    main()
