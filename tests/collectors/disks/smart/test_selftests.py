"""The self-test log of each protocol: ATA (captures), NVMe and SCSI (written from smartmontools' sources)."""

from __future__ import annotations

from collectors.disks.smart.selftests import latest_finished
from collectors.disks.smart.smartctl import parse_smartctl_json
from tests.paths import FIXTURES

DIR = FIXTURES / "smartctl"


def log_of(name: str):  # type: ignore[no-untyped-def]
    return parse_smartctl_json((DIR / name).read_text()).selftests


def test_an_ata_log_keeps_each_run_with_its_hours_and_a_read_failure_with_its_block() -> None:
    t = log_of("scrutiny__smart-fail2.json")
    assert [(r.type, r.passed, r.hours) for r in t.log[:3]] == [("short", True, 42), ("short", True, 18),
                                                                ("long", False, 4)]
    assert (t.log[2].result, t.log[2].lba) == ("Completed: read failure", 104870168)
    assert latest_finished(t).passed is True  # type: ignore[union-attr]  # the failure is old: two passes since
    assert t.minutes == {"short": 1, "long": 79}


def test_an_ata_test_in_progress_says_how_far_it_is() -> None:
    t = log_of("scrutiny__smart-ata.json")
    assert (t.running, t.percent_done) == ("test", 90)


def test_an_aborted_test_says_nothing_of_the_disk() -> None:
    t = log_of("scrutiny__smart-megaraid1.json")
    assert (t.log[0].result, t.log[0].passed) == ("Aborted by host", None)
    assert latest_finished(t) is t.log[1]


def test_an_nvme_log_reads_its_running_test_and_a_failed_segment() -> None:
    t = log_of("written__nvme-selftest-failed.json")
    assert (t.running, t.percent_done) == ("short", 40)
    assert [(r.type, r.passed, r.hours, r.lba) for r in t.log] == [
        ("long", False, 1480, 52367816), ("short", True, 1456, None), ("short", None, 1300, None)]


def test_a_scsi_log_reads_failed_segments_their_block_and_the_long_tests_duration() -> None:
    t = log_of("written__scsi-selftest-failed.json")
    assert [(r.type, r.result, r.passed, r.hours, r.lba) for r in t.log] == [
        ("long", "Failed in segment", False, 5670, 1172543232), ("short", "Completed", True, 5600, None)]
    assert t.minutes == {"long": 105}


def test_a_disk_without_a_log_has_none() -> None:
    t = log_of("smartctl_exporter__WDC_WD20EFRX-68EUZN0_17.json")
    assert (t.running, t.log) == (None, [])
