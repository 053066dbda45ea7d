"""borg in `rackpulse demo`: the NAS's nightly archive of /srv to an off-site repository, answered
by the replayed `borg list` and `borg info`. In the story the off-site job has failed for two
nights while the disk fails (story seconds 60 to 210): its newest archive is two days old, older
than its 26 h, until the job catches up. Dated on the real clock, as the data page judges ages."""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path

from collectors.host.borg.parse import FORMAT
from collectors.scenes import write_answer

REPOSITORY = "ssh://backup@offsite.example/./demo-nas"
HOST = "demo-nas"
BEHIND = (60.0, 210.0)  # the story's stretch in which the off-site job is two nights behind


def list_args() -> list[str]:
    return ["list", "--json", "--bypass-lock", "--format", FORMAT, REPOSITORY]


def info_args() -> list[str]:
    return ["info", "--json", "--bypass-lock", REPOSITORY]


def archive(ts: float) -> dict[str, object]:
    name = f"{HOST}-{datetime.fromtimestamp(ts):%Y-%m-%dT%H:%M}"
    return {"archive": name, "name": name, "time": datetime.fromtimestamp(ts).isoformat(timespec="microseconds"),
            "hostname": HOST, "command_line": ["borg", "create", "--compression", "zstd", f"{REPOSITORY}::{name}",
                                               "/srv/photos", "/srv/documents"]}


def archive_times(now: float, t: float) -> list[float]:
    """Nightly at 02:00 for three weeks; in the story's behind stretch the last two nights are missing."""
    night = datetime.fromtimestamp(now).replace(hour=2, minute=0, second=0, microsecond=0).timestamp()
    if night > now:
        night -= 86400  # tonight's has not run yet
    nights = [night - d * 86400 for d in range(21)]
    if BEHIND[0] <= t % 240 < BEHIND[1]:
        nights = [n - 2 * 86400 for n in nights]
    return sorted(nights)


def write_scene(root: Path, t: float) -> None:
    folder, now = root / "demo-tools" / "borg", time.time()
    listed = {"archives": [archive(x) for x in archive_times(now, t)],
              "encryption": {"mode": "repokey-blake2"},
              "repository": {"id": "5d1f" * 16, "last_modified": datetime.fromtimestamp(now).isoformat(),
                             "location": REPOSITORY}}
    write_answer(folder, list_args(), json.dumps(listed))
    write_answer(folder, info_args(), json.dumps({"cache": {"stats": {
        "total_chunks": 412_000, "total_csize": 2_870_000_000_000, "total_size": 3_400_000_000_000,
        "total_unique_chunks": 96_000, "unique_csize": 1_180_000_000_000, "unique_size": 1_300_000_000_000}},
        "encryption": {"mode": "repokey-blake2"}, "repository": listed["repository"]}))
