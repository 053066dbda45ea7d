"""A pymodbus TCP server playing a Stiebel Eltron ISG (WPM 3 or LWZ register map), in a
background thread with its own event loop. It records the function code of every request
so a test can prove that rackpulse never writes."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from pymodbus.server import ModbusTcpServer
from pymodbus.simulator import DataType, SimData, SimDevice

from tests.peers import free_port

NA = 0x8000


def _w(value: float, scale: float = 10) -> int:
    return round(value * scale) & 0xFFFF


def wpm3_registers(outside: float = -5.3, dhw: float = 48.5, status: int = 0x0050, fault: int = 0,
                   error: int = 0, heat_day: int = 12, heat_total_kwh: int = 345, heat_total_mwh: int = 6,
                   elec_day: int = 4) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    """(input blocks, holding blocks) of a WPM 3 (controller 390). The runtime block 3538
    is left out: the controller answers it with exception 2."""
    sys_a = [NA] * 8  # 500..507
    sys_a[6] = _w(outside)
    sys_a[7] = _w(21.5)  # heating circuit actual
    sys_b = [NA] * 29  # 509..537
    sys_b[0] = _w(35.0)  # 509 HK1 set
    for wire, value in ((512, 38.2), (514, 36.9), (515, 31.4), (517, 40.0), (518, 42.0), (521, dhw), (522, 50.0),
                        (535, 4.1)):
        sys_b[wire - 509] = _w(value)
    sys_b[519 - 509] = _w(1.85, 100)  # pressure bar
    sys_b[520 - 509] = _w(22.4, 100)  # flow rate
    sys_c = [_w(31.0), _w(38.0), _w(72.5), NA, NA, _w(18.3, 100)]  # 541..546
    state = [status, 0, 0, fault, 0, 0, error]  # 2500..2506
    energy = [heat_day, heat_total_kwh, heat_total_mwh, 3, 410, 2, 0, 0, 0, 0, elec_day, 555, 1, 1, 130, 0]
    return ({500: sys_a, 509: sys_b, 541: sys_c, 2500: state, 3500: energy, 5000: [2, 390]},
            {1500: [2] + [0] * 10})


def lwz_registers(starts: int = 2345, booster_heating: int = 40) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    """An LWZ (controller 103): its own blocks, with the energy block 3000..3031 (the booster's
    heat totals at 3006/3008) and the compressor starts at 30 (thousands) and 33."""
    block = [NA] * 34
    block[6] = _w(2.5)
    block[11], block[12], block[15] = _w(33.0), _w(29.0), _w(46.0)
    block[30], block[33] = starts // 1000, starts % 1000
    energy = [8, 120, 3, 2, 200, 1, booster_heating, 0, 5, 0] + [0] * 11 + [3, 900, 0, 1, 100, 0] + [0] * 5
    return ({0: block, 2000: [0b110, 0, 0, 0, 0], 3000: energy, 5000: [2, 103]}, {1000: [11]})


class IsgSim:
    def __init__(self, registers: tuple[dict[int, list[int]], dict[int, list[int]]]) -> None:
        self.inputs, self.holdings = registers
        self.port = free_port()
        self.function_codes: list[int] = []
        self.loop: asyncio.AbstractEventLoop | None = None
        self.server: ModbusTcpServer | None = None
        self.thread: threading.Thread | None = None

    def _device(self) -> SimDevice:
        bits = [SimData(0, values=False, datatype=DataType.BITS)]
        ir = [SimData(a, values=v, datatype=DataType.REGISTERS) for a, v in sorted(self.inputs.items())]
        hr = [SimData(a, values=v, datatype=DataType.REGISTERS, readonly=True) for a, v in sorted(self.holdings.items())]
        return SimDevice(0, simdata=(bits, bits, hr, ir))

    def _trace(self, sending: bool, pdu: Any) -> Any:
        if not sending:
            self.function_codes.append(int(pdu.function_code))
        return pdu

    def _start_once(self) -> None:
        ready = threading.Event()

        def run() -> None:
            self.loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self.loop)

            async def main() -> None:
                self.server = ModbusTcpServer(self._device(), address=("127.0.0.1", self.port),
                                              trace_pdu=self._trace)
                await self.server.serve_forever(background=True)
                ready.set()

            self.loop.run_until_complete(main())
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        if not ready.wait(10):
            raise RuntimeError("ISG simulator did not start")

    def start(self, tries: int = 5) -> None:
        """Serve, on another free port when the one picked was taken between its pick and the
        listen: the calendar sweep runs six suites at once, and one lost that race in CI."""
        for attempt in range(tries):
            try:
                self._start_once()
                return
            except RuntimeError:
                if attempt == tries - 1:
                    raise
                self.port = free_port()

    def set_input(self, wire: int, words: list[int]) -> None:
        assert self.loop and self.server
        fut = asyncio.run_coroutine_threadsafe(self.server.async_setValues(0, 4, wire, words), self.loop)
        fut.result(5)

    def stop(self) -> None:
        if self.loop and self.server:
            asyncio.run_coroutine_threadsafe(self.server.shutdown(), self.loop).result(10)
            self.loop.call_soon_threadsafe(self.loop.stop)
        if self.thread:
            self.thread.join(10)
        self.server = None
