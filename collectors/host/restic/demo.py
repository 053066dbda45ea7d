"""restic in `rackpulse demo`: the NAS's nightly and hourly snapshots of /srv/photos and
/srv/documents in a repository on a USB disk, answered by the replayed `restic snapshots`.

Its snapshots are dated on the real clock (an age is what the data page judges): the newest
made at the last full hour, the nightly ones at 01:30 for two weeks before."""

from __future__ import annotations

import hashlib
import json
import time
from datetime import datetime
from pathlib import Path

from collectors.scenes import write_answer

REPOSITORY = "/mnt/usb-backup/restic"  # on its own disk, not on md0 (/srv): a copy off the array
PATHS = ["/srv/documents", "/srv/photos"]
HOST = "demo-nas"


def password_file(root: Path) -> Path:
    return root / "demo-backups" / "restic.pass"


def args(root: Path) -> list[str]:
    return ["-r", REPOSITORY, "--password-file", str(password_file(root)), "snapshots", "--json", "--no-lock"]


def taken_times(now: float) -> list[float]:
    """The last six hourlies and the fourteen nightlies (01:30) before them, oldest first: twenty
    whatever the hour (the demo's /metrics is compared with a golden file)."""
    hourly = [now - now % 3600 - h * 3600 for h in range(6)]
    night = datetime.fromtimestamp(hourly[-1]).replace(hour=1, minute=30, second=0, microsecond=0).timestamp()
    if night >= hourly[-1]:
        night -= 86400
    return sorted([*hourly, *(night - d * 86400 for d in range(14))])


def snapshot(ts: float) -> dict[str, object]:
    ident = hashlib.sha256(f"demo {ts}".encode()).hexdigest()
    return {"time": datetime.fromtimestamp(ts).astimezone().isoformat(timespec="microseconds"),
            "tree": hashlib.sha256(f"tree {ts}".encode()).hexdigest(), "paths": PATHS, "hostname": HOST,
            "username": "root", "uid": 0, "gid": 0, "id": ident, "short_id": ident[:8]}


def write_scene(root: Path, t: float) -> None:
    secret = password_file(root)
    if not secret.exists():
        secret.parent.mkdir(parents=True, exist_ok=True)
        secret.write_text("demo\n")
    write_answer(root / "demo-tools" / "restic", args(root), json.dumps([snapshot(x) for x in taken_times(time.time())]))
