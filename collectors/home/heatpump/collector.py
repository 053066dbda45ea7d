"""A Stiebel Eltron heat pump through the ISG's Modbus TCP interface. Read-only.

One persistent connection, strictly sequential requests, block by block (a block the
controller refuses with exception 2 is dropped for good, once, with a warning); only
function codes 3 and 4 are ever sent.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from collectors import energy
from collectors.base import (
    Collector,
    CollectorError,
    CollectResult,
    Entity,
    MetricSpec,
    Runner,
    Sample,
    exiting,
)
from collectors.context import HostContext
from collectors.counters import CounterGuard, Most
from collectors.energy import samples as energy_source
from collectors.home.heatpump.isg_map import (
    BLOCKS,
    CONTROLLERS,
    HOLDING,
    IDENT_WIRE,
    INPUT,
    SHORTER,
    decode,
    fields_for,
    status_bits_for,
)
from collectors.home.heatpump.ledger import KINDS, MAX_GAP, HeatpumpDay, book, fold, local_date, periods
from collectors.home.heatpump.state import HeatpumpState
from collectors.state import State

log = logging.getLogger("collectors.heatpump")
# pymodbus logs every failed connect and read at ERROR, every poll; we log transitions ourselves.
logging.getLogger("pymodbus").setLevel(logging.CRITICAL)
ENERGY_USES = ("heating", "hot_water")
JOULES_PER_KWH = 3_600_000
# A counter rising faster than this is a bad read (collectors/counters.py): more than any domestic
# heat pump with its booster makes or draws (a cascade of WPM units included), with 2 kWh of slack
# for the whole kWh the ISG moves from the day register to the total at midnight. No total is ever
# past 10 GWh (the MWh word's 0xFFFF is 65 GWh).
MAX_KW, SLACK_KWH, CEILING_KWH = 100.0, 2.0, 10_000_000.0
METRIC_OF = {"heat": "rackpulse_heatpump_heat_joules_total", "electricity": "rackpulse_heatpump_electricity_joules_total",
             "backup": "rackpulse_heatpump_backup_heat_joules_total"}


# The heat pump as one of the lab's energy sources (/energy): what it drew from the mains, the
# compressor's electricity and the booster's (a heating element: its heat is its electricity).
ENERGY_SOURCE = "heatpump"
DRAWN = ("electricity_heating", "electricity_hot_water", "backup_heating", "backup_hot_water")


def drawn(before: float | None, rises: dict[str, float], counters: dict[str, float]) -> float | None:
    """The heat pump's electricity as a counter that never falls, in kWh: the sum of the ISG
    counters' rises. Not their sum itself: a counter the ISG moved to a new base (a controller
    swapped, a total set back) is taken at its new value without booking the jump, and their sum
    would fall or leap with it. It starts where the counters stand, so a long-running heat pump's
    first reading is its history, as its own counters hold it."""
    if before is None:
        present = [counters[k] for k in DRAWN if k in counters]
        return sum(present) if present else None
    return before + sum(rises.get(k, 0.0) for k in DRAWN)


class HeatpumpCollector(Collector):
    name: ClassVar[str] = "heatpump"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_heatpump_up": MetricSpec("1 if the ISG answered this poll.",
                                            states=("unreachable", "answering")),
        "rackpulse_heatpump_info": MetricSpec("The controller type as a label; value 1.", store=False),
        "rackpulse_heatpump_temperature_celsius": MetricSpec("Temperatures the controller reports."),
        "rackpulse_heatpump_pressure_bar": MetricSpec("Heating-circuit and refrigerant pressures."),
        "rackpulse_heatpump_compressor_running": MetricSpec("1 while the compressor runs.",
                                                            states=("off", "running")),
        "rackpulse_heatpump_fault": MetricSpec("1 if the controller reports a fault.",
                                               states=("no fault", "fault")),
        "rackpulse_heatpump_active_error": MetricSpec("The controller's active error number (0: none)."),
        "rackpulse_heatpump_status": MetricSpec("1 for each operating-status flag that is set."),
        # Prometheus base units: joules (1 kWh = 3.6 MJ); the ISG counts whole kWh.
        "rackpulse_heatpump_heat_joules_total": MetricSpec("Heat produced (total + today), kept monotonic.", "counter"),
        "rackpulse_heatpump_electricity_joules_total": MetricSpec("Electricity used (total + today), kept monotonic.",
                                                                  "counter"),
        "rackpulse_heatpump_backup_heat_joules_total": MetricSpec(
            "Heat made by the electric booster (NHZ), by use; the ISG adds a day's at midnight.", "counter"),
        "rackpulse_heatpump_efficiency_today": MetricSpec("Heat produced today / electricity used today.", fraction=True),
        "rackpulse_heatpump_cop": MetricSpec("Coefficient of performance of a period (today, yesterday, this month, "
                                             "this season), the booster's energy included on both sides.", fraction=True),
        "rackpulse_heatpump_backup_share": MetricSpec("The booster's share of the heat made in a period (0..1), over "
                                                      "its days whose booster is booked (after midnight: none today).", fraction=True),
        "rackpulse_heatpump_compressor_starts_last_hour": MetricSpec("Compressor starts within the last hour."),
        "rackpulse_heatpump_defrosts_today": MetricSpec("Defrosts begun today."),
        "rackpulse_heatpump_defrost_seconds_today": MetricSpec("Time spent defrosting today."),
        "rackpulse_heatpump_compressor_run_seconds_total": MetricSpec("Compressor run time by use (the ISG counts "
                                                                      "whole hours).", "counter"),
        "rackpulse_heatpump_sg_ready_state": MetricSpec("SG Ready operating state (1 blocked .. 4 maximum)."),
        "rackpulse_heatpump_operating_mode": MetricSpec("Operating mode number (holding register)."),
        **energy.SPECS,
    }

    def __init__(self, host: str, port: int = 502, unit: int = 1, timeout: float = 3.0,
                 thresholds: dict[str, float] | None = None, clock: Callable[[], float] = time.time) -> None:
        self.host, self.port, self.unit, self.timeout = host, port, unit, timeout
        self.thresholds = dict(thresholds or {})
        self.clock = clock  # the day book's calendar (the demo runs a faster one)
        self.days: list[HeatpumpDay] = []
        self.months: list[HeatpumpDay] = []
        self.starts: list[float] = []
        self._starts_counter: float | None = None
        self._last_poll: float | None = None
        self._compressor_on: bool | None = None
        self._defrost_on: bool | None = None
        self.client: Any = None
        self.controller: int | None = None
        self.refused: set[tuple[int, int]] = set()
        self.shortened: dict[tuple[int, int], int] = {}
        self.requests = 0  # read requests sent by the last poll (for the bench)
        self._energy: dict[str, float] = {}
        self._drawn: float | None = None  # kWh, the lab's energy source "heatpump" (see _energy_samples)
        # kWh of the source per kWh the ISG counts: 1 but in the demo, whose heat pump lives a day
        # in four minutes and would otherwise bill a month an hour
        self.energy_pace = 1.0
        self.guard = CounterGuard(MAX_KW / 3600, SLACK_KWH, CEILING_KWH)
        self._connected_logged: bool | None = None

    def counter_limits(self) -> Mapping[str, Most]:
        # 100 kW at most, and the whole kWh the ISG moves at once (its hours of compressor run too).
        joules = Most(MAX_KW * 1000, SLACK_KWH * JOULES_PER_KWH)
        return {**{m: joules for m in METRIC_OF.values()}, energy.ENERGY: joules,
                "rackpulse_heatpump_compressor_run_seconds_total": Most(1.0, 2 * 3600.0)}

    def restore(self, state: State) -> None:
        if isinstance(state, HeatpumpState):
            self._energy.update({k: v for k, v in state.energy_counters.items() if v is not None})
            self._drawn = state.electricity_drawn_kwh
            if state.booked_at is not None:  # when they were read: without it, the next read is judged alone
                for key, value in self._energy.items():
                    self.guard.seed(key, value, state.booked_at)
            self.days, self.months = list(state.days), list(state.months)
            self.starts = [ts for ts in state.starts if ts is not None]
            self._starts_counter = state.compressor_starts_counter
            self._last_poll = state.booked_at

    # -- connection ---------------------------------------------------------------------

    def _connect(self) -> Any:
        from pymodbus.client import ModbusTcpClient

        if self.client is not None and self.client.connected:
            return self.client
        if self.client is None:
            self.client = ModbusTcpClient(self.host, port=self.port, timeout=self.timeout, retries=1)
        if not self.client.connect():
            self._transition(False)
            raise CollectorError(
                f"cannot connect to the ISG at {self.host}:{self.port}: the Modbus TCP extension must be enabled on "
                "the ISG (SERVICEWELT: Einstellungen > Energiemanagement; older ISGs need the extension from "
                "Stiebel Eltron), and nothing may block port 502")
        self._transition(True)
        return self.client

    def _transition(self, up: bool) -> None:
        # Log connection changes once per transition, not every poll; a connection lost while
        # rackpulse itself stops is no news.
        if self._connected_logged is not up:
            (log.info if up else log.debug if exiting() else log.warning)("ISG %s:%d %s", self.host, self.port,
                                              "connected" if up else "not reachable")
            self._connected_logged = up

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None

    def _read(self, fc: int, start: int, count: int) -> list[int] | None:
        """Registers, or None when the controller refuses the block (exception 2)."""
        from pymodbus.exceptions import ModbusException

        client = self._connect()
        self.requests += 1
        try:
            if fc == INPUT:
                rr = client.read_input_registers(start, count=count, device_id=self.unit)
            elif fc == HOLDING:
                rr = client.read_holding_registers(start, count=count, device_id=self.unit)
            else:  # pragma: no cover - the map has only 3 and 4
                raise ValueError(f"refusing function code {fc}: rackpulse only reads")
        except ModbusException as exc:
            # The gateway dropped the connection or stopped answering: start afresh next poll.
            self.close()
            self._transition(False)
            raise CollectorError(f"ISG {self.host}:{self.port}: {exc}") from None
        if rr.isError():
            if getattr(rr, "exception_code", None) == 2:
                return None
            raise CollectorError(f"ISG {self.host}:{self.port}: exception {getattr(rr, 'exception_code', '?')} "
                                 f"reading {'input' if fc == INPUT else 'holding'} {start}+{count}")
        return list(rr.registers)

    # -- poll ---------------------------------------------------------------------------

    def collect(self) -> CollectResult:
        if not self.host:
            from collectors.base import NoData

            raise NoData("no ISG host configured")
        self.requests = 0
        result = CollectResult()
        if self.controller is None:
            ident = self._read(INPUT, IDENT_WIRE, 1)
            if not ident:
                raise CollectorError(f"ISG {self.host}:{self.port}: no controller identification at input 5001")
            if ident[0] not in BLOCKS:
                raise CollectorError(f"ISG {self.host}:{self.port}: unknown controller id {ident[0]}")
            self.controller = ident[0]
        words: dict[tuple[int, int], int] = {}
        for fc, start, count in BLOCKS[self.controller]:
            if (fc, start) in self.refused:
                continue
            count = self.shortened.get((fc, start), count)
            regs = self._read(fc, start, count)
            if regs is None and (fc, start, count) in SHORTER:
                # An older controller that ends the block sooner: the part it has, from now on.
                count = self.shortened[(fc, start)] = SHORTER[(fc, start, count)]
                regs = self._read(fc, start, count)
            if regs is None:
                self.refused.add((fc, start))
                result.warnings.append(f"controller refuses {'input' if fc == INPUT else 'holding'} block "
                                       f"{start}+{count} (exception 2); not read again")
                continue
            for i, v in enumerate(regs):
                words[(fc, start + i)] = v
        values: dict[str, float | None] = {}
        for f in fields_for(self.controller):
            n = 2 if f.dtype == "total" else 1
            raw = [words[(f.fc, f.wire + i)] for i in range(n) if (f.fc, f.wire + i) in words]
            values[f.name] = decode(f.dtype, raw) if len(raw) == n else None
        result.state = self._state(values, result)
        return result

    def _state(self, v: dict[str, float | None], result: CollectResult) -> HeatpumpState:
        assert self.controller is not None
        s = result.samples
        controller = CONTROLLERS.get(self.controller, str(self.controller))
        s.append(Sample.of("rackpulse_heatpump_up", 1))
        s.append(Sample.of("rackpulse_heatpump_info", 1, controller=controller))
        temps = {}
        for name, value in v.items():
            if value is None:
                continue
            field = next(f for f in fields_for(self.controller) if f.name == name)
            if field.kind == "temperature":
                temps[name] = value
                s.append(Sample.of("rackpulse_heatpump_temperature_celsius", value, sensor=name))
            elif field.kind == "pressure":
                s.append(Sample.of("rackpulse_heatpump_pressure_bar", value, sensor=name.removesuffix("_bar")))
        status = int(v.get("operating_status") or 0)
        flags = {flag: bool(status >> bit & 1) for bit, flag in status_bits_for(self.controller).items()}
        if v.get("defrost"):
            flags["defrost"] = True
        if v.get("utility_block"):
            flags["utility_block"] = True
        for flag, on in sorted(flags.items()):
            s.append(Sample.of("rackpulse_heatpump_status", 1 if on else 0, flag=flag))
        s.append(Sample.of("rackpulse_heatpump_compressor_running", 1 if flags.get("compressor") else 0))
        error = int(v.get("active_error") or 0)
        fault = bool(v.get("fault_status")) or error not in (0,)
        s.append(Sample.of("rackpulse_heatpump_fault", 1 if fault else 0))
        s.append(Sample.of("rackpulse_heatpump_active_error", error))
        energy, rises = self._energy_samples(v, result)
        heat_today = sum(x for x in energy["heat"].values() if x is not None)
        elec_today = sum(x for x in energy["electricity"].values() if x is not None)
        efficiency = round(heat_today / elec_today, 2) if elec_today > 0 and energy["heat"] else None
        if efficiency is not None:
            s.append(Sample.of("rackpulse_heatpump_efficiency_today", efficiency))
        self._book(v, flags, rises, s)
        for use in ENERGY_USES:
            h = v.get(f"compressor_hours_{use}")
            if h is not None:
                s.append(Sample.of("rackpulse_heatpump_compressor_run_seconds_total", h * 3600, use=use))
        for name in ("sg_ready_state", "operating_mode"):
            value = v.get(name)
            if value is not None:
                s.append(Sample.of(f"rackpulse_heatpump_{name}", value))
        result.entities.append(Entity("heatpump", f"{self.host}:{self.port}", {
            "fault": fault, "active_error": error, "compressor": flags.get("compressor", False)}))
        t = self.thresholds
        return HeatpumpState(controller=controller, controller_id=self.controller, temperatures=temps, flags=flags,
                             fault=fault, active_error=error,
                             values=v, energy_counters=dict(self._energy), electricity_drawn_kwh=self._drawn,
                             heat_today=heat_today, electricity_today=elec_today, efficiency_today=efficiency,
                             days=self.days, months=self.months, starts=self.starts, booked_at=self._last_poll,
                             compressor_starts_counter=self._starts_counter,
                             refused_blocks=[f"{'input' if fc == INPUT else 'holding'} registers from {st}"
                                             for fc, st in sorted(self.refused)], polled_at=time.time(),
                             requests=self.requests, **{k: t[k] for k in THRESHOLDS if k in t})

    def _energy_samples(self, v: dict[str, float | None], result: CollectResult
                        ) -> tuple[dict[str, dict[str, float | None]], dict[str, float]]:
        """Each energy counter as a running total that never goes back (samples in joules), today's
        kWh of heat and electricity by use, and how much each counter rose since the last poll."""
        s = result.samples
        energy: dict[str, dict[str, float | None]] = {"heat": {}, "electricity": {}}
        rises: dict[str, float] = {}
        for kind in KINDS:
            for use in ENERGY_USES:
                day = 0.0 if kind == "backup" else v.get(f"{kind}_{use}_day")
                total_kwh = v.get(f"{kind}_{use}_total")
                if day is None or total_kwh is None:
                    continue
                # total excludes today; at midnight the ISG moves whole kWh from day to total.
                key = f"{kind}_{use}"
                before = self._energy.get(key)
                problem = self.guard.check(key, total_kwh + day, self.clock())
                if problem == "rebased":  # a counter that moved to a new base: nothing booked for the jump
                    running = self._energy[key] = total_kwh + day
                elif problem:
                    result.warnings.append(f"ISG {self.host}: {problem}")
                    log.warning("ISG %s: %s", self.host, problem)
                    continue
                else:
                    running = max(before or 0.0, total_kwh + day)
                    self._energy[key] = running
                    if before is not None:
                        rises[key] = running - before
                if kind != "backup":
                    energy[kind][use] = day
                s.append(Sample.of(METRIC_OF[kind], running * JOULES_PER_KWH, use=use))
        self._drawn = drawn(self._drawn, {k: v * self.energy_pace for k, v in rises.items()}, self._energy)
        if self._drawn is not None:
            s.extend(energy_source(ENERGY_SOURCE, None, self._drawn * JOULES_PER_KWH))
        return energy, rises

    def _book(self, v: dict[str, float | None], flags: dict[str, bool], rises: dict[str, float],
              s: list[Sample]) -> None:
        """This poll into the day book: energy, the outside temperature, starts and defrosts."""
        now = self.clock()
        gap = now - self._last_poll if self._last_poll is not None else None
        steady = gap is not None and 0 <= gap <= MAX_GAP  # polls close enough to see an edge between them
        compressor, defrost = bool(flags.get("compressor")), bool(flags.get("defrost"))
        starts = 0
        high, low = v.get("compressor_starts_high"), v.get("compressor_starts_low")
        if high is not None and low is not None:  # the LWZ counts its starts: none missed between polls
            counter = high * 1000 + low
            if self._starts_counter is not None and counter > self._starts_counter:
                starts = int(min(counter - self._starts_counter, 60))  # a counter swapped or reset: not a burst
            self._starts_counter = counter
        elif steady and compressor and self._compressor_on is False:
            starts = 1
        self.starts = [ts for ts in self.starts if now - ts < 3600] + [now] * starts
        started_defrost = steady and defrost and self._defrost_on is False
        defrost_seconds = gap if steady and defrost and self._defrost_on and gap is not None else 0.0
        self.days = book(self.days, now, rises, outside=v.get("outside"), starts=starts,
                         starts_last_hour=len(self.starts), defrost_started=started_defrost,
                         defrost_seconds=defrost_seconds)
        self.days, self.months = fold(self.days, self.months)
        self._last_poll, self._compressor_on, self._defrost_on = now, compressor, defrost
        s.append(Sample.of("rackpulse_heatpump_compressor_starts_last_hour", len(self.starts)))
        today = local_date(now).isoformat()
        day = self.days[-1] if self.days and self.days[-1].date == today else None
        s.append(Sample.of("rackpulse_heatpump_defrosts_today", (day.defrosts or 0) if day else 0))
        s.append(Sample.of("rackpulse_heatpump_defrost_seconds_today", (day.defrost_seconds or 0.0) if day else 0.0))
        start_month = int(self.thresholds.get("season_start_month", 7))
        for period, totals in periods([*self.months, *self.days], today, start_month).items():
            if totals.cop is not None:
                s.append(Sample.of("rackpulse_heatpump_cop", totals.cop, period=period))
            if totals.backup_share is not None:
                s.append(Sample.of("rackpulse_heatpump_backup_share", totals.backup_share, period=period))


THRESHOLDS = ("backup_share", "backup_below_celsius", "backup_min_kwh", "max_starts_per_hour", "season_start_month")


# -- plug-in -----------------------------------------------------------------------------

def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.heatpump]."""
    return HeatpumpCollector(c.host, c.port, c.unit, c.command_timeout,
                             thresholds={k: getattr(c, k) for k in THRESHOLDS})
