"""`rackpulse demo`: a populated dashboard with no hardware. A subcommand the app finds
through the entry point group rackpulse.commands, so the demo uses the app like any caller."""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from app.cli import Command, at_forced_exit, serve_config
from app.config import load_config

# The demo's parts (a Modbus server, a database, a fake engine) are imported when the demo runs,
# not when the command line is read: every `rackpulse` command loads this file to list `demo`,
# the agent on a Raspberry Pi included.


def add_arguments(d: argparse.ArgumentParser) -> None:
    d.add_argument("--port", type=int, default=9842, help="web port on 127.0.0.1 (default 9842)")
    d.add_argument("--speed", type=float, default=1.0, help="story speed (2 = twice as fast)")
    d.add_argument("--interval", type=float, default=5.0, help="collection interval in seconds")
    d.add_argument("--dir", help="where to build the fixture host and its database (default: a new temporary "
                                 "folder, removed when the demo stops)")


def run(args: argparse.Namespace) -> int:
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="rackpulse-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    if not args.dir:  # also when a stop hangs and the watchdog ends the process (app/cli.py)
        at_forced_exit.append(lambda: shutil.rmtree(root, ignore_errors=True))
    try:
        return _run(args, root)
    finally:
        if not args.dir:  # ours: gone with the demo, after Ctrl-C or a kill too
            shutil.rmtree(root, ignore_errors=True)


def free_port(wanted: int, tries: int = 50) -> int:
    """`wanted`, or the next port after it nothing listens on (127.0.0.1), so that a second demo,
    or a rackpulse already serving there, does not end this one with "address already in use"."""
    for port in range(wanted, min(wanted + tries, 65536)):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise SystemExit(f"rackpulse demo: ports {wanted}-{wanted + tries - 1} are all taken; pass --port (or PORT=)")


def _run(args: argparse.Namespace, root: Path) -> int:
    from app.storage.db import make_engine, upgrade
    from app.storage.store import Store
    from collectors.host.containers.demo import start_engine
    from demo import story as demo
    from demo.agent import AGENT_HOST, start_demo_agent
    from demo.heatpump import start_isg
    from demo.history import first_round, seed_everything
    from demo.power import start_upsd

    port = free_port(args.port)
    if port != args.port:
        print(f"rackpulse demo: port {args.port} is taken, using {port} (choose one with --port, or PORT= for make demo)",
              flush=True)
        args.port = port

    db_url = f"sqlite:///{root / 'rackpulse-demo.db'}"
    driver = demo.Driver(root, speed=args.speed)
    driver.tick()

    story_clock = lambda: (time.time() - driver.t0) * args.speed  # noqa: E731
    upsd = start_upsd(story_clock)
    isg = start_isg(story_clock)
    fake_docker = start_engine(root)  # the containers' fake Docker engine, on a socket in root
    cfg = load_config(None, demo.demo_config(root, db_url, args.port, args.interval, upsd.port, isg.port))
    upgrade(db_url)
    engine = make_engine(db_url)
    store = Store(engine, cfg.host)
    # One collection first: every series it stores gets a past (two days of 5-minute rollups, a
    # month of hourly ones), so every chart the demo shows opens on a full day.
    started = int(first_round(cfg, root, store, speed=args.speed))
    demo.seed_history(store, now=started)
    n = seed_everything(store, now=started)
    engine.dispose()
    driver.start()

    agent = start_demo_agent(root, db_url, args.port, args.interval)
    at_forced_exit.insert(0, agent.kill)
    # The agent host lives a calm life (its story stands at its first, healthy moment), but its
    # files are rewritten as a live host's are: a status file written once went stale, and after
    # an hour `collector openvpn down: status file is 2874s old` fired on a host said to be fine.
    calm = demo.Driver(root / AGENT_HOST, speed=0.0)
    calm.start()
    print(f"rackpulse demo: http://127.0.0.1:{args.port}/  (fixture host in {root}, {n} series with history; "
          f"a second host, {AGENT_HOST}, pushes through a real agent: /hosts)")

    def simulated_switch(app) -> None:
        if app.state.scheduler is not None:
            demo.attach_simulations(app.state.scheduler.collectors, root)

    print("The RAID6 md0 degrades (bay 7 fails) and rebuilds every "
          f"{demo.CYCLE / args.speed:.0f}s. Ctrl-C stops it.", flush=True)
    try:
        return serve_config(cfg, simulated_switch)
    finally:
        # Everything that writes into root stops before root is removed.
        agent.terminate()
        try:
            agent.wait(10)
        except subprocess.TimeoutExpired:
            agent.kill()
        for d in (driver, calm):
            d.stop_event.set()
            d.join(5)
        upsd.stop()
        isg.stop()
        fake_docker.stop()


COMMAND = Command("demo", "a populated dashboard with no hardware", add_arguments, run)
