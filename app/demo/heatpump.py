"""The heat-pump part of `rackpulse demo`: a pymodbus server playing an ISG with a WPM 3 through
a winter week, a day of heating and hot-water cycles every four minutes (a demo "hour" is 10 s),
its energy block counting as the ISG does (day registers, totals in kWh and MWh, the booster's
totals rising at midnight). The collector's day book runs on the same calendar (sim_clock) and
opens with the week before (seeded_days)."""

from __future__ import annotations

import asyncio
import math
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from app.demo.peer import DemoPeer

NA = 0x8000


def _w(value: float, scale: float = 10) -> int:
    return round(value * scale) & 0xFFFF


# A winter week, day by day: mean outside °C, then kWh of heat for heating and hot water, of
# electricity for each, and of the booster (NHZ) for heating. Day 0 is the day the demo starts on.
# Day 0 is cold enough for the booster to help; day 1 is mild, yet the booster makes 9 of its 55 kWh
# (heatpump_backup_heater, judged once the ISG adds the booster's day after midnight, through
# day 2); day 4 has an afternoon of short cycling. The demo opens on a calm day after a calm day.
WEEK = [(-6.0, 62.0, 8.0, 21.0, 3.2, 4.0), (3.0, 38.0, 8.0, 10.0, 2.9, 9.0), (-3.0, 55.0, 8.0, 17.0, 3.1, 0.0),
        (2.5, 40.0, 8.0, 11.0, 3.0, 0.0), (1.0, 44.0, 8.0, 12.5, 3.0, 0.0), (-1.5, 50.0, 8.0, 15.0, 3.1, 0.0),
        (0.5, 46.0, 8.0, 13.0, 3.0, 0.0)]
BOOSTER_DAY = 1
SHORT_CYCLING_DAY, SHORT_CYCLING_HOURS = 4, (13, 17)
DAY = 240.0  # story seconds of a demo day (an hour in 10 s), as story.CYCLE
START_HOUR = 3  # the story starts at 3 a.m. on day 0: today has energy from the first poll
SEEDED_DAYS = 7  # the week before the demo starts, in the heat pump's day book from the first page
# The heat pump's calendar: story time as days from the day the demo starts (story.CYCLE is one
# day here), so its day book is dated from today, not a fixed winter's day (January in November).
# pin_calendar (`demo --calendar`) fixes that day, so output compared against a stored file (the
# golden /metrics) is the same text on any day: "this month" differs on the 1st from the 15th.
EPOCH = time.time()
BASE = {"heat_heating": 6_345.0, "heat_hot_water": 2_410.0, "electricity_heating": 1_555.0,
        "electricity_hot_water": 730.0, "backup_heating": 212.0, "backup_hot_water": 35.0}
_clock: list[Callable[[], float]] = []


def pin_calendar(day: str | None) -> None:
    """Start the heat pump's calendar at noon of `day` (YYYY-MM-DD), or today for None."""
    import datetime as dt

    global EPOCH
    EPOCH = time.time() if day is None else dt.datetime.combine(dt.date.fromisoformat(day), dt.time(12)).timestamp()


