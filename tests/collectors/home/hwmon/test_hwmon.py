"""hwmon rails and fans, from fixture trees and node_exporter's real capture."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.base import NoData
from collectors.home.hwmon.collector import HwmonCollector, parse_hwmon_dir
from collectors.home.hwmon.config import Fan, Rail
from tests.paths import FIXTURES


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
    assert fans["PSU fan (no tach)"].stalled and "78 °C, over the 70 °C" in fans["PSU fan (no tach)"].why
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
    base = FIXTURES / "hwmon" / "nct6779"
    files = {p.name: p.read_text() for p in base.iterdir()}
    sensors = {s.name: s for s in parse_hwmon_dir("nct6779", files)}
    assert sensors["fan2"].value is not None and sensors["in0"].value is not None


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["in0_input", "in0_min", "fan1_input", "fan1_label", "temp1_input",
                                        "temp1_alarm", "pwm1", "name", "curr1_input"]),
                       st.text(max_size=12), max_size=8))
def test_no_sysfs_content_crashes_the_parser(files: dict[str, str]) -> None:
    parse_hwmon_dir("x", files)

