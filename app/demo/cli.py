"""`rackpulse demo`: a populated dashboard with no hardware. A subcommand the app finds
through the entry point group rackpulse.commands, so the demo uses the app like any caller."""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from app.cli import Command, at_forced_exit, serve_config
from app.cli.serve import as_the_process
from app.config import load_config

# The demo's parts (a Modbus server, a database, a fake engine) are imported when the demo runs,
# not when the command line is read: every `rackpulse` command loads this file to list `demo`,
# the agent on a Raspberry Pi included.


def add_arguments(d: argparse.ArgumentParser) -> None:
    d.set_defaults(quiet_log_level="WARNING")  # --log-level INFO shows every alert and slow ingest
    d.add_argument("--port", type=int, default=9842, help="web port on 127.0.0.1 (default 9842)")
    d.add_argument("--speed", type=float, default=1.0, help="story speed (2 = twice as fast)")
    d.add_argument("--interval", type=float, default=5.0, help="collection interval in seconds")
    d.add_argument("--calendar", type=_date, metavar="YYYY-MM-DD",
                   help="the heat pump's first day (default: today); a fixed day gives the same day book, months "
                        "and seasons on any day, for screenshots and comparisons")
    d.add_argument("--dir", help="where to build the fixture host and its database (default: a new temporary "
                                 "folder, removed when the demo stops)")


def _date(text: str) -> str:
    import datetime as dt

    try:
        return dt.date.fromisoformat(text).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None


def run(args: argparse.Namespace) -> int:
    # The demo is what this process is for: Ctrl-C is a stop from its first second on, and how a
    # demo ends: exit 0 (130 made `make demo` end with "Error 130").
    try:
        code = as_the_process(lambda: _in_folder(args))
    except KeyboardInterrupt:  # uvicorn raises the SIGINT again once it has stopped
        code = 0
    return 0 if code == 130 else code


def _in_folder(args: argparse.Namespace) -> int:
    from app.demo.heatpump import pin_calendar

    pin_calendar(getattr(args, "calendar", None))
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
    from app.demo import pve_api
    from app.demo import story as demo
    from app.demo.agent import AGENT_HOST, start_demo_agent
    from app.demo.heatpump import start_isg
    from app.demo.power import start_upsd
    from app.storage.db import upgrade
    from collectors.host.containers.demo import start_engine

    t0 = time.monotonic()
    args.port = _port(args.port)

    db_url = f"sqlite:///{root / 'rackpulse-demo.db'}"
    driver = demo.Driver(root, speed=args.speed)
    driver.tick()

    story_clock = lambda: (time.time() - driver.t0) * args.speed  # noqa: E731
    upsd = start_upsd(story_clock)
    isg = start_isg(story_clock)
    fake_docker = start_engine(root)  # the containers' fake Docker engine, on a socket in root
    pve, pbs = pve_api.start_demo(root)  # Proxmox VE and its Backup Server, over HTTPS
    cfg = load_config(None, demo.demo_config(root, db_url, args.port, args.interval, upsd.port, isg.port,
                                             pve.port, pbs.port, speed=args.speed))
    upgrade(db_url)
    driver.start()
    print(f"rackpulse demo: starting (fixture host in {root}, a second host, {AGENT_HOST}, pushes through a real "
          "agent: /hosts)", flush=True)

    agent = start_demo_agent(root, db_url, args.port, args.interval)
    at_forced_exit.insert(0, agent.kill)
    # The agent host lives a calm life (its story stands at its first, healthy moment), but its
    # files are rewritten as a live host's are: a status file written once went stale, and after
    # an hour `collector openvpn down: status file is 2874s old` fired on a host said to be fine.
    calm = demo.Driver(root / AGENT_HOST, speed=0.0)
    calm.start()
    seeding = threading.Event()  # set: the history's writer stops between series
    seeders: list[threading.Thread] = []

    def setup(app: Any) -> None:
        if app.state.scheduler is not None:
            demo.attach_simulations(app.state.scheduler.collectors, root)
        app.state.runtime.notice = ("History loading: the charts' past (two days, a month) is being written; "
                                    "live values are here already.")
        seeder = threading.Thread(target=_seed, args=(app.state.runtime, cfg, root, db_url, args.speed, t0, seeding),
                                  name="demo-history", daemon=True)
        seeders.append(seeder)
        seeder.start()
        threading.Thread(target=announce, args=(f"http://127.0.0.1:{args.port}/", t0, args.speed),
                         name="demo-announce", daemon=True).start()

    try:
        return serve_config(cfg, setup)
    finally:
        # Everything that writes into root stops before root is removed: a history still being
        # written made its database's journal again after the folder was removed (CI, stop 69).
        seeding.set()
        _stop(agent, (driver, calm), (upsd, isg, fake_docker, pve, pbs), seeders)


