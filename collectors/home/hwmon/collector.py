"""hwmon sensors (host_root/sys/class/hwmon/hwmon*): voltages, fans, temperatures, alarms;
with the user's names for rails and fans, divider scaling and limits.

Format source: the kernel's Documentation/hwmon/sysfs-interface.rst: ``in*_input`` in
millivolts, ``fan*_input`` in RPM, ``temp*_input`` in millidegrees Celsius, ``*_label``,
``*_min``, ``*_max``, ``*_crit``, ``*_alarm``; the chip's name in ``name``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from collectors.base import (
    Collector,
    CollectorError,
    CollectResult,
    Entity,
    MetricSpec,
    Runner,
    Sample,
)
from collectors.context import HostContext
from collectors.home.hwmon.config import Fan, Rail
from collectors.home.hwmon.state import FanView, HwmonState, RailView, SensorView
from collectors.hwmon_sysfs import SCALE, Sensor, parse_hwmon_dir, read_hwmon  # noqa: F401 - re-exported
from collectors.measure import measure


def judge_rail(rail: Rail, raw_volts: float | None) -> tuple[float | None, bool | None]:
    if raw_volts is None:
        return None, None
    v = raw_volts * rail.multiplier + rail.offset
    ok = (rail.min is None or v >= rail.min) and (rail.max is None or v <= rail.max)
    return v, ok


def judge_fan(fan: Fan, rpm: float | None, fan_min: float | None, held_temp: float | None) -> tuple[bool, str]:
    """(stalled, why). A tach fan is stalled at 0 RPM or under its minimum; a fan without a
    tach is judged by the temperature it should hold."""
    if fan.sensor:
        if rpm is None:
            return True, "no reading"
        floor = fan.min_rpm if fan.min_rpm is not None else fan_min
        if rpm <= 0:
            return True, "0 RPM"
        if floor and rpm < floor:
            return True, f"{rpm:.0f} RPM under its minimum {floor:.0f}"
        return False, f"{rpm:.0f} RPM"
    if held_temp is None or fan.max_celsius is None:
        return False, "no tach and no temperature to judge by"
    if held_temp > fan.max_celsius:
        return True, f"no tach; {fan.holds} is {measure(held_temp, '°C')}, over the {measure(fan.max_celsius, '°C')} it should hold"
    return False, f"no tach; {fan.holds} at {measure(held_temp, '°C')}"


class HwmonCollector(Collector):
    name: ClassVar[str] = "hwmon"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_rail_voltage_volts": MetricSpec("Named rail voltage after divider scaling."),
        "rackpulse_rail_in_range": MetricSpec("1 if the rail is within its configured limits.",
                                              states=("out of range", "in range")),
        "rackpulse_fan_speed_rpm": MetricSpec("Named fan speed."),
        "rackpulse_fan_stalled": MetricSpec("1 if the fan is stopped, too slow, or (no tach) its temperature is too high.",
                                            states=("turning", "stalled")),
        "rackpulse_hwmon_temperature_celsius": MetricSpec("Every hwmon temperature sensor."),
        "rackpulse_hwmon_voltage_volts": MetricSpec("Every hwmon voltage input, unscaled."),
        "rackpulse_hwmon_fan_rpm": MetricSpec("Every hwmon fan input."),
        "rackpulse_hwmon_alarm": MetricSpec("1 if the chip raises the sensor's alarm flag.",
                                            states=("quiet", "alarm")),
    }

    def __init__(self, host_root: Path, rails: Sequence[Rail] = (), fans: Sequence[Fan] = ()) -> None:
        self.host_root = host_root
        self.rails = list(rails)
        self.fans = list(fans)

    def collect(self) -> CollectResult:
        sensors = read_hwmon(self.host_root)
        by_key = {(s.chip, s.name): s for s in sensors}
        result = CollectResult()
        out = result.samples
        for s in sensors:
            lab = {"chip": s.chip, "sensor": s.label or s.name}
            metric = {"temp": "rackpulse_hwmon_temperature_celsius", "in": "rackpulse_hwmon_voltage_volts",
                      "fan": "rackpulse_hwmon_fan_rpm"}.get(s.kind)
            if metric and s.value is not None:
                out.append(Sample.of(metric, round(s.value, 4), **lab))
                # An entity per sensor gives it a page with its history (attributes that never change).
                result.entities.append(Entity("sensor", f"{s.chip}/{s.label or s.name}", {"metric": metric}))
            if "alarm" in s.attrs and s.kind in ("temp", "in", "fan"):
                out.append(Sample.of("rackpulse_hwmon_alarm", s.attrs["alarm"], kind=s.kind, **lab))
        rails: list[RailView] = []
        fans: list[FanView] = []
        for r in self.rails:
            found = by_key.get((r.chip, r.sensor))
            if found is None:
                result.warnings.append(f"rail {r.name!r}: no sensor {r.sensor} on chip {r.chip}")
                continue
            v, ok = judge_rail(r, found.value)
            if v is not None:
                out.append(Sample.of("rackpulse_rail_voltage_volts", round(v, 4), rail=r.name))
                out.append(Sample.of("rackpulse_rail_in_range", 1 if ok else 0, rail=r.name))
            rails.append(RailView(name=r.name, volts=v, ok=ok, min=r.min, max=r.max, source=f"{r.chip}/{r.sensor}"))
            result.entities.append(Entity("rail", r.name, {"in_range": ok}))
        for f in self.fans:
            found = by_key.get((f.chip or "", f.sensor)) if f.sensor else None
            if f.sensor and found is None:
                result.warnings.append(f"fan {f.name!r}: no sensor {f.sensor} on chip {f.chip}")
                continue
            held = None
            if f.holds:
                chip, _, sensor = f.holds.rpartition("/")
                t = by_key.get((chip, sensor))
                held = t.value if t else None
            stalled, why = judge_fan(f, found.value if found else None, found.attrs.get("min") if found else None,
                                     held)
            if found is not None and found.value is not None:
                out.append(Sample.of("rackpulse_fan_speed_rpm", found.value, fan=f.name))
            out.append(Sample.of("rackpulse_fan_stalled", 1 if stalled else 0, fan=f.name))
            fans.append(FanView(name=f.name, rpm=found.value if found else None, stalled=stalled, why=why))
            result.entities.append(Entity("fan", f.name, {"stalled": stalled}))
        if not sensors and (self.rails or self.fans):
            raise CollectorError("hwmon has no sensors, but rails or fans are configured")
        result.state = HwmonState(rails=rails, fans=fans,
                                  sensors=[SensorView(chip=s.chip, name=s.name, label=s.label, kind=s.kind,
                                                      value=s.value, attrs=dict(s.attrs)) for s in sensors])
        return result


# -- plug-in -----------------------------------------------------------------------------

def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.hwmon]."""
    return HwmonCollector(host.root, c.rails, c.fans)