def day_of(t: float) -> tuple[int, float]:
    """(day index, hour of that day) at story time t."""
    story = t + START_HOUR * DAY / 24
    return int(story // DAY), (story % DAY) / DAY * 24


def profile(d: int) -> dict[str, float]:
    outside, heat, dhw, elec, elec_dhw, nhz = WEEK[d % 7]
    return {"outside": outside, "heat_heating": heat, "heat_hot_water": dhw, "electricity_heating": elec,
            "electricity_hot_water": elec_dhw, "backup_heating": nhz, "backup_hot_water": 0.0}


def counter(key: str, t: float) -> float:
    """A running counter in kWh at story time t: the seeded week's days and the days since, whole,
    and today's share (the booster's: only at midnight, as the ISG adds it)."""
    d, hour = day_of(t)
    done = sum(profile(k)[key] for k in range(-SEEDED_DAYS, d))
    today = 0.0 if key.startswith("backup") else profile(d)[key] * hour / 24
    return BASE[key] + done + today


def sim_time(t: float) -> float:
    """The heat pump's calendar at story time t: local midnight of the day the demo started, plus
    the story's days and hours, so the collector's day book turns a day every story.CYCLE."""
    midnight = _local_midnight(EPOCH)
    d, hour = day_of(t)
    return midnight + d * 86400 + hour * 3600


def _local_midnight(ts: float) -> float:
    import datetime as dt

    day = dt.datetime.fromtimestamp(ts).date()
    return dt.datetime.combine(day, dt.time()).timestamp()


def sim_clock() -> float:
    """The calendar of the running demo ISG's story (for the heat pump collector's day book)."""
    return sim_time(_clock[-1]())


def seeded_days() -> list[Any]:
    """The week before the demo starts, as the collector's day book would hold it."""
    import datetime as dt

    from collectors.home.heatpump.ledger import HeatpumpDay

    first = dt.datetime.fromtimestamp(sim_time(0.0)).date()
    out = []
    for d in range(-SEEDED_DAYS, 0):
        p = profile(d)
        starts = 34 if d % 7 == SHORT_CYCLING_DAY else 14
        out.append(HeatpumpDay(date=(first + dt.timedelta(days=d)).isoformat(), outside_sum=p["outside"] * 48,
                               outside_count=48, starts=starts, max_starts_per_hour=6 if starts > 20 else 2,
                               defrosts=9 if p["outside"] < 2 else 4, defrost_seconds=(9 if p["outside"] < 2 else 4) * 300,
                               **{k: v for k, v in p.items() if k != "outside"}))
    return out


def seeded_counters() -> dict[str, float]:
    """The running counters at the midnight the demo's first day starts (what the day book held)."""
    return {k: float(int(counter(k, -START_HOUR * DAY / 24))) for k in BASE}  # whole kWh, as the ISG counts


def _split(kwh: float) -> list[int]:
    whole = int(kwh)
    return [whole % 1000, whole // 1000]  # LOW kWh, HIGH MWh


def registers(t: float) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    d, day_hour = day_of(t)
    # The water path keeps the story's own day (hour 0 at story time 0), as the pages' tests read it.
    hour = (t % DAY) / 10
    outside = 1.5 - 4.5 * math.cos((hour - 3) / 24 * 2 * math.pi)
    hot_water = 6 <= hour < 7 or 18 <= hour < 19
    heating = not hot_water and (hour % 3) < 1.6  # cycles of ~1.6 h on, 1.4 h off
    if d % 7 == SHORT_CYCLING_DAY and SHORT_CYCLING_HOURS[0] <= hour < SHORT_CYCLING_HOURS[1]:
        heating = (hour * 8) % 2 < 1  # 7.5 minutes on, 7.5 off, four starts an hour: it short-cycles
    compressor = heating or hot_water
    booster = d % 7 == BOOSTER_DAY and 9 <= hour < 15  # the mild day the booster ran all morning
    defrost = compressor and outside < 2 and (hour % 3) > 1.45 and (hour % 3) < 1.6
    flow = 42.0 if hot_water else (36.5 if heating else 27.0)
    ret = flow - (5.5 if compressor else 0.8)
    dhw = 52.0 - (hour % 12) * 0.6 if not hot_water else 45 + (hour % 1) * 8
    status = (1 << 0) | (booster << 3) | (heating << 4) | (hot_water << 5) | (compressor << 6) | (defrost << 9)
    midnight = t - day_hour / 24 * DAY
    # Wire 3500..3515 in this order: heat for heating day/total, for hot water day/total, the
    # booster's totals, then electricity for heating day/total and for hot water day/total.
    energy: list[int] = []
    for kind in ("heat_heating", "heat_hot_water", "backup_heating", "backup_hot_water", "electricity_heating",
                 "electricity_hot_water"):
        total = int(counter(kind, midnight))
        if kind.startswith("backup"):
            energy.extend(_split(total))
            continue
        energy.extend([int(counter(kind, t)) - total, *_split(total)])
    sys_a = [NA] * 8
    sys_a[6], sys_a[7] = _w(outside), _w(21.0)
    sys_b = [NA] * 29
    sys_b[0] = _w(35.0)
    for wire, value in ((512, flow + 0.6), (514, flow), (515, ret), (517, flow - 1), (518, 40.0), (521, dhw),
                        (522, 50.0), (535, outside - 1.5)):
        sys_b[wire - 509] = _w(value)
    sys_b[519 - 509] = _w(1.9, 100)
    sys_b[520 - 509] = _w(24.0 if compressor else 0.0, 100)
    sys_c = [_w(ret), _w(flow + 0.6), _w(78.0 if compressor else 30.0), NA, NA, _w(21.0 if compressor else 9.0, 100)]
    return ({500: sys_a, 509: sys_b, 541: sys_c, 2500: [status, 0, 0, 0, 0, int(defrost), 0], 3500: energy,
             5000: [2, 390]}, {1500: [2] + [0] * 10})


def start_isg(clock: Callable[[], float]) -> DemoPeer:
    """Start the simulated ISG on a free loopback port; values follow clock()."""
    from pymodbus.server import ModbusTcpServer
    from pymodbus.simulator import DataType, SimData, SimDevice

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    _clock.append(clock)
    inputs, holdings = registers(clock())
    bits = [SimData(0, values=False, datatype=DataType.BITS)]
    ir = [SimData(a, values=v, datatype=DataType.REGISTERS) for a, v in sorted(inputs.items())]
    hr = [SimData(a, values=v, datatype=DataType.REGISTERS, readonly=True) for a, v in sorted(holdings.items())]
    ready = threading.Event()
    stopping: dict[str, Any] = {}

    def run() -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)

        async def main() -> None:
            server = ModbusTcpServer(SimDevice(0, simdata=(bits, bits, hr, ir)), address=("127.0.0.1", port))
            await server.serve_forever(background=True)
            stopping["event"], stopping["loop"] = asyncio.Event(), asyncio.get_running_loop()
            ready.set()
            while not stopping["event"].is_set():
                try:
                    await asyncio.wait_for(stopping["event"].wait(), 1.0)
                except TimeoutError:
                    pass
                for wire, words in registers(clock())[0].items():
                    await server.async_setValues(0, 4, wire, words)
            await server.shutdown()

        loop.run_until_complete(main())
        loop.close()

    thread = threading.Thread(target=run, daemon=True, name="demo-isg")
    thread.start()
    if not ready.wait(10):
        raise RuntimeError("simulated ISG did not start")

    def stop() -> None:
        stopping["loop"].call_soon_threadsafe(stopping["event"].set)
        thread.join(10)

    return DemoPeer(port, stop)
