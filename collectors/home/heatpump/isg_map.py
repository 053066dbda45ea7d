"""Stiebel Eltron ISG Modbus register map (wire = manual's doc number - 1).

Source: ../shared/docs/isg-modbus.md (transcribed from the ISG Modbus manual through
pystiebeleltron's api/*.csv, openHAB and evcc). Only what a dashboard reads; nothing here
is ever written. Blocks are read one by one so that a block the controller does not serve
(exception 2) costs only that block.
"""

from __future__ import annotations

from dataclasses import dataclass

INPUT, HOLDING = 4, 3
NOT_AVAILABLE = (0x8000, 0x9000)  # raw words meaning "no such value here", checked before scaling

CONTROLLERS = {103: "LWZ/LWA", 104: "LWZ x04 SOL", 390: "WPM 3", 391: "WPM 3i", 449: "WPMsystem", 551: "LWZ R290"}
IDENT_WIRE = 5001  # CONTROLLER IDENTIFICATION, input register, same on every controller


@dataclass(frozen=True)
class Field:
    name: str
    fc: int
    wire: int
    dtype: str  # "t10" int16 x0.1 | "t100" int16 x0.01 | "u16" | "i16" | "total" (LOW kWh, HIGH MWh)
    kind: str  # temperature | pressure | flow | status | energy_day | energy_total | mode | runtime | count


# (fc, start, count) per controller: the ranges each controller is known to answer.
BLOCKS: dict[int, list[tuple[int, int, int]]] = {
    390: [(INPUT, 500, 8), (INPUT, 509, 29), (INPUT, 541, 6), (INPUT, 2500, 7), (INPUT, 3500, 16),
          (INPUT, 3538, 7), (INPUT, 5000, 2), (HOLDING, 1500, 11)],
    391: [(INPUT, 500, 27), (INPUT, 532, 2), (INPUT, 535, 6), (INPUT, 2500, 2), (INPUT, 2503, 2), (INPUT, 2506, 1),
          (INPUT, 3500, 22), (INPUT, 5000, 2), (HOLDING, 1500, 11)],
    449: [(INPUT, 500, 48), (INPUT, 2500, 7), (INPUT, 3500, 16), (INPUT, 3538, 7), (INPUT, 5000, 2),
          (HOLDING, 1500, 11), (INPUT, 3679, 1)],
    103: [(INPUT, 0, 34), (INPUT, 2000, 5), (INPUT, 3000, 32), (INPUT, 5000, 2), (HOLDING, 1000, 1)],
}
BLOCKS[104] = BLOCKS[103]
# A block refused whole (exception 2) is asked for once more, shorter, where controllers are known
# to differ: the LWZ energy block ends with the booster's run hours (3030, 3031) that not every
# firmware serves; without them the energy is still there.
SHORTER = {(INPUT, 3000, 32): 30}
BLOCKS[551] = BLOCKS[449]

