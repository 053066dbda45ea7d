"""The demo's seeded past meets its live present: a chart has no cliff where they join."""

from __future__ import annotations

from pathlib import Path

from app.demo import story
from app.demo.history import seed_history
from app.storage.db import make_engine, upgrade
from app.storage.store import Store

NOW = 1_795_000_000


def test_the_seeded_history_ends_at_the_temperature_the_live_story_starts_with(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'd.db'}"
    upgrade(url)
    store = Store(make_engine(url), "demo-nas")
    seed_history(store, now=NOW, days=2)
    for disk in story.story_state(0)["disks"]:
        sid = store.find_series("rackpulse_disk_temperature_celsius", serial=disk["serial"])
        assert sid is not None
        last = store.history(sid, NOW - 86400, NOW)[-1]
        assert abs(last.vavg - disk["temp"]) <= 0.5, (disk["serial"], last.vavg, disk["temp"])
        first = store.history(sid, NOW - 86400, NOW)[0]
        assert abs(first.vavg - disk["temp"]) <= 8  # a season and a day of swing, not a different disk


def test_the_demo_agent_hosts_files_stay_fresh_while_its_story_stands_still(tmp_path: Path) -> None:
    """Its OpenVPN status file was written once: an hour later `collector openvpn down: status file
    is 2874s old` fired on a host whose card said all clear."""
    import os
    import time

    from app.demo import story

    calm = story.Driver(tmp_path, speed=0.0)
    calm.tick()
    status = tmp_path / "run/openvpn/site-b.status"
    first = status.read_text()
    os.utime(status, (time.time() - 3000, time.time() - 3000))  # as if written long ago
    calm.start()
    try:
        deadline = time.monotonic() + 10  # the driver rewrites every second
        while time.time() - status.stat().st_mtime > 5 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert time.time() - status.stat().st_mtime <= 5
        assert status.read_text() == first  # the same calm moment, rewritten
    finally:
        calm.stop_event.set()
        calm.join(5)


def test_a_demo_file_that_already_says_the_same_is_not_written_again(tmp_path: Path) -> None:
    """The demo writes its whole tree every second; rewriting what did not change was an idle
    demo's CPU (and, on an SD card, its writes)."""
    from collectors.scenes import atomic_write

    path = tmp_path / "proc" / "mdstat"
    atomic_write(path, "one\n")
    inode = path.stat().st_ino
    atomic_write(path, "one\n")
    assert path.stat().st_ino == inode  # left alone: a rewrite renames a new file over it
    atomic_write(path, "two\n")
    assert path.stat().st_ino != inode and path.read_text() == "two\n"


def test_the_demos_past_is_written_in_batches_never_held_whole() -> None:
    """1.36 million rollup rows as dicts in one list were +563 MB of the demo's 557-561 MB peak
    (bench/demo_rss.py: 177 MB with batches)."""
    from app.demo.history import seed_everything

    class Store:  # what seed_everything asks of a store, and what it was handed
        engine = None
        batches: list[int] = []

        def import_rollups(self, rows, folded):  # type: ignore[no-untyped-def]
            self.batches.append(sum(len(v) for v in rows.values()))

    store = Store()
    import app.demo.history as h

    latest = {i: ("rackpulse_disk_temperature_celsius", 30.0) for i in range(400)}
    real_latest, real_rates = h.latest_values, h.rates
    h.latest_values, h.rates = (lambda s: latest), (lambda s: {})  # type: ignore[assignment]
    try:
        assert seed_everything(store, 1_800_000_000) == 400
    finally:
        h.latest_values, h.rates = real_latest, real_rates
    assert len(store.batches) > 2 and max(store.batches) < 120_000 and sum(store.batches) > 500_000


def test_a_counters_seeded_month_varies_by_day_and_ends_where_it_is_now() -> None:
    """Every day of the 30-day energy chart was the same height: a counter's past climbed at one
    rate. Now its rate varies by the week and by a spell of days, around the one measured now."""
    from app.demo.history import climbed, value_at

    now, rate, phase = 1_800_000_000, 500.0 / 3600 * 3600, 1.3  # a rack drawing about 500 W, in J/s
    days = [climbed(rate, now - (d + 1) * 86400, now - d * 86400, phase) / 3.6e6 for d in range(30)]
    assert min(days) > 0.6 * 12 and max(days) < 1.4 * 12  # about 12 kWh a day, never falling
    assert max(days) - min(days) > 0.25 * 12  # and no two weeks alike: busy and quiet days
    assert len({round(d, 1) for d in days}) > 20
    total = 5e9
    assert value_at("counter", 0.0, total, now, now, 30 * 86400, phase, rate) == total  # no cliff at now
    past = [value_at("counter", 0.0, total, now - h * 3600, now, 30 * 86400, phase, rate) for h in range(720)]
    assert all(a >= b for a, b in zip(past, past[1:], strict=False))  # a counter never goes back
