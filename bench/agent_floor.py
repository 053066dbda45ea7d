"""(10b) Where an agent's memory goes, layer by layer: the RSS of a fresh interpreter after each
layer an agent process needs is imported, in the order the agent imports them.

The layers:

  interpreter        python itself, with site (and the venv's .pth files)
  stdlib for agent   what collecting and pushing need of the standard library: subprocess,
                     threads, sockets, json, sqlite3 (the outbox), gzip, logging, http.client
                     (which imports ssl, so libssl and libcrypto), http.server (its /metrics)
  plug-in discovery  importlib.metadata (entry points; it imports email and zipfile)
  pydantic           pydantic and BaseModel: the config and every plug-in's typed state
  asyncio            the scheduler's event loop
  collectors core    rackpulse's collector contract (collectors/)
  every plug-in      all installed plug-ins, as the config model names every section
  agent code         the config loaded, the scheduler, the outbox and the sender

The running agent (bench/agent_footprint.py) adds its threads, states, outbox and buffers.
The first two layers are printed for every Python found (this venv's, /usr/bin/python3): they
are the floor of any agent written in Python, before a line of rackpulse.

usage: python bench/agent_floor.py
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LAYERS = [
    ("interpreter", "pass"),
    ("stdlib for agent", "import subprocess, selectors, threading, socket, json, sqlite3, gzip, zlib, logging, "
                         "random, http.client, http.server, hashlib"),
    ("plug-in discovery", "import importlib.metadata"),
    ("pydantic", "from pydantic import BaseModel"),
    ("asyncio", "import asyncio"),
    ("collectors core", "import collectors"),
    ("every plug-in", "collectors.plugins()"),
    ("agent code", "from app.config import load_config; load_config(None); import app.scheduler, app.agent.push"),
]

CHILD = """
import json, sys
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
out = []
for name, code in json.loads(sys.argv[1]):
    exec(code)
    out.append((name, rss()))
print(json.dumps(out))
"""


def layers(python: str, upto: int) -> list[tuple[str, float]]:
    done = subprocess.run([python, "-c", CHILD, json.dumps(LAYERS[:upto])], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    return [tuple(x) for x in json.loads(done.stdout)]


def main() -> None:
    pythons = [sys.executable]
    system = shutil.which("python3", path="/usr/bin")
    if system and Path(system).resolve() != Path(sys.executable).resolve():
        pythons.append(system)
    print("== what an agent process holds, layer by layer (VmRSS, MB; cumulative, and what the layer added)")
    for python in pythons:
        own = python == sys.executable
        version = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True,
                                 text=True, check=True).stdout.strip()
        print(f"-- {python} (Python {version}){'' if own else ': the standard library only'}")
        prev = 0.0
        for name, mb in layers(python, len(LAYERS) if own else 2):
            print(f"  {name:<18} {mb:6.1f}  (+{mb - prev:.1f})")
            prev = mb


if __name__ == "__main__":
    main()