WPM_FIELDS = [
    Field("room", INPUT, 500, "t10", "temperature"),
    Field("outside", INPUT, 506, "t10", "temperature"),
    Field("heating_circuit_actual", INPUT, 507, "t10", "temperature"),
    Field("heating_circuit_set", INPUT, 509, "t10", "temperature"),
    Field("heat_pump_flow", INPUT, 512, "t10", "temperature"),
    Field("flow", INPUT, 514, "t10", "temperature"),
    Field("return", INPUT, 515, "t10", "temperature"),
    Field("buffer_actual", INPUT, 517, "t10", "temperature"),
    Field("buffer_set", INPUT, 518, "t10", "temperature"),
    Field("heating_pressure_bar", INPUT, 519, "t100", "pressure"),
    Field("flow_rate_l_min", INPUT, 520, "t100", "flow"),
    Field("hot_water_actual", INPUT, 521, "t10", "temperature"),
    Field("hot_water_set", INPUT, 522, "t10", "temperature"),
    Field("source", INPUT, 535, "t10", "temperature"),
    Field("heat_pump_return", INPUT, 541, "t10", "temperature"),
    Field("heat_pump_flow_hp1", INPUT, 542, "t10", "temperature"),
    Field("hot_gas", INPUT, 543, "t10", "temperature"),
    Field("high_pressure_bar", INPUT, 546, "t100", "pressure"),
    Field("operating_status", INPUT, 2500, "u16", "status"),
    Field("utility_block", INPUT, 2501, "u16", "status"),
    Field("fault_status", INPUT, 2503, "u16", "status"),
    Field("bus_status", INPUT, 2504, "i16", "status"),
    Field("defrost", INPUT, 2505, "u16", "status"),
    Field("active_error", INPUT, 2506, "u16", "status"),
    Field("heat_heating_day", INPUT, 3500, "u16", "energy_day"),
    Field("heat_heating_total", INPUT, 3501, "total", "energy_total"),
    Field("heat_hot_water_day", INPUT, 3503, "u16", "energy_day"),
    Field("heat_hot_water_total", INPUT, 3504, "total", "energy_total"),
    # The electric booster (NHZ): totals only, no day register (doc 3507-3510, "NHZ HEATING/DHW TOTAL").
    Field("backup_heating_total", INPUT, 3506, "total", "energy_total"),
    Field("backup_hot_water_total", INPUT, 3508, "total", "energy_total"),
    Field("electricity_heating_day", INPUT, 3510, "u16", "energy_day"),
    Field("electricity_heating_total", INPUT, 3511, "total", "energy_total"),
    Field("electricity_hot_water_day", INPUT, 3513, "u16", "energy_day"),
    Field("electricity_hot_water_total", INPUT, 3514, "total", "energy_total"),
    Field("compressor_hours_heating", INPUT, 3538, "u16", "runtime"),
    Field("compressor_hours_hot_water", INPUT, 3541, "u16", "runtime"),
    Field("sg_ready_state", INPUT, 5000, "u16", "mode"),
    Field("operating_mode", HOLDING, 1500, "u16", "mode"),
]

LWZ_FIELDS = [
    Field("room", INPUT, 0, "t10", "temperature"),
    Field("outside", INPUT, 6, "t10", "temperature"),
    Field("heating_circuit_actual", INPUT, 7, "t10", "temperature"),
    Field("heating_circuit_set", INPUT, 8, "t10", "temperature"),
    Field("flow", INPUT, 11, "t10", "temperature"),
    Field("return", INPUT, 12, "t10", "temperature"),
    Field("heating_pressure_bar", INPUT, 13, "t10", "pressure"),
    Field("hot_water_actual", INPUT, 15, "t10", "temperature"),
    Field("hot_water_set", INPUT, 16, "t10", "temperature"),
    Field("hot_gas", INPUT, 27, "t10", "temperature"),
    # COMPRESSOR STARTS HI (doc 31) and LOW (doc 34): starts = HI x 1000 + LOW.
    Field("compressor_starts_high", INPUT, 30, "u16", "count"),
    Field("compressor_starts_low", INPUT, 33, "u16", "count"),
    Field("high_pressure_bar", INPUT, 28, "t100", "pressure"),
    Field("operating_status", INPUT, 2000, "u16", "status"),
    Field("fault_status", INPUT, 2001, "u16", "status"),
    Field("bus_status", INPUT, 2002, "i16", "status"),
    Field("defrost", INPUT, 2003, "u16", "status"),
    Field("heat_heating_day", INPUT, 3000, "u16", "energy_day"),
    Field("heat_heating_total", INPUT, 3001, "total", "energy_total"),
    Field("heat_hot_water_day", INPUT, 3003, "u16", "energy_day"),
    Field("heat_hot_water_total", INPUT, 3004, "total", "energy_total"),
    # HEAT M BOOST HTG/DHW TTL (doc 3007-3010): the booster's heat, totals only.
    Field("backup_heating_total", INPUT, 3006, "total", "energy_total"),
    Field("backup_hot_water_total", INPUT, 3008, "total", "energy_total"),
    Field("electricity_heating_day", INPUT, 3021, "u16", "energy_day"),
    Field("electricity_heating_total", INPUT, 3022, "total", "energy_total"),
    Field("electricity_hot_water_day", INPUT, 3024, "u16", "energy_day"),
    Field("electricity_hot_water_total", INPUT, 3025, "total", "energy_total"),
    Field("compressor_hours_heating", INPUT, 3027, "u16", "runtime"),
    Field("compressor_hours_hot_water", INPUT, 3029, "u16", "runtime"),
    Field("sg_ready_state", INPUT, 5000, "u16", "mode"),
    Field("operating_mode", HOLDING, 1000, "u16", "mode"),
]

