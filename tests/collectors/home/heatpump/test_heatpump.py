"""The heat pump over ISG Modbus TCP, against a pymodbus server holding an ISG register map."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collectors.base import CollectorError
from collectors.home.heatpump.collector import HeatpumpCollector
from collectors.home.heatpump.isg_map import decode
from collectors.home.heatpump.state import HeatpumpState
from tests.peers.isg import IsgSim, lwz_registers, wpm3_registers


@pytest.mark.parametrize(("dtype", "words", "value"), [
    ("t10", [0xFFAB], -8.5),  # negative outside temperature, int16 x0.1
    ("t10", [485], 48.5),
    ("t100", [185], 1.85),
    ("u16", [65535], 65535.0),
    ("i16", [0xFFFD], -3.0),  # CAN bus status -3 (bus-off)
    ("t10", [0x8000], None),  # "not available", checked before scaling
    ("t10", [0x9000], None),
    ("total", [345, 6], 6345.0),  # LOW kWh, HIGH MWh
    ("total", [345, 0x8000], None),
])
def test_register_words_decode_to_values(dtype: str, words: list[int], value: float | None) -> None:
    assert decode(dtype, words) == value


DTYPES = ["t10", "t100", "u16", "i16", "total"]


@given(st.sampled_from(DTYPES), st.sampled_from([0x8000, 0x9000]), st.integers(0, 0xFFFF))
def test_a_not_available_word_decodes_to_not_available_for_every_type(dtype: str, sentinel: int, other: int) -> None:
    assert decode(dtype, [sentinel, other]) is None
    assert decode("total", [other, sentinel]) is None  # the high word of a total too


@given(st.sampled_from(DTYPES), st.lists(st.integers(0, 0xFFFF), min_size=2, max_size=2))
def test_every_other_word_decodes_to_a_value_in_the_range_of_its_type(dtype: str, words: list[int]) -> None:
    value = decode(dtype, words)
    if words[0] in (0x8000, 0x9000) or (dtype == "total" and words[1] in (0x8000, 0x9000)):
        assert value is None
        return
    assert value is not None
    low, high = {"u16": (0, 65535), "i16": (-32768, 32767), "t10": (-3276.8, 3276.7), "t100": (-327.68, 327.67),
                 "total": (0, 65535 * 1000 + 65535)}[dtype]
    assert low <= value <= high


@pytest.fixture
def wpm3() -> Iterator[IsgSim]:
    sim = IsgSim(wpm3_registers())
    sim.start()
    yield sim
    sim.stop()


def test_a_wpm3_is_detected_and_read_block_by_block(wpm3: IsgSim) -> None:
    c = HeatpumpCollector("127.0.0.1", wpm3.port, timeout=2)
    r = c.collect()
    s = r.state
    assert s.controller == "WPM 3"
    assert s.temperatures["outside"] == -5.3 and s.temperatures["hot_water_actual"] == 48.5
    assert "room" not in s.temperatures  # 0x8000: no room sensor fitted
    assert s.flags["compressor"] and s.flags["heating"] and not s.flags["hot_water"]
    assert s.energy_counters["heat_heating"] == 6000 + 345 + 12
    assert s.efficiency_today == 3.0
    assert r.warnings == ["controller refuses input block 3538+7 (exception 2); not read again"]
    assert s.refused_blocks == ["input registers from 3538"]  # the page says it in words, not "4:3538"
    metrics = {(m.metric, tuple(sorted(dict(m.labels).items()))): m.value for m in r.samples}
    assert metrics[("rackpulse_heatpump_temperature_celsius", (("sensor", "outside"),))] == -5.3
    assert metrics[("rackpulse_heatpump_compressor_running", ())] == 1
    assert metrics[("rackpulse_heatpump_info", (("controller", "WPM 3"),))] == 1
    r2 = c.collect()
    assert r2.warnings == [] and c.requests == 7  # the refused block is not asked for again


def test_it_never_sends_a_write(wpm3: IsgSim) -> None:
    c = HeatpumpCollector("127.0.0.1", wpm3.port, timeout=2)
    for _ in range(3):
        c.collect()
    assert wpm3.function_codes and set(wpm3.function_codes) <= {3, 4}


def test_values_changed_on_the_gateway_are_seen(wpm3: IsgSim) -> None:
    c = HeatpumpCollector("127.0.0.1", wpm3.port, timeout=2)
    c.collect()
    wpm3.set_input(506, [(-120) & 0xFFFF])
    wpm3.set_input(2503, [1])  # fault status
    wpm3.set_input(2506, [59])  # active error number
    s = c.collect().state
    assert s.temperatures["outside"] == -12.0 and s.fault and s.active_error == 59


def test_energy_counters_stay_monotonic_across_midnight(wpm3: IsgSim) -> None:
    c = HeatpumpCollector("127.0.0.1", wpm3.port, timeout=2)
    before = c.collect().state.energy_counters["heat_heating"]  # 6345 total + 12 today
    # Midnight: the ISG moves 11 whole kWh into the total and keeps 0.x in the day register (shown as 0).
    wpm3.set_input(3500, [0, 356, 6])
    after = c.collect().state.energy_counters["heat_heating"]
    assert (before, after) == (6357, 6357)  # 6356 + 0 would go backwards: the counter holds
    wpm3.set_input(3500, [2, 356, 6])
    assert c.collect().state.energy_counters["heat_heating"] == 6358


def test_the_gateway_restarting_is_an_error_then_a_reconnect(wpm3: IsgSim) -> None:
    c = HeatpumpCollector("127.0.0.1", wpm3.port, timeout=1)
    c.collect()
    wpm3.stop()
    with pytest.raises(CollectorError):
        c.collect()
    with pytest.raises(CollectorError, match="Modbus TCP extension must be enabled"):
        c.collect()
    wpm3.start()
    assert c.collect().state.temperatures["outside"] == -5.3


def test_connection_changes_are_logged_once_per_transition(wpm3: IsgSim, caplog: pytest.LogCaptureFixture) -> None:
    import logging

    caplog.set_level(logging.INFO, logger="collectors.heatpump")
    c = HeatpumpCollector("127.0.0.1", wpm3.port, timeout=1)
    c.collect()
    c.collect()
    wpm3.stop()
    for _ in range(3):
        with pytest.raises(CollectorError):
            c.collect()
    wpm3.start()
    c.collect()
    where = f"ISG 127.0.0.1:{wpm3.port}"
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO] == [
        f"{where} connected", f"{where} not reachable", f"{where} connected"]


def test_a_closed_port_says_to_enable_the_modbus_extension() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(CollectorError, match="Modbus TCP extension must be enabled on the ISG"):
        HeatpumpCollector("127.0.0.1", port, timeout=1).collect()


def test_a_gateway_that_accepts_but_never_answers_is_an_error_about_no_response() -> None:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    conns: list[socket.socket] = []
    threading.Thread(target=lambda: conns.append(srv.accept()[0]), daemon=True).start()
    try:
        # The collector gives up on its own timeout (the wording says so), not the scheduler's.
        with pytest.raises(CollectorError, match="No response received"):
            HeatpumpCollector("127.0.0.1", srv.getsockname()[1], timeout=0.5).collect()
    finally:
        srv.close()
        for c in conns:
            c.close()


def test_an_lwz_uses_its_own_map() -> None:
    sim = IsgSim(lwz_registers())
    sim.start()
    try:
        s = HeatpumpCollector("127.0.0.1", sim.port, timeout=2).collect().state
    finally:
        sim.stop()
    assert s.controller == "LWZ/LWA" and s.temperatures["outside"] == 2.5
    assert s.flags["compressor"] and s.flags["heating"]
    assert s.energy_counters["heat_heating"] == 3000 + 120 + 8


def drawn_joules(c: HeatpumpCollector) -> tuple[float, HeatpumpState]:
    r = c.collect()
    values = [s.value for s in r.samples if s.metric == "rackpulse_energy_joules_total"
              and dict(s.labels) == {"source": "heatpump"}]
    assert len(values) == 1
    return values[0] / 3_600_000, r.state


def test_the_heat_pumps_electricity_is_a_lab_energy_source_that_books_no_rebased_jump(wpm3: IsgSim) -> None:
    c = HeatpumpCollector("127.0.0.1", wpm3.port, timeout=2)
    # compressor heating 1555 + 4 today, hot water 130 + 1, boosters 0: where its counters stand
    assert drawn_joules(c)[0] == 1690
    wpm3.set_input(3510, [6])  # 2 kWh more for heating today
    assert drawn_joules(c)[0] == 1692
    # The controller swapped: its heating total reads 3555 from now on. Two reads are skipped as
    # bad, the third takes it as the new base; the 2000 kWh jump is no energy drawn.
    wpm3.set_input(3511, [555, 3])
    assert [drawn_joules(c)[0] for _ in range(3)] == [1692, 1692, 1692]
    wpm3.set_input(3510, [8])
    drawn, state = drawn_joules(c)
    assert drawn == 1694 and state.energy_counters["electricity_heating"] == 3563
    # after a restart it goes on from the stored state, not from the counters' sum (3694)
    again = HeatpumpCollector("127.0.0.1", wpm3.port, timeout=2)
    again.restore(state)
    assert drawn_joules(again)[0] == 1694


def test_a_counter_set_back_to_a_lower_base_is_skipped_then_taken_and_counts_again_from_there(wpm3: IsgSim) -> None:
    c = HeatpumpCollector("127.0.0.1", wpm3.port, timeout=2)
    assert drawn_joules(c)[0] == 1690  # heating's electricity 1555 + 4 today
    # A replaced controller: its heating total starts again near zero. One such read could as well
    # be a torn register pair: skipped and said, twice; the third agreeing read is the new base.
    wpm3.set_input(3511, [10, 0])
    seen = []
    for _ in range(3):
        r = c.collect()
        seen.append(([w for w in r.warnings if "electricity_heating fell from 1559 to 14" in w] != [],
                     r.state.energy_counters["electricity_heating"]))
    assert seen == [(True, 1559), (True, 1559), (False, 14)]
    wpm3.set_input(3510, [6])  # 2 kWh more today: counted from the new base
    drawn, state = drawn_joules(c)
    assert drawn == 1692 and state.energy_counters["electricity_heating"] == 16
    # the ISG's own midnight dip (a whole kWh moved from the day register) is still no fall
    wpm3.set_input(3510, [0, 15, 0])
    assert c.collect().warnings == [] and drawn_joules(c)[0] == 1692
