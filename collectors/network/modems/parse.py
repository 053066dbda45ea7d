"""ModemManager's `mmcli` JSON: the modem list, one modem, and its extended signal.

Format source: ModemManager cli/mmcli-output.c (the field keys, ``dump_output_json``) and
cli/mmcli-modem.c. Every value is a string, "--" when unknown or none (``filter_out_value``);
lists are arrays of strings. `mmcli -L -J` is {"modem-list": [D-Bus paths]}; `mmcli -m N -J` is
{"modem": {"dbus-path", "generic": {"device" (its sysfs path), "equipment-identifier",
"manufacturer", "model", "state", "state-failed-reason", "power-state", "access-technologies",
"signal-quality": {"value", "recent"}, "ports": ["wwan0 (net)", "ttyUSB2 (at)" ...], "sim"},
"3gpp": {"imei", "operator-code", "operator-name", "registration-state"}}};
`mmcli -m N --signal-get -J` is {"modem": {"signal": {"refresh": {"rate"}, "gsm": {"rssi"},
"umts": {"rssi", "rscp", "ecio"}, "lte": {"rssi", "rsrq", "rsrp", "snr"}, "5g": {"rsrq", "rsrp",
"snr"}, "cdma1x": {"rssi", "ecio"}, "evdo": {"rssi", "ecio", "sinr", "io"}}}}.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from collectors import finite
from collectors.base import ParseError
from collectors.jsontext import tool_json

# What a person calls each access technology's family (the thresholds are per family).
FAMILY = {"gsm": "2G", "gsm-compact": "2G", "gprs": "2G", "edge": "2G", "umts": "3G", "hsdpa": "3G", "hsupa": "3G",
          "hspa": "3G", "hspa-plus": "3G", "1xrtt": "3G", "evdo0": "3G", "evdoa": "3G", "evdob": "3G", "lte": "LTE",
          "lte-cat-m": "LTE", "lte-nb-iot": "LTE", "5gnr": "5G"}
SIGNAL_KEYS = {"gsm": ("rssi",), "umts": ("rssi", "rscp", "ecio"), "lte": ("rssi", "rsrq", "rsrp", "snr"),
               "5g": ("rsrq", "rsrp", "snr"), "cdma1x": ("rssi", "ecio"), "evdo": ("rssi", "ecio", "sinr", "io")}
_PORT = re.compile(r"^(?P<name>\S+) \((?P<type>[^)]+)\)$")


@dataclass(slots=True)
class ModemInfo:
    path: str  # D-Bus object path: its number changes when the modem re-attaches
    device: str  # sysfs path of the physical device: stays
    imei: str | None
    equipment_id: str | None
    manufacturer: str | None
    model: str | None
    state: str  # failed, disabled, enabled, searching, registered, connecting, connected ...
    failed_reason: str | None  # sim-missing, sim-error ... when state is failed
    power_state: str | None
    access: list[str]  # ["lte"], ["hsdpa", "hsupa"]
    quality: int | None  # percent
    quality_recent: bool
    operator_code: str | None
    operator_name: str | None
    registration: str | None  # home, roaming, searching, denied, idle, unknown ...
    sim: str | None  # the SIM's D-Bus path, None without one
    ports: dict[str, str] = field(default_factory=dict)  # name -> type: wwan0 -> net

    @property
    def key(self) -> str:
        """What names a modem across re-attaches: its IMEI, else its device path."""
        return self.imei or self.equipment_id or self.device

    @property
    def net_ports(self) -> list[str]:
        return [name for name, kind in self.ports.items() if kind == "net"]

    @property
    def family(self) -> str | None:
        families = [FAMILY[a] for a in self.access if a in FAMILY]
        order = ["5G", "LTE", "3G", "2G"]
        return min(families, key=order.index) if families else None


# Any: a tool's JSON output, read key by key (each value checked where it is used)
def _load(text: str | bytes, what: str) -> dict[str, Any]:
    doc = tool_json(text, what, "{")
    if doc is None:
        raise ParseError(f"{what}: printed nothing")
    if not isinstance(doc, dict):
        raise ParseError(f"{what}: not a JSON object")
    return doc


def _s(v: Any) -> str | None:
    """A value as mmcli prints it, None for its "--" (unknown or none)."""
    return v if isinstance(v, str) and v not in ("--", "") else None


def _list(v: Any) -> list[str]:
    return [x for x in v if isinstance(x, str) and x != "--"] if isinstance(v, list) else []


def _number(v: Any) -> float | None:
    text = _s(v)
    if text is None:
        return None
    try:
        value = float(text.split()[0])  # "-95.00", or "-95.00 dBm" from a human-minded wrapper
    except (ValueError, IndexError):
        return None
    return value if finite.is_sane(value) else None


def parse_modem_list(text: str | bytes) -> list[str]:
    """`mmcli -L -J` -> the modems' D-Bus paths."""
    doc = _load(text, "mmcli -L -J")
    paths = doc.get("modem-list")
    if not isinstance(paths, list):
        raise ParseError(f"mmcli -L -J: no modem-list: {str(doc)[:120]!r}")
    return [p for p in paths if isinstance(p, str)]


