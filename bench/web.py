"""(3) overview page under wrk, (4) /metrics beside node_exporter, (5) idle RSS of serve.

Starts its own servers on free loopback ports and stops them:
  - `rackpulse demo` (serve with collectors, SQLite, the demo host) for (3) and (5);
  - bench/metrics_server.py with 5,000 series, and Debian's prometheus-node-exporter, for (4).
Needs Debian's `wrk` and `prometheus-node-exporter` (bench/run-all.sh installs them).

usage: python bench/web.py [--duration 10]
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(port: int, path: str = "/healthz", timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", path)
            if c.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"server on port {port} did not answer {path}")


def start(argv: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def stop(p: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(p.pid, signal.SIGTERM)
        p.wait(10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(p.pid, signal.SIGKILL)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def wrk(url: str, duration: int, conns: int = 16) -> tuple[float, str, str]:
    out = subprocess.run(["wrk", "-t2", f"-c{conns}", f"-d{duration}s", "--latency", url],
                         capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p50 = re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1)  # type: ignore[union-attr]
    p99 = re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1)  # type: ignore[union-attr]
    return rps, p50, p99


def paced(port: int, path: str, rate: float, seconds: float, headers: dict[str, str] | None = None) -> list[float]:
    """Latencies (ms) of requests sent at a steady rate on one keep-alive connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    lat = []
    t0 = time.perf_counter()
    i = 0
    while (now := time.perf_counter()) - t0 < seconds:
        due = t0 + i / rate
        if now < due:
            time.sleep(due - now)
        s = time.perf_counter()
        conn.request("GET", path, headers=headers or {})
        r = conn.getresponse()
        r.read()
        lat.append((time.perf_counter() - s) * 1000)
        i += 1
    return lat


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * len(xs) + 0.5)) - 1)]


def first_load_kb(port: int) -> float:
    """Compressed bytes of the overview page plus everything it loads."""
    total = 0
    paths = ["/"]
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", "/", headers={"Accept-Encoding": "gzip"})
    html = c.getresponse().read()
    import gzip as gz
    page = html.decode() if not html.startswith(b"\x1f\x8b") else gz.decompress(html).decode()
    paths += re.findall(r'(?:src|href)="(/static/[^"]+)"', page)
    for p in paths:
        c.request("GET", p)
        body = c.getresponse().read()
        total += len(gz.compress(body, 6))
    return total / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=int, default=10)
    args = ap.parse_args()
    for tool in ("wrk", "prometheus-node-exporter"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} is missing: apt-get install wrk prometheus-node-exporter")
    py = sys.executable
    demo_port, metrics_port, ne_port = free_port(), free_port(), free_port()
    demo = start([py, "-m", "app.cli", "demo", "--port", str(demo_port), "--dir", tempfile.mkdtemp()])
    try:
        wait_http(demo_port)
        time.sleep(12)  # a few collections, then idle
        idle = rss_mb(demo.pid)
        rps, p50, p99 = wrk(f"http://127.0.0.1:{demo_port}/", args.duration)
        lat = paced(demo_port, "/", 20, args.duration * 2)
        frag = paced(demo_port, "/", 20, args.duration, {"HX-Request": "true"})
        after = rss_mb(demo.pid)
        print(f"(3) overview wrk -t2 -c16 {args.duration}s: {rps:.0f} req/s, p50 {p50}, p99 {p99}")
        print(f"(3) overview at a steady 20 req/s: p50 {statistics.median(lat):.1f} ms, p99 {pct(lat, 0.99):.1f} ms "
              f"(n={len(lat)}); htmx fragment p99 {pct(frag, 0.99):.1f} ms")
        print(f"    first page load, gzip: {first_load_kb(demo_port):.1f} KB (HTML, CSS, JS)")
        print(f"(5) idle RSS of `rackpulse demo` (serve + collectors + demo driver): {idle:.1f} MB; after load "
              f"{after:.1f} MB")
        for path in ("/disks", "/network", "/power", "/heatpump", "/alerts", "/collectors", "/events",
                     "/disks/ZA1049HK"):
            rps, _, p99w = wrk(f"http://127.0.0.1:{demo_port}{path}", max(3, args.duration // 2))
            lat = paced(demo_port, path, 20, 5)
            print(f"    page {path:18s} wrk {rps:7.0f} req/s (p99 {p99w}); steady 20 req/s p99 {pct(lat, 0.99):.1f} ms")
    finally:
        stop(demo)
    ms = start([py, "bench/metrics_server.py", str(metrics_port), "5000"])
    ne = start(["prometheus-node-exporter", f"--web.listen-address=127.0.0.1:{ne_port}"])
    try:
        wait_http(metrics_port, "/metrics")
        wait_http(ne_port, "/metrics")
        for name, port in (("rackpulse 5,000 series", metrics_port), ("node_exporter", ne_port)):
            paced(port, "/metrics", 50, 1)  # warm up
            lat = paced(port, "/metrics", 1000, 5)  # back to back, one connection
            c = http.client.HTTPConnection("127.0.0.1", port)
            c.request("GET", "/metrics")
            body = c.getresponse().read()
            series = sum(1 for ln in body.decode().splitlines() if ln and not ln.startswith("#"))
            print(f"(4) /metrics {name:24s} series={series:5d} bytes={len(body):7d} p50 {statistics.median(lat):6.2f} ms "
                  f"p99 {pct(lat, 0.99):6.2f} ms (n={len(lat)})")
    finally:
        stop(ms)
        stop(ne)


if __name__ == "__main__":
    main()
