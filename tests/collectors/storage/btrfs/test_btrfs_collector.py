"""The btrfs collector over real btrfs-progs captures and a kernel sysfs tree: missing devices
with their last bay, error counters from sysfs or `device stats`, scrub, space by profile."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.base import CollectorError, NoData, ParseError
from collectors.findings import Judging
from collectors.location import BayRule
from collectors.storage.btrfs import findings
from collectors.storage.btrfs.collector import BtrfsCollector
from tests.collectors.storage_helpers import fixture, host_tree, runner

UUID = "2c680ff8-9687-4356-87db-e48d23749d80"
SHOW = "filesystem show --raw"
OK_SHOW = fixture("btrfs", "rockstor-core__btrfs_fi_show__raid0-ok")
MISSING = fixture("btrfs", "rockstor-core__btrfs_fi_show__raid0-1-missing-live")
SCRUB = fixture("btrfs", "rockstor-core__btrfs_scrub_status_-R__finished")
BAYS = [BayRule("shelf 1, bay 5", serial="SER5"), BayRule("shelf 1, bay 7", serial="SER7"),
        BayRule("shelf 1, bay 8", serial="SER8")]


def tree(root: Path, error_stats: bool = True) -> Path:
    host_tree(root, {"ata-DISK_SER5": "sda", "ata-DISK_SER7": "vdb", "ata-DISK_SER8": "vda"})
    (root / "proc").mkdir(exist_ok=True)
    (root / "proc/mounts").write_text("/dev/md0 / ext4 rw 0 0\n/dev/sda /mnt/my\\040pool btrfs rw,relatime 0 0\n")
    base = root / "sys/fs/btrfs" / UUID
    for kind, profile, total, used in (("data", "raid0", 3 << 30, 2 << 30), ("metadata", "raid1", 1 << 30, 1 << 20)):
        d = base / "allocation" / kind / profile
        d.mkdir(parents=True)
        (d / "total_bytes").write_text(f"{total}\n")
        (d / "used_bytes").write_text(f"{used}\n")
    if error_stats:
        for devid, corruption in ((5, 0), (7, 4), (8, 0)):
            d = base / "devinfo" / str(devid)
            d.mkdir(parents=True)
            (d / "error_stats").write_text(f"write_errs 0\nread_errs 0\nflush_errs 0\ncorruption_errs {corruption}\n"
                                           "generation_errs 0\n")
            (d / "missing").write_text("0\n")
    return root


def answers(show: bytes = OK_SHOW, **more):  # type: ignore[no-untyped-def]
    return {SHOW: (0, show, b""), "scrub status -R /mnt/my pool": (0, SCRUB, b""), **more}


def test_every_device_has_its_errors_its_disk_and_its_bay(tmp_path: Path) -> None:
    res = BtrfsCollector(tree(tmp_path), bays=BAYS, runner=runner(answers())).collect()
    fs = res.state.filesystems[0]
    assert (fs.name, fs.mount, fs.missing) == ("test-pool-new-kernel", "/mnt/my pool", 0)
    assert [(d.devid, d.serial, d.bay, d.errors["corruption"]) for d in fs.devices] == [
        (5, "SER5", "shelf 1, bay 5", 0), (7, "SER7", "shelf 1, bay 7", 4), (8, "SER8", "shelf 1, bay 8", 0)]
    assert [a.model_dump() for a in fs.allocation] == [{"type": "data", "profile": "raid0", "total": 3 << 30, "used": 2 << 30},
                                {"type": "metadata", "profile": "raid1", "total": 1 << 30, "used": 1 << 20}]
    assert fs.scrub.status == "finished" and fs.scrub.uncorrectable == 0
    errors = {dict(s.labels)["device"]: s.value for s in res.samples if s.metric == "rackpulse_btrfs_device_errors_total"
              and dict(s.labels)["kind"] == "corruption"}
    assert errors == {"/dev/sda": 0, "/dev/vdb": 4, "/dev/vda": 0}


def test_without_sysfs_error_stats_btrfs_device_stats_is_asked(tmp_path: Path) -> None:
    stats = fixture("btrfs", "rockstor-core__btrfs_device_stats__vdb_corruption5")
    res = BtrfsCollector(tree(tmp_path, error_stats=False), bays=BAYS,
                         runner=runner(answers(**{"device stats /mnt/my pool": (0, stats, b"")}))).collect()
    vdb = next(d for d in res.state.filesystems[0].devices if d.path == "/dev/vdb")
    assert vdb.errors["corruption"] == 5


def test_a_missing_device_is_found_and_keeps_the_bay_it_had(tmp_path: Path) -> None:
    c = BtrfsCollector(tree(tmp_path), bays=BAYS, runner=runner(answers()))
    before = c.collect().state
    (tmp_path / "dev/disk/by-id/ata-DISK_SER8").unlink()  # the disk is gone from the machine
    again = BtrfsCollector(tmp_path, bays=BAYS, runner=runner(answers(MISSING)))
    again.restore(before)
    fs = again.collect().state.filesystems[0]
    gone = next(d for d in fs.devices if d.devid == 8)
    assert gone.missing and (gone.serial, gone.bay) == ("SER8", "shelf 1, bay 8")
    (f,) = [f for f in findings.fs_findings(fs, Judging()) if f.rule == "btrfs_device_missing"]
    assert "devid 8 (shelf 1, bay 8, DISK serial SER8, was /dev/vda)" in f.text


def test_devices_btrfs_no_longer_lists_are_counted_as_missing(tmp_path: Path) -> None:
    shown = fixture("btrfs", "rockstor-core__btrfs_fi_show__unmounted_devices-7-8-missing")
    fs = BtrfsCollector(tree(tmp_path), runner=runner(answers(shown))).collect().state.filesystems[0]
    assert (fs.missing, fs.unlisted_missing) == (2, 2)


def test_no_btrfs_mounted_is_no_data_and_runs_nothing(tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/mounts").write_text("/dev/md0 / ext4 rw 0 0\n")
    calls: list[list[str]] = []
    with pytest.raises(NoData, match="no btrfs"):
        BtrfsCollector(tmp_path, runner=runner(answers(), calls)).collect()
    assert calls == []


def test_btrfs_progs_not_installed_is_no_data(tmp_path: Path) -> None:
    with pytest.raises(NoData, match="not installed"):
        BtrfsCollector(tree(tmp_path), runner=runner({})).collect()


def test_a_failing_filesystem_show_says_what_btrfs_said(tmp_path: Path) -> None:
    err = fixture("btrfs", "rockstor-core__btrfs_fi_show__bad-tree-block_chunk-root-error.stderr")
    with pytest.raises(CollectorError, match="bad tree block"):
        BtrfsCollector(tree(tmp_path), runner=runner({SHOW: (1, b"", err)})).collect()


def test_a_scrub_status_that_fails_is_a_warning_and_loses_nothing_else(tmp_path: Path) -> None:
    err = fixture("btrfs", "rockstor-core__btrfs_scrub_status_-R__no-stats_legacy.stderr")
    res = BtrfsCollector(tree(tmp_path), runner=runner(answers(**{"scrub status -R /mnt/my pool": (1, b"", err)}))
                         ).collect()
    assert res.state.filesystems[0].scrub is None and len(res.state.filesystems[0].devices) == 3
    assert res.warnings == ["btrfs scrub status /mnt/my pool: WARNING: failed to read status: Connection reset by peer"]


def test_garbage_from_filesystem_show_is_a_parse_error_quoting_the_line(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="'totally not btrfs'"):
        BtrfsCollector(tree(tmp_path), runner=runner({SHOW: (0, b"totally not btrfs\n", b"")})).collect()
