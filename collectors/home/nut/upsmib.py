"""UPSes with a network card: UPS-MIB (RFC 1628) over SNMP, read with the SNMP collector's
client and turned into the same variables NUT uses, so both kinds look alike downstream."""

from __future__ import annotations

from typing import Any

from collectors.base import CollectorError
from collectors.snmpwire import SnmpTarget, auth_data, explain

UPS_MIB = "1.3.6.1.2.1.33.1"
OIDS = {
    "battery_status": f"{UPS_MIB}.2.1.0",  # 1 unknown, 2 normal, 3 low, 4 depleted
    "seconds_on_battery": f"{UPS_MIB}.2.2.0",
    "minutes_remaining": f"{UPS_MIB}.2.3.0",
    "charge_remaining": f"{UPS_MIB}.2.4.0",  # percent
    "battery_voltage": f"{UPS_MIB}.2.5.0",  # 0.1 V DC
    "input_voltage": f"{UPS_MIB}.3.3.1.3.1",  # RMS volts, first input line
    "output_source": f"{UPS_MIB}.4.1.0",  # 1 other, 2 none, 3 normal, 4 bypass, 5 battery, 6 booster, 7 reducer
    "output_voltage": f"{UPS_MIB}.4.4.1.2.1",
    "output_load": f"{UPS_MIB}.4.4.1.5.1",  # percent
    "output_power": f"{UPS_MIB}.4.4.1.4.1",  # upsOutputPower: watts, first output line
}


def ups_mib_to_nut(values: dict[str, int | None]) -> dict[str, str]:
    """Pure: UPS-MIB values -> NUT-style variables (ups.status, battery.charge, ...)."""
    source = values.get("output_source")
    flags = {2: ["OFF"], 3: ["OL"], 4: ["OL", "BYPASS"], 5: ["OB", "DISCHRG"], 6: ["OL", "BOOST"],
             7: ["OL", "TRIM"]}.get(source or 0, [])
    if values.get("battery_status") in (3, 4):
        flags.append("LB")
    if not flags:
        raise CollectorError(f"UPS-MIB: unusable upsOutputSource {source!r} (is this a UPS-MIB agent?)")
    out = {"ups.status": " ".join(flags)}
    for key, var, scale in (("charge_remaining", "battery.charge", 1), ("battery_voltage", "battery.voltage", 0.1),
                            ("input_voltage", "input.voltage", 1), ("output_voltage", "output.voltage", 1),
                            ("output_load", "ups.load", 1), ("output_power", "ups.realpower", 1)):
        v = values.get(key)
        if v is not None:
            out[var] = f"{v * scale:g}"
    if values.get("minutes_remaining") is not None:
        out["battery.runtime"] = str(int(values["minutes_remaining"] or 0) * 60)
    return out


async def read_ups_mib(target: SnmpTarget) -> dict[str, int | None]:
    """GET the UPS-MIB scalars; a value the agent lacks comes back as None."""
    from pysnmp.hlapi.v3arch import asyncio as h

    engine = h.SnmpEngine()
    try:
        transport = await h.UdpTransportTarget.create((target.host, target.port), timeout=target.timeout,
                                                      retries=target.retries)
        err, status, _, vbs = await h.get_cmd(engine, auth_data(target), transport, h.ContextData(),
                                              *(h.ObjectType(h.ObjectIdentity(o)) for o in OIDS.values()))
        if err:
            raise CollectorError(explain(target, err))
        if status:
            raise CollectorError(f"{target.name}: agent error {status} reading UPS-MIB")
        out: dict[str, int | None] = {}
        for key, (_, value) in zip(OIDS, vbs, strict=True):
            out[key] = _int(value)
        return out
    finally:
        engine.close_dispatcher()


def _int(v: Any) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None  # noSuchObject / noSuchInstance
