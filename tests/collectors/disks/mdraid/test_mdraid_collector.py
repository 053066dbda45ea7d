"""The mdraid collector end to end over fixture host trees and real (fake) commands."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from app.demo import story as demo
from collectors.base import CommandResult, NoData, ParseError
from collectors.disks.mdraid.collector import MdraidCollector
from collectors.location import bay_rules
from tests.paths import FIXTURES

FIX = FIXTURES


def real_capture_host(tmp_path: Path) -> Path:
    (tmp_path / "proc").mkdir()
    shutil.copy(FIX / "mdstat" / "procfs__mdstat", tmp_path / "proc" / "mdstat")
    shutil.copytree(FIX / "sysfs" / "sys", tmp_path / "sys", symlinks=True)
    return tmp_path


def demo_collector(root: Path) -> MdraidCollector:
    cfg = demo.demo_config(root, "sqlite://", 1, 1)
    return MdraidCollector(root, cfg["collectors"]["mdraid"]["mdadm"], True, 10, bay_rules(cfg["disks"]["bays"]))


def test_it_reports_every_array_of_a_real_capture(tmp_path: Path) -> None:
    c = MdraidCollector(real_capture_host(tmp_path), detail=False)
    r = c.collect()
    arrays = {a.name: a for a in r.state.arrays}
    assert len(arrays) == 18
    assert arrays["md7"].degraded and arrays["md7"].failed == 1
    assert arrays["md201"].sync_action == "check" and not arrays["md201"].degraded
    values = {(s.metric, dict(s.labels).get("array"), dict(s.labels).get("state")): s.value for s in r.samples}
    assert values[("rackpulse_md_array_degraded", "md7", None)] == 1
    assert values[("rackpulse_md_array_disks", "md7", "failed")] == 1
    assert values[("rackpulse_md_array_disks", "md3", "spare")] == 2


def test_it_reads_uuid_and_member_states_from_sysfs(tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "mdstat").write_text(
        "Personalities : [raid1]\nmd0 : active raid1 sdg[0] sdh[1]\n      100 blocks [2/2] [UU]\n\n"
        "unused devices: <none>\n")
    shutil.copytree(FIX / "sysfs" / "sys", tmp_path / "sys", symlinks=True)
    a = MdraidCollector(tmp_path, detail=False).collect().state.arrays[0]
    assert a.uuid == (FIX / "sysfs/sys/block/md0/md/uuid").read_text().strip()
    assert a.array_state == "clean"


def test_a_failed_disk_shows_its_bay_serial_and_model(tmp_path: Path) -> None:
    c = demo_collector(tmp_path)
    demo.write_tree(tmp_path, demo.story_state(0))
    c.collect()
    demo.write_tree(tmp_path, demo.story_state(80))  # sdh failed
    r = c.collect()
    md0 = r.state.arrays[0]
    failed = [m for m in md0.members if m.state == "failed"]
    assert [(m.device, m.bay, m.serial, m.slot) for m in failed] == \
        [("sdh1", "shelf 1, bay 7", "ZA1049HK", 7)]
    labels = [dict(s.labels) for s in r.samples if s.metric == "rackpulse_md_member_state"]
    assert {"array": "md0", "device": "sdh1", "serial": "ZA1049HK", "bay": "shelf 1, bay 7", "state": "failed"} in labels


def test_a_pulled_disk_is_still_named_by_its_last_bay_and_serial(tmp_path: Path) -> None:
    c = demo_collector(tmp_path)
    for t in (0, 80):
        demo.write_tree(tmp_path, demo.story_state(t))
        c.collect()
    demo.write_tree(tmp_path, demo.story_state(105))  # pulled: gone from mdstat and /dev/disk/by-id
    missing = [m for m in c.collect().state.arrays[0].members if m.state == "missing"]
    assert [(m.device, m.bay, m.serial) for m in missing] == [("sdh1", "shelf 1, bay 7", "ZA1049HK")]


def test_the_memory_of_members_survives_a_restart(tmp_path: Path) -> None:
    c = demo_collector(tmp_path)
    demo.write_tree(tmp_path, demo.story_state(80))
    state = c.collect().state
    restarted = demo_collector(tmp_path)
    restarted.restore(state)
    demo.write_tree(tmp_path, demo.story_state(105))
    missing = [m for m in restarted.collect().state.arrays[0].members if m.state == "missing"]
    assert [m.serial for m in missing] == ["ZA1049HK"]


def test_the_rebuild_shows_progress_and_then_clears(tmp_path: Path) -> None:
    c = demo_collector(tmp_path)
    demo.write_tree(tmp_path, demo.story_state(150))
    md0 = c.collect().state.arrays[0]
    assert md0.sync_action == "recovery" and 0 < md0.sync_ratio < 1
    assert md0.sync_remaining_seconds > 0
    assert [m.state for m in md0.members if m.device == "sdm1"] == ["rebuilding"]
    demo.write_tree(tmp_path, demo.story_state(230))
    md0 = c.collect().state.arrays[0]
    assert not md0.degraded and md0.sync_action == "idle"


def test_a_hung_mdadm_is_a_warning_and_the_arrays_are_still_reported(tmp_path: Path) -> None:
    demo.write_tree(tmp_path, demo.story_state(0))
    hang = [sys.executable, "-c", "import time; time.sleep(60)"]
    c = MdraidCollector(tmp_path, hang, detail=True, timeout=0.5)
    r = c.collect()
    assert [a.name for a in r.state.arrays] == ["md0", "md1"]
    assert any("timed out after 0.5s" in w for w in r.warnings)


def test_mdadm_exiting_with_an_error_is_a_warning_quoting_it(tmp_path: Path) -> None:
    demo.write_tree(tmp_path, demo.story_state(0))

    def runner(argv, timeout):  # type: ignore[no-untyped-def]
        return CommandResult(tuple(argv), 2, b"", b"mdadm: cannot open /dev/md0: Permission denied\n")

    r = MdraidCollector(tmp_path, runner=runner).collect()
    assert any("Permission denied" in w for w in r.warnings)
    assert r.state.arrays[0].uuid  # sysfs still gave it


def test_a_host_without_md_has_no_data_rather_than_an_error(tmp_path: Path) -> None:
    with pytest.raises(NoData):
        MdraidCollector(tmp_path).collect()


def test_a_truncated_mdstat_is_an_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "mdstat").write_text("Personalities : [raid6]\nmd0 : active raid6 sda1[0] sdb1[1]")
    with pytest.raises(ParseError, match=r"proc/mdstat: md0: status line .* missing"):
        MdraidCollector(tmp_path, detail=False).collect()


def test_a_raid6_rebuilding_two_disks_is_still_degraded_until_the_rebuild_ends(tmp_path: Path) -> None:
    """A rebuild is not redundancy: md0 recovering at 19.6 % with 4 of 6 slots in sync has no
    parity left, and /metrics and the rule must say degraded (the rebuild's own tile says it is
    being dealt with)."""
    from collectors.disks.mdraid.findings import array_findings

    (tmp_path / "proc").mkdir()
    shutil.copy(FIX / "mdstat" / "nagios-plugin-check_raid__mdstat__issue43__recovery", tmp_path / "proc" / "mdstat")
    r = MdraidCollector(tmp_path, detail=False).collect()
    (md0,) = r.state.arrays
    assert md0.sync_action == "recovery" and md0.degraded
    values = {(s.metric, dict(s.labels).get("array")): s.value for s in r.samples}
    assert values[("rackpulse_md_array_degraded", "md0")] == 1
    (f,) = array_findings(md0)
    assert f.rule == "array_rebuilding" and "degraded (4/6)" in f.text


def test_with_two_disks_out_of_sight_the_gap_is_named_by_the_one_that_failed(tmp_path: Path) -> None:
    """Two members rackpulse knew are out of sight when sdh is pulled: sdh, which failed, and a
    healthy member seen under another name before (a controller reset renames disks). One slot is
    empty: it is the failed disk's, so its bay and serial are what the page and the alert name."""
    c = demo_collector(tmp_path)
    for t in (0, 80):
        demo.write_tree(tmp_path, demo.story_state(t))
        c.collect()
    known = c._known["md0"]
    healthy = next(k for k in known.values() if k.state == "active")
    renamed = healthy.model_copy(update={"device": "sdz1", "disk": "sdz", "serial": "RENAMED1", "bay": "shelf 2, bay 1"})
    c._known["md0"] = {"sdz1": renamed, **known}  # seen first: the order the memory happens to hold
    demo.write_tree(tmp_path, demo.story_state(105))
    missing = [m for m in c.collect().state.arrays[0].members if m.state == "missing"]
    assert [(m.serial, m.bay) for m in missing] == [("ZA1049HK", "shelf 1, bay 7")]