# WPM OPERATING STATUS (input wire 2500) bits; LWZ (wire 2000) has its own order.
WPM_STATUS_BITS = {0: "heating_circuit_1_pump", 1: "heating_circuit_2_pump", 2: "heat_up_program", 3: "booster_heater",
                   4: "heating", 5: "hot_water", 6: "compressor", 7: "summer_mode", 8: "cooling", 9: "defrost"}
LWZ_STATUS_BITS = {0: "switching_program", 1: "compressor", 2: "heating", 3: "cooling", 4: "hot_water",
                   5: "booster_heater", 6: "service", 7: "utility_block", 8: "filter_change", 9: "ventilation",
                   10: "heating_circuit_1_pump", 11: "defrost", 14: "heat_up_program"}


# The fault numbers the WPM shows for its heat pumps (IWS) and reports as ACTIVE ERROR (doc 2507),
# with the words its display uses, in English. From the fault list of the WPM 3 manual's
# "Fehlerliste" as carried by the Elster/CAN table of Jürg Müller's can_progs (ErrorList), which
# the WPM's CAN bus and the ISG share. 0 and 0x8000 mean no fault.
FAULTS = {
    2: "contactor stuck (SCHÜTZ KLEBT)",
    3: "high-pressure sensor error (ERR HD-SENSOR)",
    4: "high pressure (HOCHDRUCK)",
    5: "evaporator sensor (VERDAMPFERFÜHLER)",
    6: "relay driver (RELAISTREIBER)",
    7: "relay level (RELAISPEGEL)",
    8: "hex switch (HEXSCHALTER)",
    9: "fan speed (DREHZAHL LÜFTER)",
    10: "fan driver (LÜFTERTREIBER)",
    11: "reset module (RESET BAUSTEIN)",
    12: "low pressure (ND)",
    13: "ROM",
    14: "source minimum temperature (QUELLEN MIN TEMP)",
    16: "defrost fault (ABTAUEN)",
    18: "heat pump temperature sensor error (ERR T-HEI IWS)",
    23: "frost protection sensor error (ERR T-FRO IWS)",
    26: "low pressure (NIEDERDRUCK)",
    27: "low-pressure error (ERR NIEDERDRUCK)",
    28: "high-pressure error (ERR HOCHDRUCK)",
    29: "high-pressure sensor at its maximum (HD-SENSOR-MAX)",
    30: "hot gas at its maximum (HEISSGAS MAX)",
    31: "high-pressure sensor error (ERR HD-SENSOR)",
    32: "freeze protection (EINFRIERSCHUTZ)",
    33: "no output (KEINE LEISTUNG)",
}


def fault_words(number: int | None) -> str:
    """An active error in words: "error 29, high-pressure sensor at its maximum (HD-SENSOR-MAX)"."""
    if not number or number == 0x8000:
        return "the controller reports a fault (no error number)"
    words = FAULTS.get(number)
    return f"error {number}, {words}" if words else f"error {number} (not in the WPM's fault list: see the controller's display)"


def fields_for(controller: int) -> list[Field]:
    return LWZ_FIELDS if controller in (103, 104) else WPM_FIELDS


def status_bits_for(controller: int) -> dict[int, str]:
    return LWZ_STATUS_BITS if controller in (103, 104) else WPM_STATUS_BITS


def decode(dtype: str, words: list[int]) -> float | None:
    """Decode one field from its raw words; None for the "not available" sentinels."""
    if not words or words[0] in NOT_AVAILABLE:
        return None
    w = words[0] & 0xFFFF
    if dtype == "u16":
        return float(w)
    signed = w - 0x10000 if w & 0x8000 else w
    if dtype == "i16":
        return float(signed)
    if dtype == "t10":
        return round(signed * 0.1, 1)
    if dtype == "t100":
        return round(signed * 0.01, 2)
    if dtype == "total":
        if len(words) < 2 or words[1] in NOT_AVAILABLE:
            return None
        return float(words[1] * 1000 + w)  # HIGH MWh at wire+1, LOW kWh at wire
    raise ValueError(f"unknown data type {dtype!r}")
