"""What a reload promises to keep, kept: each plug-in's findings' memory when a threshold changes
(a bond's flap memory became {} after one unrelated rule's level changed); a collector removed
while its run is in flight ends cleanly (a KeyError in the scheduler, 19 tracebacks); a file being
written while it is read is read again until it stops changing (a half-written file was taken),
through a real `serve`."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
import time
from collections import deque
from pathlib import Path

import pytest

from app.judge import Judge, Thresholds
from app.reload import SETTLE_PAUSE, SETTLE_SECONDS, SETTLE_TRIES, settled_text
from app.scheduler import Scheduler, Snapshot
from tests.agent_hosts import get_json, stop, to_toml, wait_for
from tests.test_reload import INTERVAL, config, serving
from tests.test_scheduler import Fake


def test_a_threshold_change_keeps_every_plugins_memory_and_judges_again_with_the_new_values() -> None:
    judge = Judge("nas", Thresholds())
    bond = judge.judging("bonding", None, now=1000.0)
    bond.memory["bond0/eth1 link failures"] = deque([(900.0, 3.0), (990.0, 5.0)])
    judge.judging("mdraid", None, now=1000.0).memory["md0"] = deque([(1.0, 1.0)])
    judge._last["bonding"] = (object(), (), [])  # a cached judgement
    judge.configure(Thresholds(flap_count=5, levels=(("disk_hot", (45.0, 60.0)),)))
    again = judge.judging("bonding", None, now=1001.0)
    assert again is bond and list(again.memory["bond0/eth1 link failures"]) == [(900.0, 3.0), (990.0, 5.0)]
    assert (again.flap_count, again.levels) == (5, {"disk_hot": (45.0, 60.0)})
    assert judge.judging("mdraid", None).memory["md0"]  # another plug-in's memory too
    assert judge._last == {}  # judged again on the next read, with the new values


def test_a_collector_removed_while_its_run_is_in_flight_ends_cleanly(caplog: pytest.LogCaptureFixture) -> None:
    slow, other = Fake("slow", "hang"), Fake("other")
    sched = Scheduler({"slow": slow, "other": other}, {"slow": (60.0, 5.0), "other": (60.0, 5.0)}, Snapshot(host="h"))

    async def scenario() -> None:
        run = asyncio.create_task(sched.run_once("slow"))
        await asyncio.sleep(0.2)  # in flight, blocked in collect()
        sched.reconfigure({"other": other}, {"other": (60.0, 5.0)}, set())
        slow.release.set()
        st = await run
        assert st.name == "slow" and not st.running

    with caplog.at_level(logging.INFO, logger="rackpulse.scheduler"):
        asyncio.run(scenario())
    assert "slow" not in sched.collectors and "slow" not in sched.snapshot.states
    assert any("removed or rebuilt by a reload while it ran" in r.message for r in caplog.records)


def test_a_file_written_in_pieces_is_read_once_it_stops_changing(tmp_path: Path) -> None:
    path = tmp_path / "rackpulse.toml"
    whole = "".join(f'[collectors.c{i}]\nenabled = false\n' for i in range(200))
    path.write_text(whole[:100])

    def editor() -> None:  # writes in place, a piece every 0.3 s, as some editors and scripts do
        for end in range(400, len(whole) + 400, 400):
            time.sleep(0.3)
            with open(path, "r+") as f:
                f.write(whole[:end])
                f.flush()

    t = threading.Thread(target=editor)
    t.start()
    try:
        got = settled_text(path)
    finally:
        t.join()
    assert got == whole
    assert SETTLE_SECONDS + SETTLE_PAUSE < SETTLE_PAUSE * SETTLE_TRIES  # a settled file is always waited for


def test_a_sighup_while_the_file_is_half_written_applies_the_whole_file(tmp_path: Path) -> None:
    proc, port, sink, path, log = serving(tmp_path)
    try:
        wait_for(lambda: get_json(f"http://127.0.0.1:{port}/api/state")["states"].get("mdraid"), 60, "mdraid read")
        new = to_toml(config(tmp_path, port, sink, **{"collectors.bonding": {"enabled": True, "interval": INTERVAL}}))
        mark = len(log.read_text())
        with open(path, "w") as f:  # in place: half, the signal, then the rest
            f.write(new[: len(new) // 2])
            f.flush()
            os.kill(proc.pid, signal.SIGHUP)
            time.sleep(SETTLE_PAUSE * 2)
            f.write(new[len(new) // 2:])
        def reload_said() -> str | None:
            text = log.read_text()[mark:]
            return text if "config reloaded" in text or "refused" in text else None

        said = wait_for(reload_said, 60, "the reload's line")
        assert "reload refused" not in said and "started or rebuilt from their new sections: bonding" in said, said
        wait_for(lambda: get_json(f"http://127.0.0.1:{port}/api/state")["states"].get("bonding"), 60, "bonding read")
    finally:
        stop(proc)
        sink.close()
