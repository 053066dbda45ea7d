"""The demo's seeded past meets its live present: a chart has no cliff where they join."""

from __future__ import annotations

from pathlib import Path

from app.storage.db import make_engine, upgrade
from app.storage.store import Store
from demo import story

NOW = 1_795_000_000


def test_the_seeded_history_ends_at_the_temperature_the_live_story_starts_with(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'd.db'}"
    upgrade(url)
    store = Store(make_engine(url), "demo-nas")
    story.seed_history(store, now=NOW, days=2)
    for disk in story.story_state(0)["disks"]:
        sid = store.find_series("rackpulse_disk_temperature_celsius", serial=disk["serial"])
        assert sid is not None
        last = store.history(sid, NOW - 86400, NOW)[-1]
        assert abs(last.vavg - disk["temp"]) <= 0.5, (disk["serial"], last.vavg, disk["temp"])
        first = store.history(sid, NOW - 86400, NOW)[0]
        assert abs(first.vavg - disk["temp"]) <= 8  # a season and a day of swing, not a different disk
