"""UPS over NUT (against a real upsd + dummy-ups) and hwmon rails and fans (fixture trees)."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.base import CollectorError, NoData, ParseError
from collectors.home.hwmon.collector import HwmonCollector, parse_hwmon_dir
from collectors.home.hwmon.config import Fan, Rail
from collectors.home.nut.collector import NutCollector, parse_list_var
from collectors.home.nut.config import UpsdTarget
from collectors.snmpwire import SnmpTarget
from tests.peers import running
from tests.peers.nut import NutPeer


def test_list_var_replies_parse_with_escapes() -> None:
    lines = ["BEGIN LIST VAR ups", 'VAR ups ups.status "OB LB"', r'VAR ups ups.model "Back-UPS \"ES\" 700"',
             "END LIST VAR ups"]
    assert parse_list_var(lines, "ups") == {"ups.status": "OB LB", "ups.model": 'Back-UPS "ES" 700'}


@pytest.mark.parametrize(("lines", "message"), [
    (["ERR DRIVER-NOT-CONNECTED"], "Driver not connected"),
    (["ERR DATA-STALE"], "Data stale"),
    (["BEGIN LIST VAR ups", 'VAR ups x "1"'], "not framed"),
    (["BEGIN LIST VAR ups", "garbage", "END LIST VAR ups"], "unexpected line"),
    ([], "empty"),
])
def test_errors_and_broken_replies_are_clear(lines: list[str], message: str) -> None:
    with pytest.raises(CollectorError, match=message):
        parse_list_var(lines, "ups")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=8))
def test_no_reply_crashes_the_parser(lines: list[str]) -> None:
    try:
        parse_list_var(["BEGIN LIST VAR u", *lines, "END LIST VAR u"], "u")
    except (ParseError, CollectorError):
        pass


@pytest.fixture(scope="module")
def ups() -> Iterator[NutPeer]:
    with running(NutPeer, "nut") as peer:
        yield peer


def collect(peer: NutPeer) -> dict:  # type: ignore[type-arg]
    c = NutCollector([UpsdTarget(port=peer.port, username="monitor", password="monpass")], timeout=2)
    return c.collect().state.ups[0]


@pytest.mark.parametrize(("state", "flags", "on_battery", "low", "charge"), [
    ("OL", ["OL"], False, False, 100),
    ("OB", ["DISCHRG", "OB"], True, False, 64),
    ("OBLB", ["DISCHRG", "LB", "OB"], True, True, 8),
    ("OLCHRG", ["CHRG", "OL"], False, False, 47),
])
def test_the_real_ups_states_are_read(ups: NutPeer, state: str, flags: list[str], on_battery: bool, low: bool,
                                      charge: int) -> None:
    ups.set_state(state)
    got = collect(ups)
    assert (got.flags, got.on_battery, got.low_battery, got.charge) == (flags, on_battery, low, charge)


def test_time_on_battery_is_counted_and_metrics_are_named(ups: NutPeer) -> None:
    ups.set_state("OB")
    c = NutCollector([UpsdTarget(port=ups.port)], timeout=2)
    c.collect()
    time.sleep(1.1)
    r = c.collect()
    values = {s.metric: s.value for s in r.samples if "flag" not in dict(s.labels)}
    assert values["rackpulse_ups_on_battery"] == 1 and values["rackpulse_ups_on_battery_seconds"] >= 1
    assert values["rackpulse_ups_battery_voltage_volts"] == 12.3
    assert values["rackpulse_ups_battery_charge_ratio"] == 0.64
    assert values["rackpulse_ups_runtime_seconds"] == 840
    ups.set_state("OL")


def test_a_stale_driver_and_a_dead_driver_are_errors_with_nuts_words(ups: NutPeer) -> None:
    c = NutCollector([UpsdTarget(port=ups.port)], timeout=2)
    ups.freeze_driver(True)
    try:
        deadline = time.monotonic() + 20
        message = ""
        while time.monotonic() < deadline:
            try:
                c.collect()
            except CollectorError as exc:
                message = str(exc)
                break
            time.sleep(0.5)
        assert "Data stale" in message
    finally:
        ups.freeze_driver(False)
    ups.stop_driver()
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                c.collect()
            except CollectorError as exc:
                if "Driver not connected" in str(exc):
                    break
            time.sleep(0.3)
        else:
            pytest.fail("never saw 'Driver not connected'")
    finally:
        ups.start_driver()
        ups.wait_status("OL")


def test_upsd_down_is_a_connection_error() -> None:
    from tests.peers.nut import free_port

    with pytest.raises(CollectorError, match="cannot connect"):
        NutCollector([UpsdTarget(port=free_port())], timeout=1).collect()


# --- hwmon ------------------------------------------------------------------------------

def hwmon_tree(root: Path, fan2_rpm: int = 1100, in4_mv: int = 1100, cpu_temp: int = 52000) -> Path:
    """A Super-I/O chip with a divided 12 V input, two fans (one with a tach), and a k10temp chip."""
    chips = {
        "hwmon1": {"name": "nct6798", "in0_input": "1016", "in0_label": "Vcore", "in4_input": str(in4_mv),
                   "in4_min": "0", "in4_max": "0", "fan1_input": "1171", "fan1_min": "300",
                   "fan2_input": str(fan2_rpm), "fan2_min": "300", "fan2_alarm": "1" if fan2_rpm == 0 else "0",
                   "temp1_input": "38000", "temp1_label": "SYSTIN", "temp1_max": "80000", "pwm3": "200"},
        "hwmon2": {"name": "k10temp", "temp1_input": str(cpu_temp), "temp1_label": "Tctl"},
    }
    for d, files in chips.items():
        p = root / "sys/class/hwmon" / d
        p.mkdir(parents=True, exist_ok=True)
        for f, v in files.items():
            (p / f).write_text(v + "\n")
    return root


RAILS = [Rail(name="12V battery bus", chip="nct6798", sensor="in4", multiplier=12.0, min=11.4, max=14.6)]
FANS = [Fan(name="HBA fan", chip="nct6798", sensor="fan2"), Fan(name="case fan", chip="nct6798", sensor="fan1", min_rpm=500),
        Fan(name="PSU fan (no tach)", holds="k10temp/temp1", max_celsius=70)]


def test_rails_are_scaled_and_judged_against_their_limits(tmp_path: Path) -> None:
    r = HwmonCollector(hwmon_tree(tmp_path), RAILS, FANS).collect()
    rail = r.state.rails[0]
    assert rail.volts == pytest.approx(13.2) and rail.ok is True
    r = HwmonCollector(hwmon_tree(tmp_path, in4_mv=930), RAILS, FANS).collect()  # 11.16 V: sagging
    rail = r.state.rails[0]
    assert rail.volts == pytest.approx(11.16) and rail.ok is False
    assert {(s.metric, dict(s.labels).get("rail")): s.value for s in r.samples}[
        ("rackpulse_rail_in_range", "12V battery bus")] == 0


def test_a_stopped_fan_is_stalled_and_a_fan_without_tach_is_judged_by_its_temperature(tmp_path: Path) -> None:
    r = HwmonCollector(hwmon_tree(tmp_path, fan2_rpm=0, cpu_temp=78000), RAILS, FANS).collect()
    fans = {f.name: f for f in r.state.fans}
    assert fans["HBA fan"].stalled and fans["HBA fan"].why == "0 RPM"
    assert not fans["case fan"].stalled
    assert fans["PSU fan (no tach)"].stalled and "78.0 °C, over the 70 °C" in fans["PSU fan (no tach)"].why
    stalled = {dict(s.labels)["fan"]: s.value for s in r.samples if s.metric == "rackpulse_fan_stalled"}
    assert stalled == {"HBA fan": 1, "case fan": 0, "PSU fan (no tach)": 1}


def test_every_sensor_is_exported_with_its_chip(tmp_path: Path) -> None:
    r = HwmonCollector(hwmon_tree(tmp_path)).collect()
    temps = {(dict(s.labels)["chip"], dict(s.labels)["sensor"]): s.value for s in r.samples
             if s.metric == "rackpulse_hwmon_temperature_celsius"}
    assert temps == {("nct6798", "SYSTIN"): 38.0, ("k10temp", "Tctl"): 52.0}


def test_a_configured_rail_on_a_missing_sensor_is_a_warning(tmp_path: Path) -> None:
    r = HwmonCollector(hwmon_tree(tmp_path), [Rail(name="5V", chip="nct6798", sensor="in9")]).collect()
    assert r.warnings == ["rail '5V': no sensor in9 on chip nct6798"]


def test_a_host_without_hwmon_has_no_data(tmp_path: Path) -> None:
    with pytest.raises(NoData):
        HwmonCollector(tmp_path).collect()


def test_the_node_exporter_capture_parses() -> None:
    base = Path(__file__).parent.parent / "fixtures" / "hwmon" / "nct6779"
    files = {p.name: p.read_text() for p in base.iterdir()}
    sensors = {s.name: s for s in parse_hwmon_dir("nct6779", files)}
    assert sensors["fan2"].value is not None and sensors["in0"].value is not None


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["in0_input", "in0_min", "fan1_input", "fan1_label", "temp1_input",
                                        "temp1_alarm", "pwm1", "name", "curr1_input"]),
                       st.text(max_size=12), max_size=8))
def test_no_sysfs_content_crashes_the_parser(files: dict[str, str]) -> None:
    parse_hwmon_dir("x", files)


# --- UPS-MIB over SNMP -------------------------------------------------------------------

def test_ups_mib_values_map_to_nut_variables() -> None:
    from collectors.home.nut.upsmib import ups_mib_to_nut

    assert ups_mib_to_nut({"output_source": 5, "battery_status": 3, "charge_remaining": 42, "battery_voltage": 121,
                           "minutes_remaining": 7, "output_load": 30}) == {
        "ups.status": "OB DISCHRG LB", "battery.charge": "42", "battery.voltage": "12.1", "ups.load": "30",
        "battery.runtime": "420"}
    with pytest.raises(CollectorError, match="upsOutputSource"):
        ups_mib_to_nut({"output_source": None})


@pytest.mark.peers
def test_a_ups_with_a_network_card_is_read_through_ups_mib_from_a_real_snmpd() -> None:
    from tests.peers.snmpd import Snmpd

    mib = "\n".join(f"override .1.3.6.1.2.1.33.1.{oid} integer {v}" for oid, v in (
        ("2.1.0", 3), ("2.2.0", 125), ("2.3.0", 4), ("2.4.0", 18), ("2.5.0", 117), ("4.1.0", 5)))
    base = Path(tempfile.mkdtemp(prefix="rackpulse-upsmib-"))
    agent = Snmpd(base, extra=mib)
    try:
        agent.up()
        target = SnmpTarget(name="rack-ups", host="127.0.0.1", port=agent.port, community=agent.community, timeout=1, retries=0)
        r = NutCollector([], snmp_targets=[target]).collect()
    finally:
        agent.down()
        shutil.rmtree(base, ignore_errors=True)
    u = r.state.ups[0]
    assert (u.name, u.on_battery, u.low_battery, u.charge, u.battery_voltage, u.runtime) == (
        "rack-ups", True, True, 18, 11.7, 240)
