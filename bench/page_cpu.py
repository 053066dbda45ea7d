"""CPU per request of every page: the server's own CPU time (utime + stime from /proc) spent on
N sequential requests of one path, divided by N, beside its latency.

Starts `rackpulse demo` with a one-hour collection interval, so after the first round (and the
demo's seeding) the collectors are idle and what the server spends is the requests' cost. The
demo's agent host is stopped for the same reason (its pushes would be counted). The idle CPU of
the process over the same span is measured first and subtracted.

usage: python bench/page_cpu.py [--requests 300] [--paths / /disks ...]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")
PATHS = ["/healthz", "/metrics", "/", "/host", "/disks", "/disks/all", "/disks/ZA1049HK", "/network", "/probes",
         "/power", "/heatpump", "/alerts", "/events", "/status", "/hosts", "/collectors", "/api/state",
         "/api/v1/alerts", "/api/v1/findings",
         # a disk's temperature over a month (5-minute rollups) and over a day, as a chart asks
         "/api/series?metric=rackpulse_disk_temperature_celsius&label=serial%3DZA1049HK&range=30d",
         "/api/series?metric=rackpulse_disk_temperature_celsius&label=serial%3DZA1049HK&range=30d&points=780",
         "/api/series?metric=rackpulse_disk_temperature_celsius&label=serial%3DZA1049HK&range=24h"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def wait_http(port: int, timeout: float = 600) -> None:
    """Until the demo answers and its history is seeded (it serves first and seeds in the
    background: measured before, the pages' cost was the seeding's)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/healthz")
            r = c.getresponse()
            if r.status == 200 and "notice" not in json.loads(r.read()):
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit("the demo did not answer, or did not finish seeding its history")


def measure(port: int, pid: int, path: str, n: int,
            headers: dict[str, str]) -> tuple[float, float, int, int, float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    size = status = 0
    for _ in range(10):  # warm: caches, the first query plan
        conn.request("GET", path, headers=headers)
        r = conn.getresponse()
        size, status = len(r.read()), r.status
    lat = []
    before = cpu_seconds(pid)
    t0 = time.perf_counter()
    for _ in range(n):
        s = time.perf_counter()
        conn.request("GET", path, headers=headers)
        conn.getresponse().read()
        lat.append((time.perf_counter() - s) * 1000)
    wall = time.perf_counter() - t0
    used = cpu_seconds(pid) - before
    return used, wall, size, status, statistics.median(lat)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--paths", nargs="*", default=PATHS)
    args = ap.parse_args()
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "demo", "--port", str(port), "--interval", "3600",
                             "--dir", tempfile.mkdtemp()], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_http(port)
        time.sleep(5)  # the agent's first pushes
        for child in children(proc.pid):  # the demo's agent: its pushes are not page requests
            cmd = Path(f"/proc/{child}/cmdline").read_bytes()
            if b" agent" in cmd.replace(b"\0", b" "):
                os.kill(child, signal.SIGSTOP)
        time.sleep(2)
        idle0 = cpu_seconds(proc.pid)
        time.sleep(5)
        idle_rate = (cpu_seconds(proc.pid) - idle0) / 5
        print(f"idle CPU of the server: {idle_rate * 100:.2f} % of a core (subtracted below)")
        print(f"{'path':22s} {'CPU ms/req':>10s} {'p50 ms':>8s} {'bytes':>8s} status")
        for path in args.paths:
            used, wall, size, status, p50 = measure(port, proc.pid, path, args.requests,
                                                    {"Accept-Encoding": "gzip"} if path == "/metrics" else {})
            per = max(0.0, used - idle_rate * wall) / args.requests * 1000
            print(f"{path:22s} {per:10.2f} {p50:8.2f} {size:8d} {status}")
    finally:
        try:
            os.killpg(proc.pid, signal.SIGCONT)
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)


if __name__ == "__main__":
    # `timeout 300 python bench/...` sends SIGTERM: as an exception, so the `finally` blocks stop
    # the servers and agents this bench started (they run in sessions of their own and would
    # otherwise be left running, as two once were for an hour).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    main()
