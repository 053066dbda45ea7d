"""The SMART collector with real subprocesses standing in for smartctl."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from collectors.base import CollectorError
from collectors.disks.smart.collector import SmartCollector
from collectors.location import BayRule
from collectors.state import dump
from tests.paths import FIXTURES
from tests.states import one

FIX = FIXTURES / "smartctl"

FAKE = """
import json, sys, time
plan = json.load(open(sys.argv[1]))
args = sys.argv[2:]
if "--scan" in args:
    print(json.dumps({"smartctl": {"exit_status": 0}, "devices": [{"name": d, "type": "sat"} for d in plan]}))
    sys.exit(0)
step = plan[args[-1]]
if isinstance(step, list):  # a sequence of answers, one per call
    state = step.pop(0) if len(step) > 1 else step[0]
    json.dump(plan, open(sys.argv[1], "w"))
    step = state
if step.get("sleep"):
    time.sleep(step["sleep"])
if "file" in step:
    sys.stdout.write(open(step["file"]).read())
if "json" in step:
    print(json.dumps(step["json"]))
sys.exit(step.get("exit", 0))
"""


def fake_smartctl(tmp_path: Path, plan: dict) -> list[str]:  # type: ignore[type-arg]
    script = tmp_path / "fake_smartctl.py"
    script.write_text(FAKE)
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    return [sys.executable, str(script), str(tmp_path / "plan.json")]


def test_it_reports_each_disk_with_health_and_metrics(tmp_path: Path) -> None:
    argv = fake_smartctl(tmp_path, {
        "/dev/sda": {"file": str(FIX / "scrutiny__smart-ata.json")},
        "/dev/sdb": {"file": str(FIX / "scrutiny__smart-fail2.json"), "exit": 216},
    })
    r = SmartCollector(tmp_path, argv, bays=[BayRule("bay 2", serial="MSK423Y20S3HBC")]).collect()
    disks = {d.serial: d for d in r.state.disks}
    assert disks["9RK1XXXX"].health_name == "ok"
    assert disks["MSK423Y20S3HBC"].health_name == "failing"
    assert disks["MSK423Y20S3HBC"].bay == "bay 2"
    got = {(s.metric, dict(s.labels).get("serial"), dict(s.labels).get("attribute")): s.value for s in r.samples}
    assert got[("rackpulse_disk_health", "MSK423Y20S3HBC", None)] == 2
    assert got[("rackpulse_disk_smart_healthy", "MSK423Y20S3HBC", None)] == 0
    assert got[("rackpulse_disk_smart_attribute_raw", "MSK423Y20S3HBC", "5")] == 1975
    assert got[("rackpulse_disk_temperature_celsius", "9RK1XXXX", None)] == 32
    assert got[("rackpulse_disk_smartctl_exit_status", "MSK423Y20S3HBC", None)] == 216


def test_one_hung_disk_does_not_stop_the_others(tmp_path: Path) -> None:
    argv = fake_smartctl(tmp_path, {
        "/dev/sda": {"file": str(FIX / "scrutiny__smart-ata.json")},
        "/dev/sdb": {"sleep": 60},
        "/dev/sdc": {"file": str(FIX / "scrutiny__smart-scsi2.json")},
    })
    r = SmartCollector(tmp_path, argv, command_timeout=1.0).collect()
    assert sorted(d.serial for d in r.state.disks) == ["9RK1XXXX", "Z4028VRY0000C810BZXB"]
    assert any("timed out" in w and "/dev/sdb" in w for w in r.warnings)


@pytest.mark.parametrize("parallel", [1, 3])
def test_disks_are_asked_at_most_parallel_at_a_time_and_reported_in_scan_order(parallel: int) -> None:
    import threading
    import time

    from collectors.base import CommandResult

    ata = (FIX / "scrutiny__smart-ata.json").read_text()
    scan = json.dumps({"smartctl": {"exit_status": 0}, "devices": [{"name": f"/dev/sd{c}"} for c in "hgfedcba"]})
    lock, running, most = threading.Lock(), [0], [0]

    def runner(argv: list[str], timeout: float) -> CommandResult:
        if "--scan" in argv:
            return CommandResult(tuple(argv), 0, scan.encode(), b"")
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.1)  # long enough for the other threads to start theirs
        with lock:
            running[0] -= 1
        return CommandResult(tuple(argv), 0, ata.replace("9RK1XXXX", f"SER-{argv[-1][-1]}").encode(), b"")

    r = SmartCollector(Path("/nonexistent"), ["smartctl"], runner=runner, parallel=parallel).collect()
    assert [d.device for d in r.state.disks] == [f"sd{c}" for c in "hgfedcba"]
    assert [d.serial for d in r.state.disks] == [f"SER-{c}" for c in "hgfedcba"]
    assert most[0] == parallel


def test_an_error_json_for_one_disk_is_a_warning(tmp_path: Path) -> None:
    argv = fake_smartctl(tmp_path, {
        "/dev/sda": {"file": str(FIX / "scrutiny__smart-fail.json"), "exit": 2},
        "/dev/sdb": {"file": str(FIX / "scrutiny__smart-ata.json")},
    })
    r = SmartCollector(tmp_path, argv).collect()
    assert [d.serial for d in r.state.disks] == ["9RK1XXXX"]
    assert any("Open failed" in w for w in r.warnings)


def test_when_every_disk_fails_the_collector_fails_with_the_reasons(tmp_path: Path) -> None:
    argv = fake_smartctl(tmp_path, {"/dev/sda": {"exit": 2}, "/dev/sdb": {"json": {"nope": 1}}})
    with pytest.raises(CollectorError, match=r"/dev/sda: no output \(exit 2\).*no 'smartctl' object"):
        SmartCollector(tmp_path, argv).collect()


def test_a_sleeping_disk_keeps_its_last_values_and_is_not_woken(tmp_path: Path) -> None:
    standby = {"smartctl": {"exit_status": 2, "messages": [{"string": "Device is in STANDBY mode, exit(2)"}]},
               "device": {"name": "/dev/sda", "type": "sat", "protocol": "ATA"}}
    argv = fake_smartctl(tmp_path, {"/dev/sda": [{"file": str(FIX / "scrutiny__smart-ata.json")},
                                                {"json": standby, "exit": 2}]})
    c = SmartCollector(tmp_path, argv, devices=["/dev/sda"])
    first = c.collect().state.disks[0]
    second = c.collect().state.disks[0]
    assert second.standby and second.temperature == first.temperature == 32


def test_the_nocheck_flag_is_passed_so_sleeping_disks_stay_asleep(tmp_path: Path) -> None:
    seen: list[list[str]] = []

    def runner(argv, timeout):  # type: ignore[no-untyped-def]
        from collectors.base import CommandResult
        seen.append(list(argv))
        return CommandResult(tuple(argv), 0, (FIX / "scrutiny__smart-ata.json").read_bytes(), b"")

    SmartCollector(tmp_path, ["smartctl"], devices=["/dev/sda"], runner=runner).collect()
    assert seen == [["smartctl", "--json", "--all", "--nocheck=standby", "/dev/sda"]]


def with_realloc(n: int) -> dict:  # type: ignore[type-arg]
    """A real smartctl answer with attribute 5 (reallocated sectors) at n."""
    doc = json.loads((FIX / "scrutiny__smart-ata.json").read_text())
    for row in doc["ata_smart_attributes"]["table"]:
        if row["id"] == 5:
            row["raw"] = {"value": n, "string": str(n)}  # smartctl prints both; the string is what it decoded
    return doc


def test_a_rise_in_reallocated_sectors_warns_until_accepted_and_again_when_it_rises(tmp_path: Path) -> None:
    answers = [{"json": with_realloc(n)} for n in (0, 8, 8, 9, 9)]
    argv = fake_smartctl(tmp_path, {"/dev/sda": answers})
    c = SmartCollector(tmp_path, argv, devices=["/dev/sda"])
    assert c.collect().state.disks[0].health_name == "ok"
    d = c.collect().state.disks[0]
    assert d.health_name == "warning"
    assert d.reasons == ["8 reallocated sectors, up from 0 (SMART 5)"]
    c.accepted = {"9RK1XXXX": {"5": 8}}  # what [[disks.accept]] in the config does
    assert c.collect().state.disks[0].health_name == "ok"
    d = c.collect().state.disks[0]
    assert d.reasons == ["9 reallocated sectors, up from 8, 8 accepted (SMART 5)"]
    assert c.collect().state.disks[0].reasons == ["9 reallocated sectors, 8 accepted (SMART 5)"]


def test_a_usb_bridge_that_hides_the_serial_is_keyed_by_port(tmp_path: Path) -> None:
    doc = json.loads((FIX / "scrutiny__smart-ata.json").read_text())
    doc.pop("serial_number")
    doc.pop("wwn")
    by_path = tmp_path / "dev/disk/by-path"
    by_path.mkdir(parents=True)
    (by_path / "pci-0000:00:14.0-usb-0:2:1.0-scsi-0:0:0:0").symlink_to("../../sdb")
    doc["device"]["name"] = "/dev/sdb"
    argv = fake_smartctl(tmp_path, {"/dev/sdb": {"json": doc}})
    d = SmartCollector(tmp_path, argv).collect().state.disks[0]
    assert d.serial_hidden and d.key == "path:pci-0000:00:14.0-usb-0:2:1.0-scsi-0:0:0:0"


def test_a_rise_across_a_restart_is_noticed_from_the_stored_state(tmp_path: Path) -> None:
    """The state stored before a restart is the collector's memory: a count that rose while
    rackpulse was down is a rise (restoring nothing, or restoring as if nothing was stored, hid it)."""
    for sub in "abc":
        (tmp_path / sub).mkdir()
    before = SmartCollector(tmp_path, fake_smartctl(tmp_path / "a", {"/dev/sda": [{"json": with_realloc(0)}]}),
                            devices=["/dev/sda"])
    state = before.collect().state
    assert state is not None
    stored = json.loads(json.dumps(dump(state)))  # what the database keeps, read back as the plug-in reads it
    after = SmartCollector(tmp_path, fake_smartctl(tmp_path / "b", {"/dev/sda": [{"json": with_realloc(8)}]}),
                           devices=["/dev/sda"])
    after.restore(one("smart", stored))
    d = after.collect().state.disks[0]
    assert "8 reallocated sectors, up from 0 (SMART 5)" in d.reasons
    fresh = SmartCollector(tmp_path, fake_smartctl(tmp_path / "c", {"/dev/sda": [{"json": with_realloc(8)}]}),
                           devices=["/dev/sda"])
    assert not any("rose" in r for r in fresh.collect().state.disks[0].reasons)  # nothing stored: no rise


def test_a_machine_whose_scan_finds_no_disk_has_no_smart_data_not_a_failed_run(tmp_path: Path) -> None:
    """smartctl 7.3 on a VM: `--scan --json` exits 0 without a "devices" key."""
    from collectors.base import CommandResult, NoData
    from tests.collectors.disks.smart.test_smart_judge import SCAN_NO_DEVICES

    def runner(argv, timeout):  # type: ignore[no-untyped-def]
        return CommandResult(tuple(argv), 0, SCAN_NO_DEVICES.encode(), b"")

    with pytest.raises(NoData, match="found no disks"):
        SmartCollector(tmp_path, ["smartctl"], runner=runner).collect()


def test_a_host_without_smartctl_has_nothing_to_read_but_named_disks_without_it_fail(tmp_path: Path) -> None:
    """The default config enables smart; a host with no smartmontools has no SMART source (as
    ZFS without zpool), while disks the user named and cannot be read are a failed run."""
    from collectors.base import NoData, run_command

    missing = [str(tmp_path / "no-such-smartctl")]
    with pytest.raises(NoData, match="smartmontools not installed"):
        SmartCollector(tmp_path, missing, runner=run_command).collect()
    r = SmartCollector(tmp_path, missing, devices=["/dev/sda"], runner=run_command)
    with pytest.raises(CollectorError) as err:
        r.collect()
    assert not isinstance(err.value, NoData)
