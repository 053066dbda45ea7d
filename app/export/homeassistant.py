"""What Home Assistant is told: for each host, one HA device, and an entity per heat-pump
temperature and energy counter, UPS, rail, fan, array, disk and pool, with the device_class,
state_class and unit that put energy in HA's energy dashboard and temperatures in its graphs.
Pure: a host's samples in, entities (their discovery config and state) out."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from collectors.base import Sample


@dataclass(frozen=True)
class Kind:
    component: str  # sensor | binary_sensor
    name: str  # "Heat pump {sensor}": labels fill it
    device_class: str | None = None
    state_class: str | None = None
    unit: str | None = None
    value: Callable[[float], Any] = lambda v: round(v, 3)
    icon: str | None = None


def _on(v: float) -> str:
    return "ON" if v else "OFF"


def _off(v: float) -> str:  # a "healthy" metric as HA's "problem" class: on when not healthy
    return "OFF" if v else "ON"


HEALTH = {0: "ok", 1: "warning", 2: "failing"}
KINDS: dict[str, Kind] = {
    "rackpulse_heatpump_temperature_celsius": Kind("sensor", "Heat pump {sensor}", "temperature", "measurement", "°C",
                                                   lambda v: round(v, 1)),
    # HA's energy dashboard takes energy sensors with state_class total_increasing in kWh or Wh.
    "rackpulse_heatpump_heat_joules_total": Kind("sensor", "Heat pump heat {use}", "energy", "total_increasing", "kWh",
                                                 lambda v: round(v / 3.6e6, 3)),
    "rackpulse_heatpump_electricity_joules_total": Kind("sensor", "Heat pump electricity {use}", "energy",
                                                        "total_increasing", "kWh", lambda v: round(v / 3.6e6, 3)),
    # The booster's (NHZ) heat on its own, so the energy dashboard shows what the heat pump did not make.
    "rackpulse_heatpump_backup_heat_joules_total": Kind("sensor", "Heat pump booster heat {use}", "energy",
                                                        "total_increasing", "kWh", lambda v: round(v / 3.6e6, 3)),
    # Every source of the lab's energy (a smart plug ...): its draw, and its energy for the dashboard.
    "rackpulse_power_watts": Kind("sensor", "Power {source}", "power", "measurement", "W", lambda v: round(v, 1)),
    "rackpulse_energy_joules_total": Kind("sensor", "Energy {source}", "energy", "total_increasing", "kWh",
                                          lambda v: round(v / 3.6e6, 3)),
    "rackpulse_heatpump_cop": Kind("sensor", "Heat pump COP {period}", None, "measurement", None,
                                   lambda v: round(v, 2), icon="mdi:heat-pump"),
    "rackpulse_heatpump_compressor_starts_last_hour": Kind("sensor", "Heat pump compressor starts last hour", None,
                                                           "measurement", None, lambda v: round(v)),
    "rackpulse_heatpump_compressor_running": Kind("binary_sensor", "Heat pump compressor", "running", value=_on),
    "rackpulse_heatpump_fault": Kind("binary_sensor", "Heat pump fault", "problem", value=_on),
    "rackpulse_ups_battery_charge_ratio": Kind("sensor", "UPS {ups} battery", "battery", "measurement", "%",
                                               lambda v: round(v * 100)),
    "rackpulse_ups_runtime_seconds": Kind("sensor", "UPS {ups} runtime", "duration", "measurement", "s",
                                          lambda v: round(v)),
    "rackpulse_ups_battery_voltage_volts": Kind("sensor", "UPS {ups} battery voltage", "voltage", "measurement", "V"),
    "rackpulse_ups_input_voltage_volts": Kind("sensor", "UPS {ups} input voltage", "voltage", "measurement", "V"),
    "rackpulse_ups_on_battery": Kind("binary_sensor", "UPS {ups} on battery", None, value=_on,
                                     icon="mdi:battery-alert"),
    "rackpulse_rail_voltage_volts": Kind("sensor", "{rail}", "voltage", "measurement", "V"),
    "rackpulse_fan_speed_rpm": Kind("sensor", "{fan}", None, "measurement", "RPM", lambda v: round(v),
                                    icon="mdi:fan"),
    "rackpulse_md_array_degraded": Kind("binary_sensor", "Array {array} degraded", "problem", value=_on),
    "rackpulse_disk_health": Kind("sensor", "Disk {bay_or_serial} health", "enum", None, None,
                                  lambda v: HEALTH.get(int(v), "unknown"), icon="mdi:harddisk"),
    "rackpulse_disk_temperature_celsius": Kind("sensor", "Disk {bay_or_serial} temperature", "temperature",
                                               "measurement", "°C", lambda v: round(v)),
    "rackpulse_zfs_pool_healthy": Kind("binary_sensor", "ZFS pool {pool} problem", "problem", value=_off),
    "rackpulse_megaraid_vd_optimal": Kind("binary_sensor", "RAID {controller} VD {vd} problem", "problem",
                                          value=_off),
    "rackpulse_ceph_health_status": Kind("sensor", "Ceph health", "enum", None, None,
                                         lambda v: {0: "HEALTH_OK", 1: "HEALTH_WARN", 2: "HEALTH_ERR"}.get(int(v), "?"),
                                         icon="mdi:database"),
}


@dataclass(frozen=True)
class Entity:
    component: str
    object_id: str  # unique within the host: heatpump_temperature_outside
    config: dict[str, object]  # the discovery payload, without the topics (the publisher adds them)
    state: str


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "x"


def entities(host: str, samples: Iterable[Sample], bays: dict[str, str] | None = None) -> list[Entity]:
    """The host's entities from its latest samples. `bays` maps a disk's serial to its bay label
    (a disk is named by where it sits when that is known)."""
    out: dict[str, Entity] = {}
    for s in samples:
        kind = KINDS.get(s.metric)
        if kind is None:
            continue
        labels = dict(s.labels)
        labels["bay_or_serial"] = (bays or {}).get(labels.get("serial", ""), "") or labels.get("serial", "")
        try:
            name = kind.name.format(**labels)
        except KeyError:
            continue
        object_id = slug(s.metric.removeprefix("rackpulse_") + "_" + "_".join(
            v for k, v in sorted(labels.items()) if k not in ("host", "bay_or_serial")))
        config: dict[str, object] = {"name": name, "unique_id": f"rackpulse_{slug(host)}_{object_id}",
                                  "object_id": f"{slug(host)}_{object_id}"}
        for key, value in (("device_class", kind.device_class), ("state_class", kind.state_class),
                           ("unit_of_measurement", kind.unit), ("icon", kind.icon)):
            if value is not None:
                config[key] = value
        if kind.device_class == "enum" and s.metric == "rackpulse_disk_health":
            config["options"] = list(HEALTH.values())
        out[object_id] = Entity(kind.component, object_id, config, str(kind.value(s.value)))
    return list(out.values())
