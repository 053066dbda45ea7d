"""Real `rackpulse serve` and `rackpulse agent` processes on loopback, for the agent tests and
bench/agents.py. Agents watch a demo fixture host (md arrays, disks through stand-in
smartctl/mdadm, bonding, OpenVPN status, hwmon), so what they push is what a NAS would."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from app.demo.agent import agent_config, to_toml  # noqa: F401 - re-exported for the tests
from collectors import plugins
from tests.peers import free_port  # noqa: F401 - re-exported for the tests

ROOT = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")
# How long a `rackpulse demo` may take to serve with its history seeded: start-up, then two days of
# 5-minute rollups and a month of hourly ones (test_demo_starts.py). One figure for every test that
# starts a demo: a guess of 90 s failed on a machine at load 10.
DEMO_READY = 300.0


def cpu_seconds(pid: int) -> tuple[float, float]:
    """(own utime+stime, reaped children's cutime+cstime) of a process, in seconds: what the
    benchmarks read from /proc/PID/stat (a process's tool stand-ins are its reaped children)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return (utime + stime) / TICK, (cutime + cstime) / TICK


def server_config(path: Path, db_url: str, port: int, test_speed: bool = True, **agents: Any) -> Path:
    """A server with no collectors of its own. ``test_speed``: alerts every second and maintenance
    every 5 s (tests wait for them); off, the defaults a real server runs with (the bench)."""
    off = {"enabled": False}
    cfg = {"host": "server", "web": {"port": port, "refresh_seconds": 2},
           "storage": {"url": db_url, **({"maintenance_interval": 5} if test_speed else {})},
           "collectors": {n: off for n in plugins()},
           "alerts": {"interval": 1} if test_speed else {}, "agents": {"silent_after": 5, **agents}}
    path.write_text(to_toml(cfg))
    return path


def rackpulse(*args: str, log: Path | None = None) -> subprocess.Popen[bytes]:
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115 - the child owns it
    return subprocess.Popen([sys.executable, "-m", "app.cli", *args], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=out, stderr=subprocess.STDOUT,
                            start_new_session=True)


def issue_token(config: Path, host: str) -> str:
    out = subprocess.run([sys.executable, "-m", "app.cli", "agents", "issue", host, "--config", str(config)],
                         cwd=ROOT, capture_output=True, text=True, check=True, env={**os.environ,
                                                                                   "PYTHONPATH": str(ROOT)})
    return out.stdout.strip().splitlines()[-1]


def stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM, grace: float = 15.0) -> None:
    """`sig` to the process group started with start_new_session; what outlives it by `grace`
    seconds (a loaded CI machine once kept browser-test demos for 20 minutes) is killed, and
    so are its children whatever the leader did: no test leaves a process behind."""
    try:
        if proc.poll() is None:
            os.killpg(proc.pid, sig)
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(grace)
    except ProcessLookupError:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def get_json(url: str, timeout: float = 2.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 - loopback
        return json.loads(r.read())


def wait_for(check, timeout: float = 60.0, what: str = "condition") -> Any:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last:
                return last
        except OSError as exc:
            last = exc
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}; last: {last!r}")


def wait_while_moving(check, moving, stall: float, what: str, ceiling: float = 900.0) -> Any:  # type: ignore[no-untyped-def]
    """Wait for ``check`` as long as ``moving()`` keeps changing (an outbox's oldest record, a
    count of stored runs): a loaded machine drains a backlog slowly, but it drains. What stands
    still for ``stall`` seconds is stuck, and fails; ``ceiling`` bounds a wait that moves forever."""
    start = time.monotonic()
    last: Any = None
    seen, still_since = None, start
    while time.monotonic() - start < ceiling:
        try:
            last = check()
            if last:
                return last
            now = moving()
        except OSError as exc:
            last, now = exc, seen
        if now != seen:
            seen, still_since = now, time.monotonic()
        elif time.monotonic() - still_since > stall:
            raise AssertionError(f"{what}: nothing moved for {stall:.0f}s (still at {seen!r}); last: {last!r}")
        time.sleep(0.2)
    raise AssertionError(f"{what}: still moving after {ceiling:.0f}s (at {seen!r}); last: {last!r}")


def rss_mb(pid: int) -> float:
    """Resident memory of a process, in MiB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise ValueError(f"no VmRSS for process {pid}")
