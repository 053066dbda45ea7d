"""What the heat pump collector read from the ISG: its state, typed."""

from __future__ import annotations

from collectors.state import State


class HeatpumpState(State):
    controller: str | None = None  # WPM, LWZ ...; None before the first answer
    controller_id: int | None = None  # the ISG's controller identification (input 5001)
    temperatures: dict[str, float | None] = {}  # outside, flow, return, hot_water_actual ...
    flags: dict[str, bool] = {}  # compressor, heating, hot_water, defrost ... from the status bits
    fault: bool = False
    active_error: int | None = None  # the controller's error number, 0 for none
    values: dict[str, float | None] = {}  # every field of the register map, decoded
    energy_counters: dict[str, float | None] = {}  # kWh running totals that never go back, by kind and use
    heat_today: float | None = None  # kWh
    electricity_today: float | None = None
    efficiency_today: float | None = None  # heat / electricity
    refused_blocks: list[str] = []  # register blocks the controller does not serve
    polled_at: float | None = None
    requests: int | None = None  # Modbus requests the last poll took


