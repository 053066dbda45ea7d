"""The heat-pump part of `rackpulse demo`: a pymodbus server playing an ISG with a WPM 3,
running a day of heating and hot-water cycles every four minutes (a demo "hour" is 10 s)."""

from __future__ import annotations

import asyncio
import math
import socket
import threading
from collections.abc import Callable
from typing import Any

from demo.peer import DemoPeer

NA = 0x8000


def _w(value: float, scale: float = 10) -> int:
    return round(value * scale) & 0xFFFF


def registers(t: float) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    hour = (t % 240) / 10  # 0..24
    outside = 1.5 - 4.5 * math.cos((hour - 3) / 24 * 2 * math.pi)
    hot_water = 6 <= hour < 7 or 18 <= hour < 19
    heating = not hot_water and (hour % 3) < 1.6  # cycles of ~1.6 h on, 1.4 h off
    compressor = heating or hot_water
    flow = 42.0 if hot_water else (36.5 if heating else 27.0)
    ret = flow - (5.5 if compressor else 0.8)
    dhw = 52.0 - (hour % 12) * 0.6 if not hot_water else 45 + (hour % 1) * 8
    status = (1 << 0) | (heating << 4) | (hot_water << 5) | (compressor << 6)
    day = int(hour) + 3  # the story's day starts at 3 a.m.: the efficiency of today has a value from the first poll
    heat_day, dhw_day = int(day * 2.6), int(day * 0.7)
    elec_day, elec_dhw_day = int(day * 0.8), int(day * 0.3)
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
    energy = [heat_day, 812, 14, dhw_day, 310, 4, 0, 0, 0, 0, elec_day, 905, 4, elec_dhw_day, 120, 1]
    return ({500: sys_a, 509: sys_b, 541: sys_c, 2500: [status, 0, 0, 0, 0, 0, 0], 3500: energy, 5000: [2, 390]},
            {1500: [2] + [0] * 10})


def start_isg(clock: Callable[[], float]) -> DemoPeer:
    """Start the simulated ISG on a free loopback port; values follow clock()."""
    from pymodbus.server import ModbusTcpServer
    from pymodbus.simulator import DataType, SimData, SimDevice

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
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
