"""CPU per request of every page: the server's own CPU time (utime + stime from /proc) spent on
N sequential requests of one path, divided by N, beside its latency.

Starts `rackpulse demo` with a one-hour collection interval, so after the first round (and the
demo's seeding) the collectors are idle and what the server spends is the requests' cost. The
demo's agent host is stopped for the same reason (its pushes would be counted). The idle CPU of
the process over the same span is measured first and subtracted.

With --previous PATH (a checkout of an earlier release, its own .venv or this one), a demo of
each runs at once and the requests go to them in interleaved rounds (the machine's load moves
both alike), each page's CPU printed beside the other's with their ratio.

usage: python bench/page_cpu.py [--requests 300] [--rounds 5] [--previous ../rackpulse-45fdfbf]
       [--paths / /disks ...]
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
         "/api/v1/alerts", "/api/v1/findings", "/energy", "/energy?range=12mo",
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


class Demo:
    """A `rackpulse demo` of one checkout, collecting once an hour, its agent stopped."""

    def __init__(self, root: Path, interval: int = 3600) -> None:
        self.root, self.port = root, free_port()
        venv = root / ".venv" / "bin" / "python"
        python = str(venv) if venv.exists() else sys.executable
        self.proc = subprocess.Popen([python, "-m", "app.cli", "demo", "--port", str(self.port), "--interval", str(interval),
                                      "--dir", tempfile.mkdtemp()], cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.pid = self.proc.pid

    def ready(self, stop_agent: bool = True) -> None:
        wait_http(self.port)
        time.sleep(5)  # the agent's first pushes
        # the demo's agent: its pushes are not page requests (a soak keeps it: a person's demo has it)
        for child in children(self.pid) if stop_agent else []:
            cmd = Path(f"/proc/{child}/cmdline").read_bytes()
            if b" agent" in cmd.replace(b"\0", b" "):
                os.kill(child, signal.SIGSTOP)

    def idle_rate(self) -> float:
        idle0 = cpu_seconds(self.pid)
        time.sleep(5)
        return (cpu_seconds(self.pid) - idle0) / 5

    def stop(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGCONT)
            os.killpg(self.pid, signal.SIGTERM)
            self.proc.wait(15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(self.pid, signal.SIGKILL)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds, with --previous")
    ap.add_argument("--previous", type=Path, help="a checkout of the release to compare with")
    ap.add_argument("--paths", nargs="*", default=PATHS)
    args = ap.parse_args()
    demos = [Demo(ROOT)] + ([Demo(args.previous.resolve())] if args.previous else [])
    try:
        for d in demos:
            d.ready()
        time.sleep(2)
        idle = [d.idle_rate() for d in demos]
        print("idle CPU of the server: " + ", ".join(f"{i * 100:.2f} %" for i in idle) + " of a core (subtracted below)")
        rounds = args.rounds if args.previous else 1
        n = max(1, args.requests // rounds)
        per: dict[tuple[int, str], float] = {}
        facts: dict[tuple[int, str], tuple[int, int, float]] = {}
        for _ in range(rounds):
            for path in args.paths:
                for i, d in enumerate(demos):
                    used, wall, size, status, p50 = measure(d.port, d.pid, path, n,
                                                            {"Accept-Encoding": "gzip"} if path == "/metrics" else {})
                    per[i, path] = per.get((i, path), 0.0) + max(0.0, used - idle[i] * wall) / (n * rounds) * 1000
                    facts[i, path] = (size, status, p50)
        print(f"{'path':22s} {'CPU ms/req':>10s} {'p50 ms':>8s} {'bytes':>8s} status"
              + (f" {'previous ms':>11s} {'ratio':>6s} {'status':>6s}" if args.previous else ""))
        for path in args.paths:
            size, status, p50 = facts[0, path]
            line = f"{path:22s} {per[0, path]:10.2f} {p50:8.2f} {size:8d} {status}"
            if args.previous:
                _s, pstatus, _p = facts[1, path]
                ratio = per[0, path] / per[1, path] if per[1, path] > 0 else float("nan")
                line += f"    {per[1, path]:11.2f} {ratio:6.2f} {pstatus:6d}"
            print(line)
    finally:
        for d in demos:
            d.stop()


if __name__ == "__main__":
    # `timeout 300 python bench/...` sends SIGTERM: as an exception, so the `finally` blocks stop
    # the servers and agents this bench started (they run in sessions of their own and would
    # otherwise be left running, as two once were for an hour).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    main()
