"""The demo server's peak memory: `rackpulse demo` started, its seeded history awaited (/healthz
without its notice), then VmHWM (the peak resident set) and VmRSS read from /proc/PID/status,
and again after ``--settle`` seconds of the story. Issue 68's goal: peak at most 250 MB.

usage: python bench/demo_rss.py [--settle 30]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.demo_cpu import seeded  # noqa: E402
from tests.agent_hosts import free_port, stop  # noqa: E402


def memory(pid: int) -> dict[str, float]:
    """VmHWM and VmRSS in MB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS"):
            out[key] = int(value.split()[0]) / 1024
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--settle", type=float, default=30.0)
    args = ap.parse_args()
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "demo", "--port", str(port)], cwd=ROOT,  # noqa: S603
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        t0 = time.monotonic()
        while not seeded(f"http://127.0.0.1:{port}"):
            if proc.poll() is not None or time.monotonic() - t0 > 300:
                raise SystemExit("the demo did not come up with its history within 300 s")
            time.sleep(0.5)
        at_seed = memory(proc.pid)
        print(f"demo  seeded after {time.monotonic() - t0:.1f} s  peak(VmHWM)= {at_seed['VmHWM']:.0f} MB  "
              f"now(VmRSS)= {at_seed['VmRSS']:.0f} MB")
        time.sleep(args.settle)
        later = memory(proc.pid)
        print(f"demo  {args.settle:.0f} s later  peak(VmHWM)= {later['VmHWM']:.0f} MB  now(VmRSS)= {later['VmRSS']:.0f} MB")
    finally:
        stop(proc)


if __name__ == "__main__":
    main()
