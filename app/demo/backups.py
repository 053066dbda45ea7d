"""The demo NAS's backups and data sets: restic to a USB disk every hour, borg off site every
night, and /srv/photos (which must have an off-site copy) and /srv/documents on md0 judged on
/data. The story's failing disk costs md0 one of its two parity disks while the off-site job is
two nights behind (collectors/host/borg/demo.py): the data page says photos is not protected."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from collectors.host.borg import demo as borg
from collectors.host.restic import demo as restic

DEMO_DATA = {"sets": [
    {"name": "photos", "path": "/srv/photos", "offsite_required": True},
    {"name": "documents", "path": "/srv/documents"},
]}


def backup_sections(root: Path, interval: float, replay: Callable[[str], list[str]]) -> dict[str, Any]:
    """[collectors.restic] and [collectors.borg], answered by the scenes' replayed tools."""
    every = interval * 3  # real ones every 15 minutes; the story's stretch is still seen several times
    return {
        "restic": {"interval": every, "restic": replay("restic"),
                   "repos": [{"name": "usb-disk", "repository": restic.REPOSITORY,
                              "password_file": str(restic.password_file(root)), "max_age": 26 * 3600.0}]},
        "borg": {"interval": every, "borg": replay("borg"),
                 "repos": [{"name": "offsite", "repository": borg.REPOSITORY, "offsite": True,
                            "max_age": 26 * 3600.0}]},
    }
