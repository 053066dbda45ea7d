"""What smart plugs publish over MQTT, read as watts now and the plug's own energy counter in
joules. Pure functions from a payload to a `Reading`; an error quotes the payload.

Formats:
- Shelly Gen2 (Plus Plug S, Plus 1PM ...), `<prefix>/status/switch:<id>`, the Switch component's
  status (Shelly's Gen2 API docs, "Switch" component): `apower` in W, `aenergy.total` in Wh.
      {"id":0,"source":"timer","output":true,"apower":8.9,"voltage":237.5,"current":0.068,
       "aenergy":{"total":6.532,"by_minute":[45.947,47.576,49.013],"minute_ts":1654511972}}
- Tasmota, `tele/<topic>/SENSOR` every TelePeriod (Tasmota's energy driver, xdrv_03_energy):
  `ENERGY.Power` in W (a list on a multi-channel device: their sum), `ENERGY.Total` in kWh.
      {"Time":"2026-11-28T10:00:00","ENERGY":{"TotalStartTime":"2026-01-02T10:11:12",
       "Total":12.345,"Yesterday":0.512,"Today":0.231,"Power":45,"Voltage":231,"Current":0.301}}
- Anything else: a topic and the JSON paths of its watts and its counter ("ENERGY.Power"),
  with the counter's unit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from collectors import finite
from collectors.base import ParseError

JOULES = {"Wh": 3600.0, "kWh": 3.6e6, "J": 1.0}


@dataclass(frozen=True)
class Reading:
    watts: float | None
    counter_joules: float | None  # the plug's own energy counter; None when it has none


def _json(payload: bytes) -> Any:
    try:
        return finite.loads(payload)  # no deeper than finite.MAX_DEPTH: a hostile payload is a bad read
    except (ValueError, UnicodeDecodeError):
        raise ParseError(f"not JSON: {payload[:200]!r}") from None


def dig(obj: Any, path: str) -> Any:
    """`obj` at a dotted path ("aenergy.total", "ENERGY.Power.0"); None where it is not."""
    for part in path.split("."):
        if isinstance(obj, dict):
            obj = obj.get(part)
        elif isinstance(obj, list) and part.isdigit() and int(part) < len(obj):
            obj = obj[int(part)]
        else:
            return None
    return obj


def _number(value: Any, what: str, payload: bytes) -> float | None:
    if value is None:
        return None
    if isinstance(value, list):  # Tasmota's multi-channel Power: [12, 30] is 42 W
        parts = [_number(v, what, payload) for v in value]
        return sum(p for p in parts if p is not None) if parts else None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ParseError(f"{what} is not a number in: {payload[:200]!r}")
    try:
        number = finite.parse_float(str(value))
    except ValueError:
        raise ParseError(f"{what} {value!r} is not a finite number in: {payload[:200]!r}") from None
    if number < 0 and what != "power":
        raise ParseError(f"{what} {value!r} is negative in: {payload[:200]!r}")
    return number


def parse_paths(payload: bytes, power_path: str | None, energy_path: str | None, energy_unit: str) -> Reading:
    data = _json(payload)
    if not isinstance(data, dict):
        raise ParseError(f"not a JSON object: {payload[:200]!r}")
    watts = _number(dig(data, power_path), "power", payload) if power_path else None
    counter = _number(dig(data, energy_path), "energy", payload) if energy_path else None
    if watts is None and counter is None:
        raise ParseError(f"neither {power_path!r} nor {energy_path!r} in: {payload[:200]!r}")
    return Reading(watts, None if counter is None else counter * JOULES[energy_unit])


def parse_shelly(payload: bytes) -> Reading:
    return parse_paths(payload, "apower", "aenergy.total", "Wh")


def parse_tasmota(payload: bytes) -> Reading:
    return parse_paths(payload, "ENERGY.Power", "ENERGY.Total", "kWh")
