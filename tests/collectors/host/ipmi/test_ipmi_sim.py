"""The IPMI plug-in against a real BMC: OpenIPMI's `ipmi_sim` over IPMI 2.0 on loopback, read
with FreeIPMI as an installed rackpulse reads a server's BMC (tests/peers/ipmi.py)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from collectors.base import CommandResult, run_command
from collectors.findings import Judging
from collectors.host.ipmi import findings
from collectors.host.ipmi.collector import IpmiCollector
from collectors.host.ipmi.config import IpmiConfig
from collectors.host.ipmi.state import IpmiState
from collectors.state import dump, load
from tests.peers import running
from tests.peers.ipmi import CORRECTABLE_ECC, PASSWORD, UNCORRECTABLE_ECC, USER, IpmiSim, free_udp_port


@pytest.fixture(scope="module")
def bmc() -> Iterator[IpmiSim]:
    with running(IpmiSim, "ipmi") as sim:
        yield sim


def config(sim: IpmiSim, tmp: Path, **changes: object) -> IpmiConfig:
    bmc = {"name": "r720", "host": "127.0.0.2", "port": sim.port, "user": USER,
           "password_file": str(sim.password_file), "workarounds": ["opensesspriv"]}
    bmc.update(changes.pop("bmc", {}))  # type: ignore[arg-type]
    return IpmiConfig(**{"local": "off", "bmcs": [bmc], "work_dir": tmp / "ipmi", "command_timeout": 20, **changes})


class Recorder:
    """run_command, remembering every argv it ran: what `ps` would have shown."""

    def __init__(self) -> None:
        self.argvs: list[list[str]] = []

    def __call__(self, argv: Sequence[str], timeout: float) -> CommandResult:
        self.argvs.append(list(argv))
        return run_command(argv, timeout)


def said(state: IpmiState | None) -> list[tuple[str | None, str]]:
    assert state is not None
    return [(f.rule, f.text) for f in findings.findings(state, Judging(host="nas"))]


def test_sensors_their_readings_and_thresholds_come_from_the_bmc(bmc: IpmiSim, tmp_path: Path) -> None:
    result = IpmiCollector(config(bmc, tmp_path)).collect()
    assert result.state is not None
    (view,) = result.state.bmcs
    assert view.up and view.error is None
    sensors = {s.name: s for s in view.sensors}
    assert sensors["CPU Temp"].reading == 40 and sensors["CPU Temp"].unit == "C"
    assert sensors["CPU Temp"].thresholds == {"Upper NC": 75, "Upper C": 90, "Upper NR": 100}
    assert sensors["Fan1"].reading == 4800 and sensors["Fan1"].thresholds == {"Lower C": 600, "Lower NC": 900}
    assert sensors["PSU1 Status"].type == "Power Supply" and sensors["PSU1 Status"].events == ["Presence detected"]
    assert {s.state for s in view.sensors} == {"Nominal"}
    assert view.power_watts is None  # the simulator has no DCMI: no power, and no error either
    assert said(result.state) == []
    samples = {(s.metric, dict(s.labels).get("sensor")): s.value for s in result.samples}
    assert samples[("rackpulse_ipmi_fan_speed_rpm", "Fan1")] == 4800
    assert samples[("rackpulse_ipmi_temperature_celsius", "CPU Temp")] == 40
    assert samples[("rackpulse_ipmi_sensor_state", "PSU2 Status")] == 0
    assert samples[("rackpulse_ipmi_up", None)] == 1


def test_a_fan_at_0_rpm_raises_ipmi_sensor_critical_naming_it_and_clears_when_it_spins_again(
        bmc: IpmiSim, tmp_path: Path) -> None:
    collector = IpmiCollector(config(bmc, tmp_path))
    bmc.set_fan3(0)
    try:
        assert ("ipmi_sensor_critical", "r720: Fan3: 0 RPM below 600") in said(collector.collect().state)
    finally:
        bmc.set_fan3(82)
    assert [r for r, _ in said(collector.collect().state) if r == "ipmi_sensor_critical"] == []


def test_a_failed_power_supply_and_the_redundancy_it_cost_are_said_in_words(bmc: IpmiSim, tmp_path: Path) -> None:
    collector = IpmiCollector(config(bmc, tmp_path))
    bmc.psu2_fails(True)
    bmc.redundancy(lost=True)
    try:
        found = said(collector.collect().state)
        assert ("ipmi_sensor_critical", "r720: PSU2 Status: power supply failure detected") in found
        assert ("ipmi_psu_redundancy_lost", "r720: PS Redundancy: redundancy lost") in found
    finally:
        bmc.psu2_fails(False)
        bmc.redundancy(lost=False)
    assert said(collector.collect().state) == []


def test_a_sel_entry_raises_ipmi_sel_critical_once_and_not_again_after_a_restart(bmc: IpmiSim, tmp_path: Path) -> None:
    clock = [1_000_000.0]
    cfg = config(bmc, tmp_path, sel_hold=3600)
    first = IpmiCollector(cfg, clock=lambda: clock[0])
    before = first.collect().state
    assert [r for r, _ in said(before) if r and r.startswith("ipmi_sel")] == []  # old entries are not news
    bmc.sel_add(UNCORRECTABLE_ECC)
    bmc.sel_add(CORRECTABLE_ECC)
    state = first.collect().state
    assert state is not None
    sel = [(r, t) for r, t in said(state) if r and r.startswith("ipmi_sel")]
    assert sel == [("ipmi_sel_critical", "r720: event log: Sensor #32: uncorrectable memory error (memory module 2)"),
                   ("ipmi_sel_warning", "r720: event log: Sensor #32: correctable memory error (memory module 1)")]
    subjects = [f.subject for f in findings.findings(state, Judging(host="nas")) if f.rule == "ipmi_sel_critical"]

    # A restart: the stored state comes back through JSON, as the database gives it.
    again = IpmiCollector(cfg, clock=lambda: clock[0])
    again.restore(load(IpmiState, dump(state)))
    clock[0] += 60
    after = again.collect().state
    assert [f.subject for f in findings.findings(after, Judging(host="nas")) if f.rule == "ipmi_sel_critical"] \
        == subjects  # the same one alert, not a second: nothing was read twice
    assert after is not None and len(after.bmcs[0].held) == 2

    clock[0] += 3600  # past sel_hold: the news is old
    assert [r for r, _ in said(again.collect().state) if r and r.startswith("ipmi_sel")] == []


def test_a_wrong_password_is_one_clear_error_and_the_password_is_in_no_log_line_or_command_line(
        bmc: IpmiSim, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    wrong = tmp_path / "wrong"
    wrong.write_text("not-the-password\n")
    runner = Recorder()
    caplog.set_level(logging.DEBUG)
    result = IpmiCollector(config(bmc, tmp_path, bmc={"password_file": str(wrong)}), runner=runner).collect()
    assert result.state is not None
    (view,) = result.state.bmcs
    assert not view.up and view.error is not None and "password" in view.error.lower()
    assert said(result.state) == [("ipmi_unreachable", f"BMC r720 unreachable: {view.error}")]
    # Neither password (the right one, the wrong one) is on any command line, or in any log line.
    right = IpmiCollector(config(bmc, tmp_path), runner=runner)
    right.collect()
    for argv in runner.argvs:
        assert not any(PASSWORD in a or "not-the-password" in a for a in argv)
    assert all(PASSWORD not in r.getMessage() and "not-the-password" not in r.getMessage() for r in caplog.records)
    # The config file that carried it lived for the call only, in a directory only rackpulse enters.
    assert list((tmp_path / "ipmi").glob("credentials-*")) == []
    assert (tmp_path / "ipmi").stat().st_mode & 0o077 == 0


def test_credentials_an_interrupted_run_left_behind_are_removed_by_the_next(bmc: IpmiSim, tmp_path: Path) -> None:
    work = tmp_path / "ipmi"
    work.mkdir(mode=0o700)
    killed = work / "credentials-killed.conf"
    killed.write_text(f"password {PASSWORD}\n")  # a run killed mid-call, an hour ago
    os.utime(killed, (time.time() - 3600, time.time() - 3600))
    # another collector's call on the same work_dir (the demo's hosts share one), in progress
    (work / "credentials-in-use.conf").write_text(f"password {PASSWORD}\n")
    assert IpmiCollector(config(bmc, tmp_path)).collect().state is not None
    assert [p.name for p in work.glob("credentials-*")] == ["credentials-in-use.conf"]


def test_a_bmc_that_does_not_answer_is_ipmi_unreachable_and_keeps_its_place_in_the_log(
        bmc: IpmiSim, tmp_path: Path) -> None:
    collector = IpmiCollector(config(bmc, tmp_path))
    read = collector.collect().state
    assert read is not None and read.bmcs[0].sel_last_id is not None
    collector.cfg = config(bmc, tmp_path, command_timeout=5, bmc={"port": free_udp_port()})  # nothing answers there
    down = collector.collect().state
    assert down is not None
    (view,) = down.bmcs
    assert not view.up and [r for r, _ in said(down)] == ["ipmi_unreachable"]
    assert view.sel_last_id == read.bmcs[0].sel_last_id  # when it answers again, nothing is read twice


def test_the_event_log_filling_up_is_a_warning_with_its_fill(bmc: IpmiSim, tmp_path: Path) -> None:
    state = IpmiCollector(config(bmc, tmp_path, sel_full_ratio=0.01)).collect().state
    assert state is not None
    view = state.bmcs[0]
    assert view.sel_entries and view.sel_used_ratio == pytest.approx(view.sel_entries / 100)  # sel_enable 100 entries
    assert ("ipmi_sel_full", f"r720: system event log {view.sel_used_ratio:.0%} full: a full log drops new events "
            "(read it, then clear it: ipmi-sel --clear)") in said(state)


def test_the_password_file_is_read_by_no_one_else(bmc: IpmiSim) -> None:
    assert os.stat(bmc.password_file).st_mode & 0o077 == 0
