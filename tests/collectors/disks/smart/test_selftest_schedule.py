"""Scheduled self-tests against a smartctl stand-in that records what it is asked: once per period
inside the window, one disk per md array at a time, never on a syncing array or a sleeping disk."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from collectors.base import CollectorError
from collectors.disks.smart.collector import SmartCollector
from collectors.disks.smart.findings import findings
from collectors.disks.smart.schedule import (
    SelfTestConfig,
    disk_of,
    in_window,
    md_busy,
    parse_window,
    plan,
    refusal,
    storage_busy,
)
from collectors.disks.smart.state import Disk
from collectors.findings import Judging
from collectors.location import BayRule
from tests.collectors.disks.smart.standin import StandIn
from tests.paths import FIXTURES

NIGHT = datetime(2026, 11, 25, 2, 0).timestamp()  # 02:00 local: inside 01:00-06:00
DAY = 86400.0
HOUR = 3600.0

MDSTAT = """Personalities : [raid1]
md0 : active raid1 sdb1[1] sda1[0]
      976630464 blocks super 1.2 [2/2] [UU]
      bitmap: 0/8 pages [0KB], 65536KB chunk

md1 : active raid1 sdd1[1] sdc1[0]
      976630464 blocks super 1.2 [2/2] [UU]
{sync}
unused devices: <none>
"""
RESYNC = "      [====>................]  resync = 22.0% (214857088/976630464) finish=63.2min speed=200000K/sec"


class Shelf:
    """Four disks in two mirrors, each tested long 20 days ago and short 8 days ago: every disk
    is due for a short test (a week), none for a long one (30 days)."""

    def __init__(self, tmp: Path, resync: bool = False, **cfg: object) -> None:
        (tmp / "proc").mkdir(exist_ok=True)
        (tmp / "proc" / "mdstat").write_text(MDSTAT.format(sync=RESYNC if resync else ""))
        self.smartctl = StandIn(tmp, {f"/dev/sd{c}": f"SER{c.upper()}" for c in "abcd"})
        for dev in self.smartctl.read()["disks"]:
            self.smartctl.log(dev, "long", 20 * 24)
            self.smartctl.log(dev, "short", 8 * 24)
        self.now = NIGHT
        self.collector = SmartCollector(tmp, self.smartctl.argv, bays=[BayRule("bay 3", serial="SERC")],
                                        selftest=SelfTestConfig(**{"enabled": True, **cfg}),  # type: ignore[arg-type]
                                        clock=lambda: self.now)

    def collect(self):  # type: ignore[no-untyped-def]
        return self.collector.collect()

    def later(self, seconds: float) -> None:
        self.now += seconds
        self.smartctl.advance(int(seconds // HOUR))


def test_due_short_tests_start_one_disk_per_array_and_no_more_than_max_parallel(tmp_path: Path) -> None:
    shelf = Shelf(tmp_path)
    shelf.collect()
    assert shelf.smartctl.tests_started() == [("short", "/dev/sda"), ("short", "/dev/sdc")]
    shelf.later(300)  # the next poll: both still running; their mirrors' partners wait
    state = shelf.collect().state
    assert shelf.smartctl.tests_started() == [("short", "/dev/sda"), ("short", "/dev/sdc")]
    running = {d.device: (d.selftests.running, d.selftests.percent_done) for d in state.disks}
    assert running["sda"] == ("short", 40) and running["sdb"] == (None, None)
    shelf.smartctl.finish("/dev/sda")
    shelf.smartctl.finish("/dev/sdc")
    shelf.later(300)
    shelf.collect()
    assert shelf.smartctl.tests_started()[2:] == [("short", "/dev/sdb"), ("short", "/dev/sdd")]


def test_each_disk_is_tested_once_per_period(tmp_path: Path) -> None:
    shelf = Shelf(tmp_path, max_parallel=4)
    shelf.collect()
    assert len(shelf.smartctl.tests_started()) == 2  # one per array
    for dev in ("/dev/sda", "/dev/sdc"):
        shelf.smartctl.finish(dev)
    shelf.later(300)
    shelf.collect()
    for dev in ("/dev/sdb", "/dev/sdd"):
        shelf.smartctl.finish(dev)
    for _ in range(6):  # the rest of the night: nothing more is due
        shelf.later(1800)
        shelf.collect()
    assert sorted(shelf.smartctl.tests_started()) == [("short", f"/dev/sd{c}") for c in "abcd"]
    shelf.later(7 * DAY)  # a week later, 05:05, still in the window (the long test is 27 days old: not yet due)
    shelf.collect()
    assert len(shelf.smartctl.tests_started()) == 6


def test_a_long_test_is_due_after_its_period_and_covers_the_short_one(tmp_path: Path) -> None:
    shelf = Shelf(tmp_path, long_every_days=14)
    shelf.collect()
    assert shelf.smartctl.tests_started() == [("long", "/dev/sda"), ("long", "/dev/sdc")]
    started = [c for c in shelf.smartctl.read()["calls"] if "-t" in c]
    assert started[0] == ["-t", "long", "--nocheck=standby", "-d", "sat", "/dev/sda"]


def test_outside_the_window_nothing_starts(tmp_path: Path) -> None:
    shelf = Shelf(tmp_path)
    shelf.now = datetime(2026, 11, 25, 12, 0).timestamp()
    shelf.collect()
    assert shelf.smartctl.tests_started() == []


def test_an_array_that_resyncs_is_left_alone(tmp_path: Path) -> None:
    shelf = Shelf(tmp_path, resync=True)
    shelf.collect()
    assert shelf.smartctl.tests_started() == [("short", "/dev/sda")]  # md1 (sdc, sdd) resyncs
    with pytest.raises(CollectorError, match="md1 is in resync"):
        shelf.collector.start_test("SERD", "short")


def test_a_sleeping_disk_is_not_woken_unless_asked(tmp_path: Path) -> None:
    shelf = Shelf(tmp_path)
    shelf.collect()
    for dev in ("/dev/sda", "/dev/sdc"):
        shelf.smartctl.finish(dev)
    shelf.smartctl.change("/dev/sdb", standby=True)
    shelf.later(300)
    shelf.collect()
    assert ("short", "/dev/sdb") not in shelf.smartctl.tests_started()
    assert ("short", "/dev/sdd") in shelf.smartctl.tests_started()


def test_wake_true_tests_a_sleeping_disk_without_the_nocheck_flag(tmp_path: Path) -> None:
    shelf = Shelf(tmp_path, wake=True)
    shelf.collect()
    calls = [c for c in shelf.smartctl.read()["calls"] if "-t" in c]
    assert calls and all("--nocheck=standby" not in c for c in calls)


def test_a_failed_self_test_is_a_finding_that_names_the_bay(tmp_path: Path) -> None:
    shelf = Shelf(tmp_path)
    shelf.smartctl.log("/dev/sdc", "long", 0, failed=True)
    state = shelf.collect().state
    found = [f for f in findings(state, Judging()) if f.rule == "smart_selftest_failed"]
    assert [f.text for f in found] == [
        "self-test failed, bay 3: WDC WD140EDFZ-11A0VA0 serial SERC: long test: Completed: read failure "
        "at 10,000 power-on hours, first bad block 104,870,168"]
    assert found[0].labels["bay"] == "bay 3"


def test_a_passed_test_after_a_failed_one_clears_the_finding(tmp_path: Path) -> None:
    shelf = Shelf(tmp_path)
    shelf.smartctl.log("/dev/sdc", "long", 2, failed=True)
    shelf.smartctl.log("/dev/sdc", "long", 0)
    state = shelf.collect().state
    assert not [f for f in findings(state, Judging()) if f.rule == "smart_selftest_failed"]


def test_starting_a_test_by_hand_says_what_it_did_and_refuses_a_disk_already_testing(tmp_path: Path) -> None:
    shelf = Shelf(tmp_path, enabled=False)  # by hand works without the schedule
    shelf.collect()
    said = shelf.collector.start_test("SERC", "long")
    assert said == "long self-test started on sdc (bay 3, serial SERC); the drive says it takes about 1479 minutes"
    shelf.later(60)
    shelf.collect()
    with pytest.raises(CollectorError, match="sdc is already running a long test"):
        shelf.collector.start_test("SERC", "short")
    with pytest.raises(CollectorError, match="sdc in md1 is already testing"):
        shelf.collector.start_test("SERD", "short")
    with pytest.raises(CollectorError, match="no disk with serial 'NOPE'"):
        shelf.collector.start_test("NOPE", "short")
    assert shelf.smartctl.tests_started() == [("long", "/dev/sdc")]


def test_the_test_history_outlives_the_drives_log(tmp_path: Path) -> None:
    shelf = Shelf(tmp_path, enabled=False)
    shelf.collect()
    shelf.smartctl.change("/dev/sda", log=[])  # the log wrapped, or was cleared
    state = shelf.collect().state
    sda = next(d for d in state.disks if d.device == "sda")
    assert [(r.type, r.passed) for r in sda.selftests.log] == [("short", True), ("long", True)]


@pytest.mark.parametrize(("window", "at", "inside"), [
    ("01:00-06:00", "01:00", True), ("01:00-06:00", "06:00", False), ("01:00-06:00", "00:59", False),
    ("22:00-04:00", "23:30", True), ("22:00-04:00", "03:59", True), ("22:00-04:00", "12:00", False),
    ("00:00-24:00", "23:59", True),
])
def test_the_window_is_local_time_and_may_cross_midnight(window: str, at: str, inside: bool) -> None:
    h, m = at.split(":")
    assert in_window(datetime(2026, 11, 25, int(h), int(m)), window) is inside


@pytest.mark.parametrize("bad", ["1-6", "25:00-06:00", "01:00-06:61", "night"])
def test_a_window_that_is_not_hh_mm_is_refused_with_the_format(bad: str) -> None:
    with pytest.raises(ValueError, match="HH:MM-HH:MM"):
        parse_window(bad)


@pytest.mark.parametrize(("part", "disk"), [("sdb1", "sdb"), ("sdaa3", "sdaa"), ("nvme0n1p2", "nvme0n1"),
                                            ("sdc", "sdc"), ("mmcblk0p1", "mmcblk0")])
def test_a_member_partition_names_its_disk(part: str, disk: str) -> None:
    assert disk_of(part) == disk


def cli_config(tmp: Path, shelf: Shelf) -> Path:
    argv = ", ".join(f'"{a}"' for a in shelf.smartctl.argv)
    cfg = tmp / "rackpulse.toml"
    cfg.write_text(f'host = "nas"\nhost_root = "{tmp}"\n[storage]\nurl = "sqlite:///{tmp}/db.sqlite"\n'
                   f'[collectors.smart]\nsmartctl = [{argv}]\n'
                   '[[disks.bays]]\nlabel = "bay 3"\nserial = "SERC"\n')
    return cfg


def test_rackpulse_smart_test_starts_one_test_and_says_where(tmp_path: Path) -> None:
    from tests.cli import run_cli

    shelf = Shelf(tmp_path)
    r = run_cli("smart-test", "SERC", "--type", "long", "--config", str(cli_config(tmp_path, shelf)))
    assert (r.returncode, r.stdout.strip()) == (0, "long self-test started on sdc (bay 3, serial SERC); the drive "
                                                   "says it takes about 1479 minutes")
    assert shelf.smartctl.tests_started() == [("long", "/dev/sdc")]


def test_rackpulse_smart_test_refuses_a_busy_array_with_the_reason_and_sends_nothing(tmp_path: Path) -> None:
    from tests.cli import run_cli

    shelf = Shelf(tmp_path, resync=True)
    r = run_cli("smart-test", "SERD", "--config", str(cli_config(tmp_path, shelf)))
    assert r.returncode == 1
    assert "not started: md1 is in resync (22 %)" in r.stderr
    assert shelf.smartctl.tests_started() == []


def test_the_disk_pages_button_starts_a_test_or_shows_why_not(tmp_path: Path) -> None:
    import re
    import time

    from fastapi.testclient import TestClient

    from app.config import load_config
    from app.web.app import create_app

    shelf = Shelf(tmp_path, resync=True)
    cfg = load_config(cli_config(tmp_path, shelf))
    with TestClient(create_app(cfg), base_url="http://127.0.0.1") as c:
        deadline = time.monotonic() + cfg.collectors.smart.timeout  # type: ignore[attr-defined]
        while (page := c.get("/disks/SERC")).status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.05)  # the first collection runs as the server starts
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)[1]  # type: ignore[index]
        assert 'action="/disks/SERC/selftest"' in page.text
        refused = c.post("/disks/SERC/selftest", data={"csrf": csrf, "kind": "short"})
        started = c.post("/disks/SERA/selftest", data={"csrf": csrf, "kind": "long"})
        forged = c.post("/disks/SERA/selftest", data={"csrf": "nope", "kind": "long"})
    assert "not started: md1 is in resync (22 %)" in refused.text
    assert "long self-test started on sda" in started.text
    assert forged.status_code == 403
    assert shelf.smartctl.tests_started() == [("long", "/dev/sda")]


def zfs_mirror(scanning: bool):  # type: ignore[no-untyped-def]
    from collectors.storage.zfs.state import PoolView, ScanView, VdevView, ZfsState

    scan = ScanView(function="scrub", state="scanning" if scanning else "finished")
    return ZfsState(pools=[PoolView(name="tank", state="ONLINE", scan=scan, vdevs=[
        VdevView(name="mirror-0", leaf=False), VdevView(name="ata-A", parent="mirror-0", depth=1, serial="ZA"),
        VdevView(name="ata-B", parent="mirror-0", depth=1, serial="ZB")])])


def due_disk(dev: str, serial: str) -> Disk:
    return Disk(key=serial, device=dev, serial=serial, power_on_hours=1000)


def test_one_disk_per_zfs_vdev_at_a_time_and_none_while_the_pool_scrubs() -> None:
    cfg = SelfTestConfig(enabled=True, max_parallel=4)
    disks = [due_disk("sdx", "ZA"), due_disk("sdy", "ZB")]
    calm = md_busy(Path("/nonexistent")).merged(storage_busy({"zfs": zfs_mirror(False)}))
    assert [(d.serial, k) for d, k in plan(disks, cfg, NIGHT, datetime.fromtimestamp(NIGHT), calm)] == [("ZA", "long")]
    scrubbing = storage_busy({"zfs": zfs_mirror(True)})
    assert plan(disks, cfg, NIGHT, datetime.fromtimestamp(NIGHT), scrubbing) == []
    assert refusal(disks[1], scrubbing, [], False) == "ZFS pool tank is in scrub"


def test_a_raid_controllers_drive_group_that_rebuilds_holds_its_disks_back() -> None:
    from collectors.storage.megaraid.state import Controller, MegaraidState, PhysicalDrive

    pds = [PhysicalDrive(key=f"c0/252:{i}", eid_slot=f"252:{i}", dg="0", serial=f"M{i}",
                         state="Rbld" if i == 2 else "Onln") for i in range(3)]
    busy = storage_busy({"megaraid": MegaraidState(controllers=[Controller(name="c0", pds=pds)])})
    assert refusal(due_disk("sdb", "M0"), busy, [], False) == "c0 drive group 0 is rebuilding"
    assert refusal(due_disk("sdz", "OTHER"), busy, [], False) is None


def test_a_scanned_device_type_that_writes_to_the_disk_is_never_passed_to_smartctl(tmp_path: Path) -> None:
    """`smartctl --scan` may name `jmb39x,0`: that type reads and writes LBA 33 (smartctl(8))."""
    import json

    from collectors.base import CommandResult

    calls: list[list[str]] = []
    ata = (FIXTURES / "smartctl" / "scrutiny__smart-ata.json").read_bytes()

    def runner(argv: list[str], timeout: float) -> CommandResult:
        calls.append(list(argv))
        if "--scan" in argv:
            return CommandResult(tuple(argv), 0, json.dumps({"devices": [
                {"name": "/dev/sda", "type": "jmb39x,0"}, {"name": "/dev/sdb", "type": "sat"}]}).encode(), b"")
        return CommandResult(tuple(argv), 0, ata, b"")

    (tmp_path / "proc").mkdir()
    r = SmartCollector(tmp_path, ["smartctl"], runner=runner).collect()
    assert [c for c in calls if "jmb39x,0" in c] == []
    assert any("device type 'jmb39x,0' is not one smartctl only reads through" in w for w in r.warnings)
    assert ["smartctl", "--json", "--all", "--nocheck=standby", "-d", "sat", "/dev/sdb"] in calls
    d = Disk(key="SERA", device="sda", dev_type="jmb39x,0")
    assert "only reads through" in (refusal(d, md_busy(tmp_path), [], wake=True) or "")
