"""Stopping always stops: `rackpulse serve` exits soon after SIGTERM while a collector's command
hangs and the CPU is busy, and the hung command does not outlive it. (A scheduler stop once
waited more than 15 minutes, and demo servers outlived SIGTERM for 20.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from app.demo.agent import to_toml
from tests.agent_hosts import get_json, rackpulse, wait_for
from tests.alerting.test_serve_episodes import FAILED
from tests.peers import free_port

HANG = "600.25"  # `sleep 600.25`: a command that hangs, told apart from any other sleep on the machine
# What stopping may take: uvicorn's graceful shutdown (1 s), the scheduler's grace for its loops
# (1 s, twice), the courier (1 s); the rest is margin for a loaded CI machine.
STOP_BOUND = 15.0


def sleepers() -> list[int]:
    out = subprocess.run(["pgrep", "-f", f"sleep {HANG}"], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def test_serve_exits_soon_after_sigterm_while_a_command_hangs_and_the_cpu_is_busy(tmp_path: Path) -> None:
    (tmp_path / "root" / "proc").mkdir(parents=True)
    (tmp_path / "root" / "proc" / "mdstat").write_text(FAILED)
    port = free_port()
    off = {"enabled": False}
    cfg = {"host": "nas", "host_root": str(tmp_path / "root"), "web": {"port": port},
           "storage": {"url": f"sqlite:///{tmp_path / 'r.db'}"}, "alerts": {"interval": 1},
           "collectors": {**{n: off for n in ("smart", "bonding", "openvpn", "snmp", "nut", "hwmon", "heatpump",
                                              "zfs", "megaraid", "ceph", "btrfs", "probes", "throughput")},
                          "mdraid": {"interval": 0.5, "detail": False},
                          "frr": {"enabled": True, "vtysh": ["sh", "-c", f"exec sleep {HANG}", "--"], "interval": 1, "timeout": 300,
                                  "command_timeout": 300}}}
    (tmp_path / "rackpulse.toml").write_text(to_toml(cfg))
    burners = [subprocess.Popen([sys.executable, "-c", "import time\nt = time.time() + 120\nwhile time.time() < t: pass"])
               for _ in range(os.cpu_count() or 2)]
    proc = rackpulse("serve", "--config", str(tmp_path / "rackpulse.toml"), log=tmp_path / "serve.log")
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for(lambda: sleepers() and any(c["name"] == "mdraid" and c["runs"] >= 2
                                            for c in get_json(f"{base}/api/state")["collectors"]),
                 120, "frr's command to hang while mdraid collects")
        t0 = time.monotonic()
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(STOP_BOUND)
        took = time.monotonic() - t0
        print(f"serve exited {took:.2f} s after SIGTERM")  # the figure the closing note reports
        assert proc.returncode is not None
        wait_for(lambda: not sleepers(), 5, "the hung command to be killed with serve")
    finally:
        for b in burners:
            b.kill()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in sleepers():
            os.kill(pid, signal.SIGKILL)


def test_a_stop_that_hangs_anyway_is_ended_by_the_watchdog_after_its_clean_ups(tmp_path: Path) -> None:
    """Whatever a stop waits for, the process ends: here the scheduler's stop never returns."""
    port = free_port()
    marker = tmp_path / "cleaned"
    script = f"""
import asyncio, sys
from pathlib import Path
import app.cli as cli
from app.config import load_config
from app.scheduler import Scheduler

async def forever(self, grace=1.0):
    await asyncio.sleep(3600)

Scheduler.stop = forever
cli.serve.STOP_WATCHDOG = 1.0
cli.at_forced_exit.append(lambda: Path({str(marker)!r}).write_text("yes"))
cfg = load_config(None, {{"host": "nas", "web": {{"port": {port}}}, "storage": {{"url": "sqlite:///{tmp_path}/r.db"}},
                          "collectors": {{"host": {{"interval": 1}}}}}})
sys.exit(cli.serve_config(cfg))
"""
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=Path(__file__).resolve().parents[1],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(lambda: get_json(f"http://127.0.0.1:{port}/api/state")["collectors"], 60, "serve to start")
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=STOP_BOUND)
        print(f"forced exit {time.monotonic() - t0:.2f} s after SIGTERM")
        assert proc.returncode == 1 and "stopping took longer than 1s; exiting now" in out, out
        assert marker.read_text() == "yes"
    finally:
        if proc.poll() is None:
            proc.kill()
