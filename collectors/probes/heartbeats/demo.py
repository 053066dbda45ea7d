"""The demo's cron jobs: a nightly backup that runs every 30 story seconds (a night packed into
half a minute), hangs once per loop (missed), then fails with its log, then runs again; and a
photo sync that is always on time. The scene writes each job's last pings as ages in seconds;
`ScenePings` reads them as a PingBook does, ages counted back from the wall clock."""

from __future__ import annotations

import json
import time
from pathlib import Path

from collectors.context import Ping, PingBook
from collectors.scenes import atomic_write

FILE = "demo-heartbeats.json"
EVERY, GRACE = 30.0, 10.0  # the nightly backup's, in the demo's config
HANG, FAIL, BACK = 120.0, 170.0, 200.0  # story seconds: it starts and hangs; it fails; it runs again
LOG = ("rsync: connection to backup.lan closed while sending /srv/photos/2026/11\n"
       "rsync error: error in rsync protocol data stream (code 12) at io.c(231)\n")


def backup_pings(t: float) -> dict[str, list[object]]:
    """The nightly backup's last ping of each kind at story time t, as [age in seconds, body]."""
    t = t % 240.0
    if HANG <= t < FAIL:  # started at HANG, never ended
        last = (HANG // EVERY - 1) * EVERY
        return {"success": [t - last, ""], "start": [t - HANG, ""]}
    if FAIL <= t < BACK:
        last = (HANG // EVERY - 1) * EVERY
        return {"success": [t - last, ""], "start": [t - HANG, ""], "fail": [t - FAIL, LOG]}
    done = t // EVERY * EVERY if t < BACK else max(BACK, t // EVERY * EVERY)  # each run takes 4 s
    out: dict[str, list[object]] = {"success": [t - done + 0.0, ""], "start": [t - done + 4.0, ""]}
    if t >= BACK:
        out["fail"] = [t - FAIL, LOG]
    return out


def write_scene(root: Path, t: float) -> None:
    jobs = {"nightly-backup": backup_pings(t), "photo-sync": {"success": [t % 60.0, ""]}}
    atomic_write(root / FILE, json.dumps(jobs))


class ScenePings(PingBook):
    """The scene's pings, as the web would have recorded them."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def last(self, name: str) -> dict[str, Ping]:
        try:
            jobs = json.loads((self.root / FILE).read_text())
        except (OSError, ValueError):
            return {}
        now = time.time()
        return {kind: Ping(kind, now - float(age), str(body)) for kind, (age, body) in jobs.get(name, {}).items()}
