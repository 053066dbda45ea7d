"""(10) What one real agent costs its host: `rackpulse agent` on the demo NAS fixture (3 md
arrays, 18 disks through a smartctl stand-in, a bond, an OpenVPN instance, hwmon rails and
fans), pushing to a real `rackpulse serve` (SQLite) over loopback, with its own /metrics on.

Three phases, each ``--seconds`` long:

  steady    the server takes every batch: the agent's CPU (its own, and its reaped children's:
            the smartctl/mdadm stand-ins) and RSS (VmRSS, VmHWM)
  spooling  the server is stopped: how fast the outbox grows (bytes per run, MB per day)
  drain     the server is back: how long the backlog takes to arrive

The stand-ins are Python scripts (~40 ms of CPU each); real smartctl and mdadm are C
programs that cost a fraction of that, so "children" overstates a real host.

The agent loads only the plug-ins its config enables (12 here); with no --interval every
collector runs at its own default interval (smartctl every 300 s, hwmon and bonding every 10 s:
what an installed agent does); --interval N runs every one every N seconds (a harder load).

usage: python bench/agent_footprint.py [--interval 15] [--seconds 120]
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.agent_hosts import (  # noqa: E402
    agent_config,
    cpu_seconds,
    free_port,
    get_json,
    issue_token,
    rackpulse,
    server_config,
    stop,
    to_toml,
    wait_for,
)


def memory_kb(pid: int) -> dict[str, int]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0])
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--interval", type=float, default=None,
                    help="every collector's interval, seconds (default: each one's own default)")
    ap.add_argument("--seconds", type=float, default=120.0, help="length of each phase")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="rackpulse-footprint-"))
    port, agent_port = free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    scfg = server_config(tmp / "server.toml", f"sqlite:///{tmp / 'server.db'}", port, test_speed=False)
    (tmp / "token").write_text(issue_token(scfg, "nas1"))
    path = agent_config(tmp / "nas1", "nas1", interval=args.interval or 15.0, listen_port=agent_port)
    cfg = tomllib.loads(path.read_text())
    if args.interval is None:  # the defaults the plug-ins ship with
        for section in cfg["collectors"].values():
            section.pop("interval", None)
    wait = args.interval or 30.0  # a round of the collectors that run most often, and then some
    cfg["agent"].update(send_interval=5.0, timeout=15.0)  # the defaults, not the tests' haste
    path.write_text(to_toml(cfg))
    log = tmp / "processes.log"
    server = rackpulse("serve", "--config", str(scfg), log=log)
    agent = None
    try:
        wait_for(lambda: get_json(base + "/healthz"), what="server up")
        agent = rackpulse("agent", "--config", str(path), "--server", base, "--token-file", str(tmp / "token"),
                          log=log)
        health = f"http://127.0.0.1:{agent_port}/healthz"
        wait_for(lambda: get_json(health), what="agent up")
        # Start measuring after the first round, once imports and first runs are behind us.
        wait_for(lambda: [h for h in get_json(base + "/api/hosts") if h["host"] == "nas1" and h["samples"]],
                 timeout=wait * 3, what="first batch")
        time.sleep(wait)

        print(f"== agent footprint: demo NAS host, collectors every {f'{args.interval:g}s' if args.interval else 'default interval'}, "
              f"phases of {args.seconds:g}s, {os.cpu_count()} cores")
        own0, kids0 = cpu_seconds(agent.pid)
        t0 = time.monotonic()
        samples0 = next(h["samples"] for h in get_json(base + "/api/hosts") if h["host"] == "nas1")
        time.sleep(args.seconds)
        own1, kids1 = cpu_seconds(agent.pid)
        wall = time.monotonic() - t0
        mem = memory_kb(agent.pid)
        samples1 = next(h["samples"] for h in get_json(base + "/api/hosts") if h["host"] == "nas1")
        print(f"steady:   agent CPU {100 * (own1 - own0) / wall:.2f} % of a core (children, the stand-ins: "
              f"{100 * (kids1 - kids0) / wall:.2f} %), RSS {mem['VmRSS'] / 1024:.1f} MB "
              f"(peak {mem['VmHWM'] / 1024:.1f} MB), {(samples1 - samples0) / wall:.1f} samples/s delivered")

        stop(server)
        wait_for(lambda: not get_json(health)["delivering"], timeout=wait * 3, what="agent spooling")
        b0 = get_json(health)["outbox"]
        t0 = time.monotonic()
        time.sleep(args.seconds)
        b1 = get_json(health)["outbox"]
        wall = time.monotonic() - t0
        runs = b1["records"] - b0["records"]
        per_run = (b1["bytes"] - b0["bytes"]) / max(runs, 1)
        per_day = (b1["bytes"] - b0["bytes"]) / wall * 86400 / 1e6
        print(f"spooling: {b1['records']} records waiting, {per_run / 1024:.1f} KB per collector run compressed, "
              f"{per_day:.1f} MB per day of outage at full resolution "
              f"(the default outbox_max_mb = 256 holds {256 * 1.048576 / max(per_day, 1e-9):.1f} days before "
              "folding into rollups)")

        t0 = time.monotonic()
        server = rackpulse("serve", "--config", str(scfg), log=log)
        wait_for(lambda: get_json(base + "/healthz"), what="server up again")
        t1 = time.monotonic()
        wait_for(lambda: get_json(health)["outbox"]["records"] == 0, timeout=120, what="drained")
        t2 = time.monotonic()
        print(f"drain:    server up {t1 - t0:.1f}s after start; {b1['records']} records delivered {t2 - t1:.1f}s "
              "later (mostly the agent's retry backoff, at most 60 s)")
    finally:
        if agent is not None:
            stop(agent)
        if server.poll() is None:
            stop(server)


if __name__ == "__main__":
    # `timeout 300 python bench/...` sends SIGTERM: as an exception, so the `finally` blocks stop
    # the servers and agents this bench started (they run in sessions of their own and would
    # otherwise be left running, as two once were for an hour).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    main()
