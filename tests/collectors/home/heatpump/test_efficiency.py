"""The heat pump's efficiency over time: the day book read from a pymodbus ISG serving the energy
block (wire 3500..3515 on a WPM, 3000..3031 on an LWZ), COP per day, month and season, the
booster's share, short cycling, defrosts and the fault list."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest

from collectors.findings import Judging
from collectors.home.heatpump.collector import HeatpumpCollector
from collectors.home.heatpump.findings import findings
from collectors.home.heatpump.isg_map import fault_words
from collectors.home.heatpump.ledger import HeatpumpDay, fold, months, season_of, seasons, total
from collectors.home.heatpump.state import HeatpumpState
from collectors.state import dump, load
from tests.peers.isg import IsgSim, lwz_registers, wpm3_registers

DAY = dt.date(2026, 1, 14)


def at(hour: float, day: dt.date = DAY) -> float:
    """A local time on the test's calendar, as the collector's clock reads it."""
    return dt.datetime.combine(day, dt.time()).timestamp() + hour * 3600


def energy(heat: int = 0, heat_total: int = 6345, dhw: int = 0, dhw_total: int = 2410, nhz: int = 0, nhz_dhw: int = 0,
           el: int = 0, el_total: int = 1555, el_dhw: int = 0, el_dhw_total: int = 730) -> list[int]:
    """The WPM energy block, wire 3500..3515, from day values and totals in kWh (totals split into
    LOW kWh and HIGH MWh as the ISG serves them)."""
    def split(kwh: int) -> list[int]:
        return [kwh % 1000, kwh // 1000]
    return [heat, *split(heat_total), dhw, *split(dhw_total), *split(nhz), *split(nhz_dhw), el, *split(el_total),
            el_dhw, *split(el_dhw_total)]


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def isg() -> Iterator[IsgSim]:
    sim = IsgSim(wpm3_registers())
    sim.start()
    sim.set_input(3500, energy())
    yield sim
    sim.stop()


def collector(isg: IsgSim, clock: Clock, **thresholds: float) -> HeatpumpCollector:
    return HeatpumpCollector("127.0.0.1", isg.port, timeout=2, thresholds=thresholds, clock=clock)


def book_of(c: HeatpumpCollector) -> dict[str, HeatpumpDay]:
    return {d.date: d for d in c.days}


def test_a_days_cop_is_its_heat_over_its_electricity_for_heating_hot_water_and_both(isg: IsgSim) -> None:
    clock = Clock(at(6))
    c = collector(isg, clock)
    c.collect()  # the first poll sets where the counters stand; nothing is booked yet
    clock.t = at(18)
    isg.set_input(3500, energy(heat=30, dhw=6, el=10, el_dhw=3))
    state = c.collect().state
    day = total("d", [book_of(c)[DAY.isoformat()]])
    assert (day.heat_heating, day.electricity_heating, day.heat_hot_water, day.electricity_hot_water) == (30, 10, 6, 3)
    assert (day.cop_heating, day.cop_hot_water, day.cop) == (3.0, 2.0, round(36 / 13, 2))
    samples = {(m.metric, dict(m.labels).get("period")): m.value for m in c.collect().samples}
    assert samples[("rackpulse_heatpump_cop", "today")] == round(36 / 13, 2)
    assert state.days[-1].date == DAY.isoformat()


def test_the_midnight_reset_loses_no_energy_and_books_each_kwh_on_its_day(isg: IsgSim) -> None:
    clock = Clock(at(12))
    c = collector(isg, clock)
    isg.set_input(3500, energy(heat=20, el=6))
    c.collect()
    clock.t = at(23.9)
    isg.set_input(3500, energy(heat=41, el=12))
    c.collect()
    # Midnight: the ISG moves today's whole kWh into the totals and starts the day registers over.
    clock.t = at(0.1, DAY + dt.timedelta(days=1))
    isg.set_input(3500, energy(heat=0, heat_total=6345 + 41, el=0, el_total=1555 + 12))
    c.collect()
    clock.t = at(7, DAY + dt.timedelta(days=1))
    isg.set_input(3500, energy(heat=15, heat_total=6345 + 41, el=5, el_total=1555 + 12))
    c.collect()
    days = book_of(c)
    today, tomorrow = days[DAY.isoformat()], days[(DAY + dt.timedelta(days=1)).isoformat()]
    assert (today.heat_heating, today.electricity_heating) == (21, 6)
    assert (tomorrow.heat_heating, tomorrow.electricity_heating) == (15, 5)
    assert c._energy["heat_heating"] == 6345 + 41 + 15  # the running counter never went back


def test_a_restart_books_what_was_used_while_down_and_keeps_the_days_before(isg: IsgSim) -> None:
    clock = Clock(at(8))
    first = collector(isg, clock)
    first.collect()
    clock.t = at(10)
    isg.set_input(3500, energy(heat=10, el=3))
    stored = dump(first.collect().state)  # what the database keeps
    # rackpulse is down from 10:00 to 16:00; the heat pump is not.
    clock.t = at(16)
    isg.set_input(3500, energy(heat=40, el=12))
    again = collector(isg, clock)
    again.restore(load(HeatpumpState, stored))
    again.collect()
    day = book_of(again)[DAY.isoformat()]
    assert (day.heat_heating, day.electricity_heating) == (40, 12)


def test_the_boosters_total_rising_at_midnight_is_booked_on_the_day_it_ran(isg: IsgSim) -> None:
    clock = Clock(at(22))
    c = collector(isg, clock)
    c.collect()
    # The ISG closes the day: the booster's 7 kWh of heating appear in its total after midnight,
    # whenever the ISG gets to it (here seen on the next day's second poll, two hours in).
    clock.t = at(1, DAY + dt.timedelta(days=1))
    c.collect()
    clock.t = at(2, DAY + dt.timedelta(days=1))
    isg.set_input(3500, energy(nhz=7))
    c.collect()
    days = book_of(c)
    assert days[DAY.isoformat()].backup_heating == 7
    assert days[(DAY + dt.timedelta(days=1)).isoformat()].backup_heating == 0


def mild_day_with_booster(isg: IsgSim, outside: float, booster: int) -> list[str]:
    """A day at `outside` °C on which the booster made `booster` kWh of 40 + booster; the rules fired."""
    isg.set_input(506, [round(outside * 10) & 0xFFFF])
    clock = Clock(at(6))
    c = collector(isg, clock, backup_share=0.10, backup_below_celsius=-5.0)
    c.collect()
    clock.t = at(20)
    isg.set_input(3500, energy(heat=40, el=12))
    c.collect()
    clock.t = at(0.05, DAY + dt.timedelta(days=1))
    isg.set_input(3500, energy(heat=0, heat_total=6385, el=0, el_total=1567, nhz=booster))
    state = c.collect().state
    return [f.rule or "" for f in findings(state, Judging())]


@pytest.mark.parametrize(("outside", "booster", "fires"), [
    (2.0, 8, True),  # mild, 8 of 48 kWh: a setting, not the cold
    (-8.0, 8, False),  # colder than -5 °C: the booster is meant to help
    (2.0, 3, False),  # 3 of 43 kWh: 7 %, under 10 %
    (2.0, 0, False),
])
def test_the_booster_finding_fires_on_a_mild_day_it_made_too_much_of_the_heat(
        isg: IsgSim, outside: float, booster: int, fires: bool) -> None:
    assert ("heatpump_backup_heater" in mild_day_with_booster(isg, outside, booster)) is fires


def test_compressor_starts_within_an_hour_above_the_limit_are_short_cycling(isg: IsgSim) -> None:
    clock = Clock(at(13))
    c = collector(isg, clock, max_starts_per_hour=3)
    fired = []
    for i in range(12):  # every 5 minutes the compressor bit flips: on, off, on ...
        on = i % 2 == 0
        isg.set_input(2500, [(1 << 6 | 1 << 4) if on else 0])
        state = c.collect().state
        fired.append("heatpump_short_cycling" in [f.rule for f in findings(state, Judging())])
        clock.t += 300
    assert fired.index(True) == 8  # the 4th start within the hour (polls 2, 4, 6, 8: the first poll is no start)
    assert book_of(c)[DAY.isoformat()].max_starts_per_hour == 5
    # An hour of steady running later, the starts have left the window.
    isg.set_input(2500, [1 << 6 | 1 << 4])
    for _ in range(13):
        clock.t += 300
        state = c.collect().state
    assert state.starts == [] and "heatpump_short_cycling" not in [f.rule for f in findings(state, Judging())]


def test_an_lwz_counts_its_starts_itself_and_its_boosters_heat_is_read() -> None:
    sim = IsgSim(lwz_registers(starts=2345, booster_heating=40))
    sim.start()
    try:
        clock = Clock(at(9))
        c = HeatpumpCollector("127.0.0.1", sim.port, timeout=2, clock=clock)
        first = c.collect().state
        clock.t += 600
        sim.set_input(30, [2])  # 2350: five starts in ten minutes, between two polls
        sim.set_input(33, [350])
        state = c.collect().state
    finally:
        sim.stop()
    assert first.energy_counters["backup_heating"] == 40
    assert len(state.starts) == 5 and "heatpump_short_cycling" in [f.rule for f in findings(state, Judging())]


def test_defrosts_are_counted_and_timed_per_day(isg: IsgSim) -> None:
    clock = Clock(at(5))
    c = collector(isg, clock)
    pattern = [0, 1, 1, 1, 0, 0, 1, 1, 0]  # two defrosts: three polls (two gaps) and two polls (one gap)
    for bit in pattern:
        isg.set_input(2505, [bit])
        c.collect()
        clock.t += 60
    day = book_of(c)[DAY.isoformat()]
    assert (day.defrosts, day.defrost_seconds) == (2, 180)


@pytest.mark.parametrize(("number", "words"), [
    (29, "error 29, high-pressure sensor at its maximum (HD-SENSOR-MAX)"),
    (12, "error 12, low pressure (ND)"),
    (57, "error 57 (not in the WPM's fault list: see the controller's display)"),
    (0, "the controller reports a fault (no error number)"),
])
def test_an_active_error_is_said_in_the_words_of_the_fault_list(number: int, words: str) -> None:
    assert fault_words(number) == words


def test_the_fault_read_from_the_isg_is_said_in_words(isg: IsgSim) -> None:
    isg.set_input(2503, [1])
    isg.set_input(2506, [30])
    state = collector(isg, Clock(at(9))).collect().state
    (fault,) = [f for f in findings(state, Judging()) if f.rule == "heatpump_fault"]
    assert fault.text == "heat pump fault: error 30, hot gas at its maximum (HEISSGAS MAX)"


@pytest.mark.parametrize(("date", "start_month", "season"), [
    ("2026-06-30", 7, "2025/26"), ("2026-07-01", 7, "2026/27"), ("2026-01-14", 7, "2025/26"),
    ("2026-09-30", 10, "2025/26"), ("2026-10-01", 10, "2026/27"), ("2026-03-01", 1, "2026"),
])
def test_a_day_belongs_to_the_heating_season_that_began_in_the_start_month(date: str, start_month: int,
                                                                          season: str) -> None:
    assert season_of(date, start_month) == season


def test_months_and_seasons_sum_their_days_and_their_cop_is_of_the_sums_not_a_mean_of_days() -> None:
    days = [HeatpumpDay(date="2026-06-30", heat_heating=10, electricity_heating=2),  # COP 5
            HeatpumpDay(date="2026-07-01", heat_heating=30, electricity_heating=15),  # COP 2
            HeatpumpDay(date="2026-07-02", heat_heating=50, electricity_heating=10, backup_heating=10)]
    june, july = months(days)
    assert (june.label, june.cop, july.label, july.days) == ("2026-06", 5.0, "2026-07", 2)
    assert july.cop == round((30 + 50 + 10) / (15 + 10 + 10), 2)
    assert july.backup_share == round(10 / 90, 3)
    assert [(s.label, s.days) for s in seasons(days)] == [("2025/26", 1), ("2026/27", 2)]


def test_days_older_than_the_day_book_keeps_are_folded_into_their_month_and_every_sum_stays() -> None:
    start = dt.date(2025, 9, 1)
    days = [HeatpumpDay(date=(start + dt.timedelta(days=i)).isoformat(), heat_heating=10 + i % 7,
                        electricity_heating=3 + i % 3, backup_heating=i % 5, outside_sum=(i % 11) * 10.0,
                        outside_count=10, starts=i % 4, max_starts_per_hour=i % 6, defrosts=1, defrost_seconds=60)
            for i in range(200)]
    kept, folded = fold(days, [], keep=120)
    assert len(kept) == 120 and kept[0].date == (start + dt.timedelta(days=80)).isoformat()
    assert [m.date for m in folded] == ["2025-09", "2025-10", "2025-11"] and folded[0].days == 30
    assert months([*folded, *kept]) == months(days)
    assert seasons([*folded, *kept]) == seasons(days)
    assert folded[0].max_starts_per_hour == 5  # the month keeps its worst hour
    # Folding again as days pass adds into the same month's record.
    kept2, folded2 = fold([*kept, HeatpumpDay(date="2026-03-20", heat_heating=5)], folded, keep=120)
    assert len(folded2) == 3 and folded2[-1].days == 19 + 1 and len(kept2) == 120  # Nov 1-19, then the 20th


def test_over_three_days_the_booster_finding_names_only_the_mild_day_the_booster_ran_too_much(isg: IsgSim) -> None:
    """Day 1: -8 °C, the booster makes 8 of 48 kWh (meant to). Day 2: +2 °C, 8 of 48 kWh (too
    much). Day 3: +2 °C, no booster. The ISG adds each day's booster heat after midnight."""
    clock = Clock(at(6))
    c = collector(isg, clock)
    heat, el, nhz = 6345, 1555, 0
    fired: dict[str, set[str]] = {}
    c.collect()
    for n, (outside, booster) in enumerate([(-8.0, 8), (2.0, 8), (2.0, 0)]):
        day = DAY + dt.timedelta(days=n)
        isg.set_input(506, [round(outside * 10) & 0xFFFF])
        for hour, part in ((12, 20), (23.5, 40)):  # 40 kWh of heat from 12 kWh over the day
            clock.t = at(hour, day)
            isg.set_input(3500, energy(heat=part, heat_total=heat, el=part * 12 // 40, el_total=el, nhz=nhz))
            fired[f"{day} {hour}"] = {f.subject for f in findings(c.collect().state, Judging())
                                      if f.rule == "heatpump_backup_heater"}
        heat, el, nhz = heat + 40, el + 12, nhz + booster
        clock.t = at(0.5, day + dt.timedelta(days=1))  # midnight: totals take the day, the booster's too
        isg.set_input(3500, energy(heat=0, heat_total=heat, el=0, el_total=el, nhz=nhz))
        fired[f"{day} after midnight"] = {f.subject for f in findings(c.collect().state, Judging())
                                          if f.rule == "heatpump_backup_heater"}
    mild = (DAY + dt.timedelta(days=1)).isoformat()
    assert {k: v for k, v in fired.items() if v} == {
        f"{DAY + dt.timedelta(days=1)} after midnight": {mild},  # the booster's day is known once the ISG adds it
        f"{DAY + dt.timedelta(days=2)} 12": {mild},  # and judged while it is yesterday
        f"{DAY + dt.timedelta(days=2)} 23.5": {mild}}
    assert book_of(c)[DAY.isoformat()].backup_heating == 8 and book_of(c)[mild].backup_heating == 8


def test_an_lwz_that_ends_its_energy_block_sooner_is_still_read_for_its_energy() -> None:
    inputs, holdings = lwz_registers()
    inputs[3000] = inputs[3000][:30]  # no booster run hours at 3030/3031: a read of 32 is exception 2
    sim = IsgSim((inputs, holdings))
    sim.start()
    try:
        c = HeatpumpCollector("127.0.0.1", sim.port, timeout=2, clock=Clock(at(9)))
        first = c.collect()
        state = c.collect().state
    finally:
        sim.stop()
    assert first.state.energy_counters["heat_heating"] == 3000 + 120 + 8 and first.warnings == []
    assert state.energy_counters["backup_heating"] == 40 and c.requests == 5  # the shorter read only, from then on


def test_one_0xffff_read_is_skipped_and_never_poisons_the_day_book(isg: IsgSim) -> None:
    """A single bad read (the kWh word of the heat total answering 0xFFFF) used to become 65 GWh
    that max() kept for good: today's COP read millions and real heat was never booked after it."""
    clock = Clock(at(6))
    c = collector(isg, clock)
    c.collect()
    clock.t = at(9)
    isg.set_input(3500, energy(heat=9, el=3))
    c.collect()
    clock.t = at(9.01)
    bad = energy(heat=9, el=3)
    bad[1] = 0xFFFF  # heat total, LOW word
    isg.set_input(3500, bad)
    result = c.collect()
    assert any("bad read" in w for w in result.warnings)
    assert not any(s.metric == "rackpulse_heatpump_heat_joules_total" and dict(s.labels)["use"] == "heating"
                   for s in result.samples)  # not stored
    clock.t = at(18)
    isg.set_input(3500, energy(heat=30, el=10))
    c.collect()
    day = total("d", [book_of(c)[DAY.isoformat()]])
    assert (day.heat_heating, day.electricity_heating, day.cop_heating) == (30, 10, 3.0)  # the real heat booked
    assert c._energy["heat_heating"] == 6345 + 30


def test_a_counter_that_really_moved_to_a_new_base_is_taken_after_three_reads_that_agree(isg: IsgSim) -> None:
    clock = Clock(at(6))
    c = collector(isg, clock)
    c.collect()
    for i in range(3):  # a replaced controller whose total starts elsewhere
        clock.t = at(7 + i)
        isg.set_input(3500, energy(heat=i, heat_total=90_000))
        c.collect()
    assert c._energy["heat_heating"] == 90_000 + 2
    clock.t = at(12)
    isg.set_input(3500, energy(heat=5, heat_total=90_000))
    c.collect()
    assert book_of(c)[DAY.isoformat()].heat_heating == 3  # the jump itself is booked nowhere


def test_a_booster_total_that_did_not_rise_adds_no_empty_yesterday(isg: IsgSim) -> None:
    clock = Clock(at(20))
    c = collector(isg, clock)
    c.collect()
    clock.t = at(22)
    isg.set_input(3500, energy(heat=4, el=1))
    c.collect()
    clock.t = at(1, DAY + dt.timedelta(days=1))
    isg.set_input(3500, energy(heat=0, heat_total=6345 + 4, el=0, el_total=1555 + 1))
    c.collect()
    assert sorted(book_of(c)) == [DAY.isoformat(), (DAY + dt.timedelta(days=1)).isoformat()]
    clock.t = at(2, DAY + dt.timedelta(days=2))  # two days on: still one record a day, no empty one between
    c.collect()
    assert len(c.days) == 3


def test_a_booster_heavy_days_heating_cop_counts_the_boosters_electricity_and_does_not_flatter() -> None:
    """30 kWh of compressor heat from 10 kWh, and 12 kWh from the booster (12 kWh of electricity):
    the bill sees 42 kWh of heat for 22 kWh, a COP of 1.91, not the 4.2 of heat over the compressor's
    electricity alone. Hot water alike: 6 kWh + 2 kWh booster from 3 + 2."""
    day = total("d", [HeatpumpDay(date="2026-01-14", heat_heating=30, electricity_heating=10, backup_heating=12,
                                  heat_hot_water=6, electricity_hot_water=3, backup_hot_water=2)])
    assert (day.cop_heating, day.cop_hot_water) == (round(42 / 22, 2), round(8 / 5, 2))
    assert day.cop == round(50 / 27, 2)