def parse_modem(text: str | bytes) -> ModemInfo:
    """`mmcli -m N -J`."""
    doc = _load(text, "mmcli -m -J")
    m = doc.get("modem")
    if not isinstance(m, dict) or not isinstance(m.get("generic"), dict):
        raise ParseError(f"mmcli -m -J: no modem.generic object: {str(doc)[:120]!r}")
    # Any: a tool's JSON output, read key by key (each value checked where it is used)
    g: dict[str, Any] = m["generic"]
    g3: dict[str, Any] = m["3gpp"] if isinstance(m.get("3gpp"), dict) else {}
    quality: dict[str, Any] = g["signal-quality"] if isinstance(g.get("signal-quality"), dict) else {}
    q = _number(quality.get("value"))
    ports = {}
    for p in _list(g.get("ports")):
        pm = _PORT.match(p)
        if pm:
            ports[pm["name"]] = pm["type"]
    state = _s(g.get("state")) or "unknown"
    return ModemInfo(
        path=_s(m.get("dbus-path")) or "", device=_s(g.get("device")) or "",
        imei=_s(g3.get("imei")), equipment_id=_s(g.get("equipment-identifier")),
        manufacturer=_s(g.get("manufacturer")), model=_s(g.get("model")), state=state,
        failed_reason=_s(g.get("state-failed-reason")) if state == "failed" else None,
        power_state=_s(g.get("power-state")), access=_list(g.get("access-technologies")),
        quality=int(q) if q is not None else None, quality_recent=quality.get("recent") == "yes",
        operator_code=_s(g3.get("operator-code")), operator_name=_s(g3.get("operator-name")),
        registration=_s(g3.get("registration-state")), sim=_s(g.get("sim")) if _s(g.get("sim")) != "/" else None,
        ports=ports)


def parse_signal(text: str | bytes) -> tuple[float | None, dict[str, dict[str, float]]]:
    """`mmcli -m N --signal-get -J` -> (refresh rate in seconds, {technology: {measure: value}})
    with only the measures the modem reported. A rate of 0 (or none) means extended signal
    reporting was never set up (`--signal-setup`), and the values are stale or absent."""
    doc = _load(text, "mmcli --signal-get -J")
    m = doc.get("modem")
    signal = m.get("signal") if isinstance(m, dict) else None
    if not isinstance(signal, dict):
        raise ParseError(f"mmcli --signal-get -J: no modem.signal object: {str(doc)[:120]!r}")
    refresh = signal.get("refresh")
    rate = _number(refresh.get("rate")) if isinstance(refresh, dict) else None
    out: dict[str, dict[str, float]] = {}
    for tech, keys in SIGNAL_KEYS.items():
        part = signal.get(tech)
        if isinstance(part, dict):
            values = {k: v for k in keys if (v := _number(part.get(k))) is not None}
            if values:
                out[tech] = values
    return rate, out
