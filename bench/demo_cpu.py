"""What a running `rackpulse demo` costs: CPU seconds per minute, split into the server, the tool
stand-ins it starts (its reaped children), its agent and the agent's stand-ins. The browser
tests start a demo per module (tests/e2e/conftest.py), so this is what each one adds to the
machine beside the rest of the suite.

Measured from /proc/PID/stat over ``--seconds`` once the demo has seeded its history (seeding is a
one-off, printed apart). The figures are for the arguments given, by default the browser tests'.

usage: python bench/demo_cpu.py [--speed 4] [--interval 2] [--seconds 60] [-- more demo args]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.agent_hosts import cpu_seconds, free_port, stop  # noqa: E402


def agent_pid(demo: int) -> int | None:
    """The demo's `rackpulse agent` child (the stand-ins come and go; the agent stays)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == demo and b"agent" in cmd:
            return int(entry.name)
    return None


def seeded(base: str) -> bool:
    try:
        with urllib.request.urlopen(base + "/healthz", timeout=2) as r:  # noqa: S310 - loopback
            return "notice" not in json.load(r)
    except OSError:
        return False


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--speed", default="4")
    ap.add_argument("--interval", default="2")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("extra", nargs="*")
    args = ap.parse_args()
    port = free_port()
    argv = [sys.executable, "-m", "app.cli", "demo", "--port", str(port), "--speed", args.speed,
            "--interval", args.interval, *args.extra]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RACKPULSE_PASSWORD": "bench"}
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,  # noqa: S603 - our own argv
                            stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        t0 = time.monotonic()
        while not seeded(base):
            if proc.poll() is not None:
                raise SystemExit(f"demo exited with {proc.returncode}")
            time.sleep(0.2)
        agent = agent_pid(proc.pid)
        own0, kids0 = cpu_seconds(proc.pid)
        a_own0, a_kids0 = cpu_seconds(agent) if agent else (0.0, 0.0)
        print(f"demo {' '.join(argv[3:])}: seeded after {time.monotonic() - t0:.1f} s wall, "
              f"{own0 + kids0:.1f} CPU-s so far (server {own0:.1f}, its children {kids0:.1f})")
        time.sleep(args.seconds)
        own1, kids1 = cpu_seconds(proc.pid)
        a_own1, a_kids1 = cpu_seconds(agent) if agent else (0.0, 0.0)
        per = 60.0 / args.seconds
        parts = {"server": own1 - own0, "server's stand-ins": kids1 - kids0,
                 "agent": a_own1 - a_own0, "agent's stand-ins": a_kids1 - a_kids0}
        total = sum(parts.values())
        for name, value in parts.items():
            print(f"  {name:20s} {value * per:6.1f} CPU-s per minute")
        print(f"  {'total':20s} {total * per:6.1f} CPU-s per minute = {total / args.seconds:.2f} cores")
    finally:
        stop(proc, grace=10.0)


if __name__ == "__main__":
    main()