def _stop(agent: Any, drivers: tuple[Any, ...], peers: tuple[Any, ...], seeders: list[threading.Thread]) -> None:
    from collectors.base import refuse_commands_from_now

    # The collectors' runs still in flight stop before their peers do: an ISG stopped under a
    # poll logged "not reachable" after Ctrl-C, and a refused command an ERROR.
    refuse_commands_from_now()
    agent.terminate()
    try:
        agent.wait(10)
    except subprocess.TimeoutExpired:
        agent.kill()
    for d in drivers:
        d.stop_event.set()
        d.join(5)
    for peer in peers:
        peer.stop()
    for seeder in seeders:
        seeder.join(30)  # one batch at most


def _port(wanted: int) -> int:
    port = free_port(wanted)
    if port != wanted:
        print(f"rackpulse demo: port {wanted} is taken, using {port} (choose one with --port, or PORT= for make demo)",
              flush=True)
    return port


def _seed(runtime: Any, cfg: Any, root: Path, db_url: str, speed: float, t0: float,
          stop: threading.Event) -> None:
    """Every series' past (two days of 5-minute rollups, a month of hourly ones), in the
    background while the demo serves: the pages say so until it is there."""
    from app.demo.history import first_round, seed_everything, seed_history
    from app.storage.db import make_engine
    from app.storage.store import Store

    engine = make_engine(db_url)
    try:
        store = Store(engine, cfg.host)
        first = first_round(cfg, root, store, speed=speed, advance=False)
        started = int(first.started)
        seed_history(store, now=started, stop=stop)
        n = seed_everything(store, now=started, stop=stop, rate_of=first.rates)
        if stop.is_set():
            return
    except Exception as exc:  # noqa: BLE001 - the live demo goes on without its past
        runtime.notice = None
        print(f"rackpulse demo: history not seeded ({type(exc).__name__}: {exc}); live data only", flush=True)
    else:
        runtime.notice = None  # before it is said: whoever reads the line finds the pages without it
        print(f"rackpulse demo: history ready, {n} series ({time.monotonic() - t0:.0f} s after start)", flush=True)
    finally:
        engine.dispose()


def announce(url: str, t0: float, speed: float, every: float = 0.1) -> None:
    """The URL, printed once it answers (printed before, it was refused for minutes on a busy
    machine while the server still started)."""
    import urllib.request

    from app.demo import story as demo

    while True:
        try:
            with urllib.request.urlopen(url + "healthz", timeout=5) as r:  # noqa: S310 - loopback
                if r.status == 200:
                    break
        except OSError:
            time.sleep(every)
    print(f"rackpulse demo: {url}  (answering {time.monotonic() - t0:.1f} s after start)", flush=True)
    print("The RAID6 md0 degrades (bay 7 fails) and rebuilds every "
          f"{demo.CYCLE / speed:.0f}s. Ctrl-C stops it.", flush=True)


COMMAND = Command("demo", "a populated dashboard with no hardware", add_arguments, run)
