"""FreeIPMI's outputs read into typed records: captured from a real peer (tests/fixtures/ipmi/),
and the ways they go wrong (a truncated line, a state FreeIPMI never prints, a header of another
version) as one clear error that quotes the line."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from collectors.base import ParseError
from collectors.findings import Judging
from collectors.host.ipmi import findings
from collectors.host.ipmi.collector import IpmiCollector, conf_value, credentials
from collectors.host.ipmi.config import IpmiConfig
from collectors.host.ipmi.freeipmi import parse_dcmi_power, parse_sel, parse_sel_info, parse_sensors

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "ipmi"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_sensors_are_read_with_their_state_unit_thresholds_and_events() -> None:
    sensors = {s.name: s for s in parse_sensors(fixture("sensors-failing.csv"))}
    fan = sensors["Fan3"]
    assert (fan.type, fan.state, fan.reading, fan.unit) == ("Fan", "Critical", 0.0, "RPM")
    assert fan.thresholds == {"Lower C": 600.0, "Lower NC": 900.0}
    assert fan.events == ("At or Below (<=) Lower Critical Threshold",)
    psu = sensors["PSU2 Status"]
    assert (psu.reading, psu.unit, psu.thresholds) == (None, None, {})
    assert psu.events == ("Presence detected", "Power Supply Failure detected")
    assert sensors["CPU Temp"].events == ()  # 'OK' is no event


@pytest.mark.parametrize(("text", "quoted"), [
    ("ID,Name,Type,State,Reading,Units,Event\n4,Fan3,Fan,Critical,0.00\n", "4,Fan3,Fan,Critical,0.00"),
    ("ID,Name,Type,State,Reading,Units,Event\n4,Fan3,Fan,Sideways,0.00,RPM,'OK'\n", "Sideways"),
    ("ID,Name,Type,State,Reading,Units,Event\n4,Fan3,Fan,Nominal,fast,RPM,'OK'\n", "fast"),
    ("ID,Name,Type,State,Reading,Units,Event\n4,Fan3,Fan,Nominal,inf,RPM,'OK'\n", "inf"),
    ("ID,Name,Type,Reading,Units,Event\n4,Fan3,Fan,0.00,RPM,'OK'\n", "lacks State"),
])
def test_a_line_that_cannot_be_read_is_one_error_quoting_it(text: str, quoted: str) -> None:
    with pytest.raises(ParseError, match=quoted.replace("(", r"\(")):
        parse_sensors(text)


def test_the_sel_is_read_with_record_ids_states_and_directions() -> None:
    entries = parse_sel(fixture("sel.csv"))
    assert [e.id for e in entries] == list(range(1, 9))
    fully = entries[4]
    assert (fully.name, fully.asserted, fully.state) == ("PS Redundancy", False, "Nominal")
    ecc = entries[6]
    assert (ecc.type, ecc.state, ecc.time) == ("Memory", "Critical", None)  # PostInit: no clock yet
    assert ecc.event == "Uncorrectable memory error ; Event Data3 = 02h"


def test_a_sel_date_is_the_bmcs_utc_and_an_event_with_commas_stays_whole() -> None:
    (e,) = parse_sel("ID,Date,Time,Name,Type,State,Event Direction,Event\n"
                     "41,Nov-28-2026,09:12:44,DIMM_A1,Memory,Critical,Assertion Event,"
                     "Uncorrectable memory error ; Memory Module = A1, Channel 0\n")
    assert e.time == 1795857164.0 and e.event == "Uncorrectable memory error ; Memory Module = A1, Channel 0"


def test_the_sel_info_says_how_full_the_log_is() -> None:
    info = parse_sel_info(fixture("sel-info.txt"))
    assert (info.entries, info.free_bytes) == (8, 1472)
    assert info.used_ratio == pytest.approx(8 * 16 / 1600)  # sel_enable 100 entries of 16 bytes
    with pytest.raises(ParseError, match="Number of log entries"):
        parse_sel_info("SEL version : 1.5\n")


def test_dcmi_power_is_watts_and_none_while_the_bmc_measures_nothing() -> None:
    assert parse_dcmi_power(fixture("written__dcmi-power.txt")) == 332.0
    assert parse_dcmi_power(fixture("written__dcmi-power-not-available.txt")) is None
    with pytest.raises(ParseError, match="Current Power"):
        parse_dcmi_power("Power Measurement : Active\n")


def test_a_password_is_written_so_freeipmis_config_parser_reads_it_back_whole() -> None:
    # conffile(3) of FreeIPMI: "#" starts a comment unless escaped, double quotes group, and "\"
    # escapes only \, # and ".
    assert conf_value('pa ss#w\\o"rd') == '"pa ss\\#w\\\\o\\"rd"'
    assert credentials("monitor", "") == 'username "monitor"\n'  # no password line for none


STAND_IN = textwrap.dedent('''\
    import sys, time
    args = sys.argv[1:]
    host = args[args.index("--hostname") + 1].split(":")[0]
    if host == "192.0.2.1":  # a BMC whose ipmi-sensors hangs
        time.sleep(60)
    if host == "192.0.2.2":  # one that stops mid-line
        print("ID,Name,Type,State,Reading,Units,Event")
        print("4,Fan3,Fan,Crit", end="")
        sys.exit(0)
    if "--info" in args:
        print("Number of log entries : 0")
    elif "--get-system-power-statistics" in args:
        print("Current Power : 120 Watts")
    else:
        print("ID,Name,Type,State,Reading,Units,Event")
        print("2,CPU Temp,Temperature,Nominal,40.00,C,'OK'")
''')


def test_a_hung_bmc_and_a_truncated_answer_cost_their_own_bmc_only(tmp_path: Path) -> None:
    script = tmp_path / "freeipmi.py"
    script.write_text(STAND_IN)
    argv = [sys.executable, str(script)]
    bmcs = [{"name": n, "host": h} for n, h in (("hung", "192.0.2.1"), ("torn", "192.0.2.2"), ("fine", "192.0.2.3"))]
    cfg = IpmiConfig(local="off", bmcs=bmcs, ipmi_sensors=argv, ipmi_sel=argv, ipmi_dcmi=argv, command_timeout=2,
                     work_dir=tmp_path / "ipmi")
    state = IpmiCollector(cfg).collect().state
    assert state is not None
    views = {b.name: b for b in state.bmcs}
    assert views["fine"].up and views["fine"].power_watts == 120.0 and views["fine"].sensors[0].reading == 40.0
    assert not views["hung"].up and "timed out after 2s" in (views["hung"].error or "")
    assert not views["torn"].up and "4,Fan3,Fan,Crit" in (views["torn"].error or "")
    said = [(f.rule, f.subject) for f in findings.findings(state, Judging(host="nas"))]
    assert said == [("ipmi_unreachable", "hung"), ("ipmi_unreachable", "torn")]


def test_the_sudoers_entries_allow_exactly_what_the_collector_runs_on_the_local_bmc(tmp_path: Path) -> None:
    import re

    from collectors.base import CommandResult
    from collectors.host.ipmi import PRIVILEGES

    answers = {"--info": fixture("sel-info.txt"), "--get-system-power-statistics": fixture("written__dcmi-power.txt"),
               "--output-event-state": fixture("sel.csv"), "--output-sensor-state": fixture("sensors-failing.csv")}
    ran: list[list[str]] = []

    def runner(argv: list[str], timeout: float) -> CommandResult:
        ran.append(list(argv))
        out = next(text for flag, text in answers.items() if flag in argv)
        return CommandResult(tuple(argv), 0, out.encode(), b"")

    cfg = IpmiConfig(local="on", work_dir=tmp_path / "ipmi")
    collector = IpmiCollector(cfg, runner=runner)  # type: ignore[arg-type]
    collector.collect()
    collector.collect()  # the second run asks for the entries after the last one read: --display-range
    assert {a[0] for a in ran} == {"ipmi-sensors", "ipmi-sel", "ipmi-dcmi"}
    assert any(a for a in ran if any(x.startswith("--display-range=") for x in a))
    for argv in ran:
        allowed = [p.patterns(cfg) for p in PRIVILEGES if getattr(cfg, p.option)[0] == argv[0]]
        assert any(re.fullmatch(pattern, " ".join(argv[1:])) for args in allowed for pattern in args), argv


def test_a_servers_dcmi_draw_is_a_source_of_the_labs_energy_kept_across_a_restart(tmp_path: Path) -> None:
    from collectors.host.ipmi.state import IpmiState
    from collectors.state import dump, load

    script = tmp_path / "freeipmi.py"
    script.write_text(STAND_IN)
    argv = [sys.executable, str(script)]
    now = [1_000_000.0]
    cfg = IpmiConfig(local="off", bmcs=[{"name": "r720", "host": "192.0.2.3"}], ipmi_sensors=argv, ipmi_sel=argv,
                     ipmi_dcmi=argv, interval=60, work_dir=tmp_path / "ipmi")
    first = IpmiCollector(cfg, clock=lambda: now[0])
    first.collect()
    now[0] += 60
    result = first.collect()
    got = {(s.metric, dict(s.labels).get("source")): s.value for s in result.samples}
    assert got[("rackpulse_power_watts", "r720")] == 120.0
    assert got[("rackpulse_energy_joules_total", "r720")] == 120.0 * 60
    again = IpmiCollector(cfg, clock=lambda: now[0])
    again.restore(load(IpmiState, dump(result.state)))  # type: ignore[arg-type]
    now[0] += 3600  # back after an hour away: that hour is not guessed
    again.collect()
    now[0] += 60
    state = again.collect().state
    assert state is not None and state.bmcs[0].energy_joules == 120.0 * 60 * 2


# As FreeIPMI prints a reading past a non-critical threshold: the state word stays "Nominal" and
# only the event says it (ipmi-sensors(8); seen against OpenIPMI's ipmi_sim).
PAST_THRESHOLDS = """ID,Name,Type,State,Reading,Units,Lower NR,Lower C,Lower NC,Upper NC,Upper C,Upper NR,Event
1,CPU Temp,Temperature,Nominal,80.00,C,N/A,N/A,N/A,75.00,90.00,N/A,'At or Above (>=) Upper Non-Critical Threshold'
2,12V,Voltage,Nominal,11.44,V,N/A,11.00,11.63,12.40,12.60,N/A,'At or Below (<=) Lower Non-Critical Threshold'
3,Switch Temp,Temperature,Nominal,95.00,C,N/A,N/A,N/A,80.00,90.00,N/A,'At or Above (>=) Upper Critical Threshold'
4,FAN1,Fan,Nominal,5400.00,RPM,N/A,600.00,900.00,N/A,N/A,N/A,'OK'
5,FAN2,Fan,Nominal,nan,RPM,N/A,600.00,900.00,N/A,N/A,N/A,'OK'
"""


def _collected(text: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    from collectors.base import CommandResult

    answers = {"--info": fixture("sel-info.txt"), "--get-system-power-statistics": fixture("written__dcmi-power.txt"),
               "--output-event-state": fixture("sel.csv"), "--output-sensor-state": text}

    def runner(argv: list[str], timeout: float) -> CommandResult:
        return CommandResult(tuple(argv), 0, next(t for f, t in answers.items() if f in argv).encode(), b"")

    return IpmiCollector(IpmiConfig(local="on", work_dir=tmp_path / "ipmi"), runner=runner).collect()  # type: ignore[arg-type]


def test_a_reading_past_its_own_thresholds_warns_or_is_critical_though_freeipmi_says_nominal(tmp_path: Path) -> None:
    r = _collected(PAST_THRESHOLDS, tmp_path)
    states = {s.name: s.state for s in r.state.bmcs[0].sensors}
    assert states == {"CPU Temp": "Warning", "12V": "Warning", "Switch Temp": "Critical", "FAN1": "Nominal",
                      "FAN2": "Nominal"}
    rules = {(f.rule, f.subject) for f in findings.findings(r.state, Judging(host="h"))}
    assert {("ipmi_sensor_warning", "local/CPU Temp"), ("ipmi_sensor_warning", "local/12V"),
            ("ipmi_sensor_critical", "local/Switch Temp")} <= rules


def test_one_value_that_is_not_a_number_leaves_every_other_sensor_read_and_is_said(tmp_path: Path) -> None:
    r = _collected(PAST_THRESHOLDS, tmp_path)
    sensors = {s.name: s for s in r.state.bmcs[0].sensors}
    assert len(sensors) == 5 and sensors["FAN2"].reading is None and sensors["FAN1"].reading == 5400.0
    assert r.state.bmcs[0].up
    assert [w for w in r.warnings if "not a number" in w and "FAN2" in w]
    with pytest.raises(ParseError, match="FAN2"):
        parse_sensors(PAST_THRESHOLDS)  # without `bad`, as before: the line quoted
