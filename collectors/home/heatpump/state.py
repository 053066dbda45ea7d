"""What the heat pump collector read from the ISG: its state, typed."""

from __future__ import annotations

from collectors.home.heatpump.ledger import HeatpumpDay
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
    electricity_drawn_kwh: float | None = None  # the sum of its electricity counters' rises: never falls
    heat_today: float | None = None  # kWh
    electricity_today: float | None = None
    efficiency_today: float | None = None  # heat / electricity
    days: list[HeatpumpDay] = []  # the day book, oldest first (ledger.py): COP per day, month, season
    months: list[HeatpumpDay] = []  # days older than the day book keeps, one record per month
    starts: list[float | None] = []  # when the compressor started, within the last hour
    booked_at: float | None = None  # the day book's last poll, on its clock
    compressor_starts_counter: float | None = None  # the LWZ's own count of starts
    # The thresholds the findings judge by ([collectors.heatpump]); carried so a state alone is
    # judged as its page shows it. None (a bad number stored): the defaults judge.
    backup_share: float | None = 0.10
    backup_below_celsius: float | None = -5.0
    backup_min_kwh: float | None = 5.0
    max_starts_per_hour: int | None = 3
    season_start_month: int | None = 7
    refused_blocks: list[str] = []  # register blocks the controller does not serve, in words
    polled_at: float | None = None
    requests: int | None = None  # Modbus requests the last poll took


