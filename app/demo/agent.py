"""The demo's second host: a real `rackpulse agent` process watching its own fixture tree and
pushing to the demo server, so /hosts and /h/<host>/ have something to show."""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from app.files import private_file

AGENT_HOST = "ceph-node1"


def to_toml(d: dict[str, Any], prefix: str = "") -> str:
    """Enough TOML for generated configs: scalars, lists of scalars, tables, arrays of tables."""
    lines, tables, arrays = [], [], []
    for k, v in d.items():
        if isinstance(v, dict):
            tables.append((k, v))
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            arrays.append((k, v))
        else:
            lines.append(f"{k} = {json.dumps(v)}")
    out = "\n".join(lines) + "\n"
    for k, v in tables:
        out += f"\n[{prefix}{k}]\n" + to_toml(v, f"{prefix}{k}.")
    for k, items in arrays:
        for item in items:
            out += f"\n[[{prefix}{k}]]\n" + to_toml(item, f"{prefix}{k}.")
    return out


# seconds an agent waits for the server's answer to a batch before it calls the server "too slow"
SEND_TIMEOUT = 5.0
# How often the demo's agent polls its calm host, in seconds, when the demo's --interval is shorter.
AGENT_INTERVAL = 10.0


def agent_config(root: Path, host: str, interval: float = 1.0, listen_port: int | None = None) -> Path:
    """A demo fixture host under ``root`` and an agent config that watches it (disks, md, bond, VPN, hwmon)."""
    from app.demo import story as demo

    root.mkdir(parents=True, exist_ok=True)
    demo.Driver(root).tick()
    cfg = demo.demo_config(root, "sqlite:///unused.db", 1, interval)
    # The server's own demo host shows the switch, UPS, heat pump, BGP, the 3G modems, storage
    # beyond md and the backups (its data sets are judged there: an agent's are not).
    for name in ("snmp", "nut", "heatpump", "frr", "modems", "zfs", "btrfs", "megaraid", "ceph", "ipmi", "smartplugs",
                 "restic", "borg", "haproxy", "updates"):
        cfg["collectors"][name] = {"enabled": False}
    # The cron jobs ping the server (/ping/<token>): their heartbeats are judged there. Listed on
    # the agent they were never pinged, and its host went red a minute into every demo.
    cfg["collectors"]["heartbeats"]["checks"] = []
    # Host basics and RAPL are on without a section, at their own 15 s and 30 s: every collector
    # of an agent on the one beat, so that two rounds of each (what the agent tests wait for)
    # take seconds, not a minute.
    for name in ("host", "rapl"):
        cfg["collectors"].setdefault(name, {})["interval"] = interval
    for k in ("web", "storage", "alerts", "data"):
        cfg.pop(k)
    cfg["host"] = host
    cfg["agent"] = {"outbox": str(root / "outbox.db"), "send_interval": 0.5, "timeout": SEND_TIMEOUT}
    if listen_port:
        cfg["agent"].update(listen="127.0.0.1", port=listen_port)
    path = root / "agent.toml"
    path.write_text(to_toml(cfg))
    return path


def start_demo_agent(root: Path, db_url: str, server_port: int, interval: float) -> subprocess.Popen[bytes]:
    """Issue a token in the demo database and start the agent (it waits for the server by itself)."""
    from app.ingest import agents
    from app.storage.db import make_engine

    engine = make_engine(db_url)
    token = agents.issue(engine, AGENT_HOST)
    engine.dispose()
    host_root = root / AGENT_HOST
    # The agent's host stands still (the demo keeps its story at its first moment), so polling it at
    # the server's beat only read the same answers again: at the browser tests' 2 s its stand-ins
    # were a quarter of the demo's CPU (bench/demo_cpu.py). Every AGENT_INTERVAL at the most, far
    # inside agents.silent_after, so the host never looks silent.
    cfg = agent_config(host_root, AGENT_HOST, max(interval, AGENT_INTERVAL))
    token_file = host_root / "agent.token"
    private_file(token_file)
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    src = Path(__file__).resolve().parents[2]  # the folder holding app/: a checkout or site-packages
    proc = subprocess.Popen(  # noqa: S603 - our own interpreter and module, an argv list, no shell
        [sys.executable, "-m", "app.cli", "agent", "--config", str(cfg), "--server", f"http://127.0.0.1:{server_port}",
         "--token-file", str(token_file)], cwd=src, env={**os.environ, "PYTHONPATH": str(src)},
        # Same process group as the demo: Ctrl-C or a kill of the group stops it too.
        stdout=open(host_root / "agent.log", "ab"), stderr=subprocess.STDOUT)  # noqa: SIM115

    def _stop() -> None:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()

    atexit.register(_stop)
    # uvicorn re-raises SIGTERM after its shutdown, with the handler it found: this one, so that
    # a demo stopped with a plain `kill` takes its agent along instead of leaving it running, and
    # ends by SystemExit so that its folder is removed on the way out. A SIGTERM while it starts
    # is a stop too, with the watchdog armed (app/cli/serve.py).
    from app.cli.serve import arm_watchdog, stop_requested

    def _on_term(signum: int, frame: Any) -> None:
        _stop()
        stop_requested.set()
        arm_watchdog()
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _on_term)
    return proc
