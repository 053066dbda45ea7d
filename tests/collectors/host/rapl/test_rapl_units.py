"""RAPL read from a powercap tree laid out as Documentation/power/powercap/powercap.rst says, read
by read with a clock the test moves: zones in order with their parts named under their package,
MMIO twins left out, the counter's wrap crossed, a jump past max_watts refused and said, the
platform zone shown but not added to the CPUs' source, and each unreadable file named."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.base import CollectorError, NoData
from collectors.host.rapl.collector import UDEV_HINT, RaplCollector
from collectors.host.rapl.config import RaplConfig
from collectors.host.rapl.powercap import PowercapError, Zone, read_zones, rise_uj


def zone(root: Path, zid: str, name: str, energy: int, max_uj: int = 262143328850) -> Path:
    d = root / zid
    d.mkdir(parents=True, exist_ok=True)
    (d / "name").write_text(f"{name}\n")
    (d / "energy_uj").write_text(f"{energy}\n")
    (d / "max_energy_range_uj").write_text(f"{max_uj}\n")
    return d


def set_energy(root: Path, zid: str, energy: int) -> None:
    (root / zid / "energy_uj").write_text(f"{energy}\n")


def test_zones_come_packages_first_with_parts_under_their_packages_name(tmp_path: Path) -> None:
    zone(tmp_path, "intel-rapl:1", "package-1", 5)
    zone(tmp_path, "intel-rapl:0:1", "uncore", 3)
    zone(tmp_path, "intel-rapl:0", "package-0", 1)
    zone(tmp_path, "intel-rapl:0:0", "core", 2)
    zone(tmp_path, "intel-rapl:10", "psys", 9)
    zone(tmp_path, "intel-rapl-mmio:0", "package-0", 7)  # the same counter read another way
    (tmp_path / "intel-rapl:2").mkdir()  # no name: not a zone the driver made whole
    zones = read_zones(tmp_path)
    assert [(z.id, z.name, z.energy_uj, z.top) for z in zones] == [
        ("intel-rapl:0", "package-0", 1, True), ("intel-rapl:0:0", "package-0/core", 2, False),
        ("intel-rapl:0:1", "package-0/uncore", 3, False), ("intel-rapl:1", "package-1", 5, True),
        ("intel-rapl:10", "psys", 9, True)]
    assert [z.platform for z in zones] == [False, False, False, False, True]
    assert zones[0].max_uj == 262143328850


def test_a_part_whose_package_is_missing_is_named_by_the_packages_id(tmp_path: Path) -> None:
    zone(tmp_path, "intel-rapl:3:0", "dram", 1)
    assert [z.name for z in read_zones(tmp_path)] == ["intel-rapl:3/dram"]


def test_no_powercap_folder_is_no_zones(tmp_path: Path) -> None:
    assert read_zones(tmp_path / "absent") == []


@pytest.mark.parametrize(("text", "error"), [("lots", "not a counter: 'lots'"), ("", "not a counter: ''")])
def test_a_counter_that_is_not_a_number_names_its_file(tmp_path: Path, text: str, error: str) -> None:
    d = zone(tmp_path, "intel-rapl:0", "package-0", 1)
    (d / "energy_uj").write_text(text)
    with pytest.raises(PowercapError) as err:
        read_zones(tmp_path)
    assert str(err.value) == f"{d / 'energy_uj'}: {error}"


def test_a_missing_counter_file_names_it(tmp_path: Path) -> None:
    d = zone(tmp_path, "intel-rapl:0", "package-0", 1)
    (d / "max_energy_range_uj").unlink()
    with pytest.raises(PowercapError, match=r"max_energy_range_uj: No such file or directory$"):
        read_zones(tmp_path)


@pytest.mark.parametrize(("before", "now", "rise"), [(10, 25, 15), (25, 25, 0), (90, 5, 15), (100, 0, 0)])
def test_a_counter_rises_across_one_wrap(before: int, now: int, rise: int) -> None:
    assert rise_uj(before, now, 100) == rise


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def collector(root: Path, **cfg: object) -> tuple[RaplCollector, Clock]:
    clock = Clock()
    return RaplCollector(root, RaplConfig(**cfg), clock), clock  # type: ignore[arg-type]


def values(result: object, metric: str) -> dict[str, float]:
    return {dict(s.labels).get("zone", dict(s.labels).get("source", "")): s.value
            for s in result.samples if s.metric == metric}  # type: ignore[attr-defined]


def test_each_read_books_the_rise_and_the_draw_over_the_time_since(tmp_path: Path) -> None:
    zone(tmp_path, "intel-rapl:0", "package-0", 0)
    zone(tmp_path, "intel-rapl:0:0", "core", 0)
    zone(tmp_path, "intel-rapl:10", "psys", 0)
    c, clock = collector(tmp_path)
    first = c.collect()
    assert values(first, "rackpulse_rapl_power_watts") == {}  # nothing to measure a draw against yet
    assert values(first, "rackpulse_rapl_energy_joules_total") == {"package-0": 0.0, "package-0/core": 0.0, "psys": 0.0}
    clock.t += 10
    set_energy(tmp_path, "intel-rapl:0", 350_000_000)  # 350 J in 10 s: 35 W
    set_energy(tmp_path, "intel-rapl:0:0", 200_000_000)
    set_energy(tmp_path, "intel-rapl:10", 900_000_000)
    second = c.collect()
    assert values(second, "rackpulse_rapl_power_watts") == {"package-0": 35.0, "package-0/core": 20.0, "psys": 90.0}
    assert values(second, "rackpulse_rapl_energy_joules_total") == {"package-0": 350.0, "package-0/core": 200.0,
                                                                     "psys": 900.0}
    state = second.state
    assert (state.source, state.source_watts, state.source_joules) == ("cpu", 35.0, 350.0)  # psys not added
    assert [(z.name, z.top, z.watts) for z in state.zones] == [("package-0", True, 35.0),
                                                               ("package-0/core", False, 20.0), ("psys", True, 90.0)]


def test_two_packages_make_one_source_and_an_unknown_draw_of_one_leaves_it_unknown(tmp_path: Path) -> None:
    zone(tmp_path, "intel-rapl:0", "package-0", 0)
    zone(tmp_path, "intel-rapl:1", "package-1", 0)
    c, clock = collector(tmp_path)
    c.collect()
    clock.t += 2
    set_energy(tmp_path, "intel-rapl:0", 20_000_000)
    set_energy(tmp_path, "intel-rapl:1", 30_000_000)
    r = c.collect()
    assert (r.state.source_watts, r.state.source_joules) == (25.0, 50.0)
    set_energy(tmp_path, "intel-rapl:1", 10**15)  # a bad read of one package
    clock.t += 2
    r = c.collect()
    assert r.state.source_watts is None and r.state.source_joules == 50.0
    assert r.warnings == ["RAPL package-1: counter moved 999999970 J in 2 s, more than 2000 W: a reset or a bad read, "
                          "not booked"]


def test_a_rise_of_exactly_max_watts_is_booked_and_a_wrap_is_crossed(tmp_path: Path) -> None:
    zone(tmp_path, "intel-rapl:0", "package-0", 90_000_000, max_uj=100_000_000)
    c, clock = collector(tmp_path, max_watts=10.0)
    c.collect()
    clock.t += 2
    set_energy(tmp_path, "intel-rapl:0", 10_000_000)  # wrapped: 10 J + 10 J = 20 J in 2 s = 10 W
    r = c.collect()
    assert r.warnings == [] and r.state.source_joules == 20.0 and r.state.source_watts == 10.0


def test_a_read_at_the_same_instant_books_nothing(tmp_path: Path) -> None:
    zone(tmp_path, "intel-rapl:0", "package-0", 0)
    c, _ = collector(tmp_path)
    c.collect()
    set_energy(tmp_path, "intel-rapl:0", 5_000_000)
    r = c.collect()
    assert r.state.source_watts is None and r.state.source_joules == 0.0


def test_no_zones_is_no_data_and_a_refused_counter_says_the_udev_rule(tmp_path: Path) -> None:
    c, _ = collector(tmp_path / "none")
    with pytest.raises(NoData, match="no RAPL zones under"):
        c.collect()
    d = zone(tmp_path, "intel-rapl:0", "package-0", 0)
    (d / "energy_uj").write_text("x")
    c, _ = collector(tmp_path)
    with pytest.raises(CollectorError) as err:
        c.collect()
    assert str(err.value).startswith("RAPL: ") and UDEV_HINT not in str(err.value)
    assert "udev rule" in UDEV_HINT


def test_a_restored_collector_goes_on_from_its_stored_energy(tmp_path: Path) -> None:
    zone(tmp_path, "intel-rapl:0", "package-0", 0)
    c, clock = collector(tmp_path)
    c.collect()
    clock.t += 10
    set_energy(tmp_path, "intel-rapl:0", 100_000_000)
    before = c.collect().state
    again, clock2 = collector(tmp_path)
    again.restore(before)
    again.restore("not a state")  # type: ignore[arg-type]  # another type: ignored
    again.collect()
    clock2.t += 10
    set_energy(tmp_path, "intel-rapl:0", 150_000_000)
    after = again.collect().state
    assert after.source_joules == 150.0 and after.zones[0].energy_joules == 150.0


def test_the_counters_most_is_max_watts() -> None:
    c = RaplCollector(Path("/nonexistent"), RaplConfig(max_watts=250.0))
    limits = c.counter_limits()
    assert {m.per_second for m in limits.values()} == {250.0}
    assert set(limits) == {"rackpulse_rapl_energy_joules_total", "rackpulse_energy_joules_total"}
    assert Zone("a", "psys", 0, 1, True).platform and not Zone("a", "package-0", 0, 1, True).platform


# -- the edges make mutation found unpinned ------------------------------------------------------------


def test_build_reads_the_powercap_tree_under_the_host_root(tmp_path: Path) -> None:
    from collectors.context import HostContext
    from collectors.host.rapl.collector import build

    zone(tmp_path / "sys/class/powercap", "intel-rapl:0", "package-0", 0)
    c = build(RaplConfig(source="server"), HostContext("h", tmp_path), lambda argv, timeout: None)  # type: ignore[arg-type,return-value]
    state = c.collect().state
    assert [z.name for z in state.zones] == ["package-0"] and state.source == "server"


def test_figures_are_rounded_to_centiwatts_and_millijoules(tmp_path: Path) -> None:
    zone(tmp_path, "intel-rapl:0", "package-0", 0)
    c, clock = collector(tmp_path)
    c.collect()
    clock.t += 3
    set_energy(tmp_path, "intel-rapl:0", 1_000_123)  # 1.000123 J in 3 s
    r = c.collect()
    assert values(r, "rackpulse_rapl_power_watts") == {"package-0": 0.33}
    assert values(r, "rackpulse_rapl_energy_joules_total") == {"package-0": 1.0}
    assert (r.state.source_watts, r.state.source_joules, r.state.zones[0].energy_joules) == (0.33, 1.0, 1.0)
    clock.t += 3
    set_energy(tmp_path, "intel-rapl:0", 2_001_123)
    r = c.collect()
    assert r.state.source_joules == 2.001 and r.state.zones[0].energy_joules == 2.001
    assert r.warnings == []


def test_a_read_at_the_same_instant_is_neither_booked_nor_a_bad_read(tmp_path: Path) -> None:
    zone(tmp_path, "intel-rapl:0", "package-0", 0)
    c, _ = collector(tmp_path)
    c.collect()
    set_energy(tmp_path, "intel-rapl:0", 5_000_000)
    assert c.collect().warnings == []


def test_a_counter_root_may_not_read_says_the_udev_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = zone(tmp_path, "intel-rapl:0", "package-0", 0)
    real = Path.read_text

    def refuse(self: Path, *a: object, **k: object) -> str:
        if self.name == "energy_uj":
            raise PermissionError(13, "Permission denied")
        return real(self, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", refuse)
    c, _ = collector(tmp_path)
    with pytest.raises(CollectorError) as err:
        c.collect()
    assert str(err.value) == f"RAPL: {d / 'energy_uj'}: permission denied ({UDEV_HINT})"


def test_a_long_bad_counter_is_quoted_to_40_characters(tmp_path: Path) -> None:
    d = zone(tmp_path, "intel-rapl:0", "package-0", 0)
    (d / "energy_uj").write_text("y" * 100)
    with pytest.raises(PowercapError) as err:
        read_zones(tmp_path)
    assert str(err.value) == f"{d / 'energy_uj'}: not a counter: {'y' * 40!r}"


def test_a_zone_with_a_part_that_is_not_a_number_is_still_ordered(tmp_path: Path) -> None:
    zone(tmp_path, "intel-rapl:0", "package-0", 0)
    zone(tmp_path, "intel-rapl:0:x", "odd", 0)
    zone(tmp_path, "intel-rapl:0:0", "core", 0)
    assert [z.id for z in read_zones(tmp_path)] == ["intel-rapl:0", "intel-rapl:0:0", "intel-rapl:0:x"]


def test_the_counters_slack_is_a_joule() -> None:
    c = RaplCollector(Path("/nonexistent"), RaplConfig())
    assert {m.slack for m in c.counter_limits().values()} == {1.0}
