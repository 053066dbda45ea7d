"""A running agent carries no web framework, no database toolkit and no plug-in's heavy library
it does not use: an agent on a Raspberry Pi pays for what it collects, not for the server.

The agent runs for real (the demo host's collectors, /metrics served, a server that cannot be
reached, so everything goes to the outbox); once every collector has run, its own process says
which modules it holds. The figures (RSS, CPU) are in bench/agent_footprint.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from app.config import load_config
from app.demo.agent import agent_config
from collectors import plugins
from tests.agent_hosts import ROOT
from tests.peers import free_port

# What the server needs and an agent must not load (collections only need the standard library,
# pydantic for the config and the plug-ins' states, and each enabled plug-in's own client).
FORBIDDEN = ("fastapi", "starlette", "uvicorn", "jinja2", "alembic", "sqlalchemy", "apprise", "paho", "segno",
             "pyotp", "httpx", "cryptography", "pysnmp", "pymodbus", "click", "pygments", "isal")

RUN = """
import json, sys, threading, time, urllib.request
from app import cli
args = ["--log-level", "ERROR", "agent", "--config", sys.argv[1], "--server", "http://127.0.0.1:9",
        "--token-file", sys.argv[2]]
threading.Thread(target=cli.main, args=(args,), daemon=True).start()
deadline = time.monotonic() + float(sys.argv[4])
while time.monotonic() < deadline:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[3]}/healthz", timeout=2) as r:
            if json.load(r)["outbox"]["records"] >= int(sys.argv[5]):
                break
    except OSError:
        pass
    time.sleep(0.2)
with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[3]}/metrics", timeout=5) as r:
    metrics = r.read().decode()
print(json.dumps({"modules": sorted({m.split(".")[0] for m in sys.modules}), "metrics": metrics,
                  "plugins": sorted(m for m in sys.modules if m.count(".") == 2 and m.startswith("collectors."))}))
"""


def test_a_running_agent_holds_no_server_framework_and_no_unused_plug_in_library(tmp_path: Path) -> None:
    port = free_port()
    cfg = agent_config(tmp_path / "nas1", "nas1", interval=1.0, listen_port=port)
    (tmp_path / "token").write_text("rpa_unused\n")
    # the demo agent's collectors (counted from its config: a new plug-in once made a fixed 12 too
    # few, and mdraid had not run yet): each has run once when the outbox holds this many records
    loaded_cfg = load_config(cfg)
    collectors = sum(1 for name in plugins() if getattr(loaded_cfg.collectors, name).enabled)
    # every collector runs within its interval (1 s) after start-up; start-up itself is the rest
    done = subprocess.run([sys.executable, "-c", RUN, str(cfg), str(tmp_path / "token"), str(port), "60",
                           str(collectors)], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert "rackpulse_md_array_degraded" in seen["metrics"]  # it did collect, and serves /metrics
    assert "rackpulse_agent_outbox_records" in seen["metrics"]
    loaded = set(seen["modules"])
    assert {"app", "collectors", "pydantic"} <= loaded
    assert sorted(loaded & set(FORBIDDEN)) == []
    # the plug-ins its config turns off (snmp, nut, the heat pump, FRR, modems, ZFS, btrfs,
    # MegaRAID, Ceph) are not imported at all; the ones it runs are
    imported = {m.rsplit(".", 1)[1] for m in seen["plugins"]}
    assert {"mdraid", "smart", "bonding", "openvpn", "hwmon", "basics"} <= imported, imported
    assert imported.isdisjoint({"snmp", "nut", "heatpump", "frr", "modems", "zfs", "btrfs", "megaraid", "ceph"}), imported
