"""RAPL over a powercap tree written from the kernel's documentation (no machine here has RAPL:
tests/fixtures/rapl/README.md), its counters moved between reads on a clock the test holds. The
permission the kernel sets since 5.10 is checked for real: an unprivileged user reads the tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from collectors.base import CollectorError, NoData
from collectors.host.rapl.collector import RaplCollector
from collectors.host.rapl.config import RaplConfig
from collectors.host.rapl.powercap import read_zones, rise_uj
from collectors.host.rapl.state import RaplState
from tests.paths import FIXTURES

TREE = FIXTURES / "rapl" / "sys" / "class" / "powercap"
MAX_UJ = 262143328850


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "powercap"
    shutil.copytree(TREE, root)
    return root


def move(root: Path, zone: str, joules: float) -> None:
    """The zone's counter `joules` further on, wrapping past its range as the hardware does."""
    f = root / zone / "energy_uj"
    limit = int((root / zone / "max_energy_range_uj").read_text())
    f.write_text(f"{(int(f.read_text()) + round(joules * 1e6)) % limit}\n")


def values(result: object, metric: str) -> dict[str, float]:
    return {dict(s.labels).get("zone") or dict(s.labels)["source"]: s.value
            for s in result.samples if s.metric == metric}  # type: ignore[attr-defined]


def test_every_zone_is_read_under_its_packages_name_and_the_mmio_copy_is_left_out() -> None:
    zones = read_zones(TREE)
    assert [(z.id, z.name, z.top) for z in zones] == [
        ("intel-rapl:0", "package-0", True), ("intel-rapl:0:0", "package-0/core", False),
        ("intel-rapl:0:1", "package-0/dram", False), ("intel-rapl:1", "package-1", True),
        ("intel-rapl:1:0", "package-1/core", False), ("intel-rapl:1:1", "package-1/dram", False)]
    assert zones[0].energy_uj == 240422366267 and zones[0].max_uj == MAX_UJ


def test_a_counter_that_wrapped_rose_by_what_it_had_left_plus_what_it_reads() -> None:
    assert rise_uj(MAX_UJ - 500, 1500, MAX_UJ) == 2000
    assert rise_uj(1000, 3000, MAX_UJ) == 2000


def test_the_draw_and_energy_of_each_zone_and_of_the_cpu_source_come_from_the_counters_rise(tree: Path) -> None:
    clock = Clock()
    c = RaplCollector(tree, RaplConfig(), clock)
    first = c.collect()
    assert values(first, "rackpulse_rapl_power_watts") == {}  # a rate needs two reads
    assert values(first, "rackpulse_energy_joules_total") == {"cpu": 0.0}
    assert "rackpulse_power_watts" not in {s.metric for s in first.samples}
    clock.t += 30
    move(tree, "intel-rapl:0", 3000)  # 100 W
    move(tree, "intel-rapl:0:0", 1800)  # its cores: 60 W of it
    move(tree, "intel-rapl:1", 1500)  # 50 W
    r = c.collect()
    watts = values(r, "rackpulse_rapl_power_watts")
    assert (watts["package-0"], watts["package-0/core"], watts["package-1"], watts["package-1/dram"]) == (
        100.0, 60.0, 50.0, 0.0)
    assert values(r, "rackpulse_power_watts") == {"cpu": 150.0}  # the packages, their parts not added again
    assert values(r, "rackpulse_energy_joules_total") == {"cpu": 4500.0}
    assert values(r, "rackpulse_rapl_energy_joules_total")["package-0"] == 3000.0


def test_a_counter_that_passes_its_range_and_starts_again_from_zero_keeps_its_draw(tree: Path) -> None:
    clock = Clock()
    (tree / "intel-rapl:0" / "energy_uj").write_text(f"{MAX_UJ - 1_000_000_000}\n")  # 1000 J before its end
    c = RaplCollector(tree, RaplConfig(), clock)
    c.collect()
    clock.t += 30
    move(tree, "intel-rapl:0", 3000)
    assert int((tree / "intel-rapl:0" / "energy_uj").read_text()) == 2_000_000_000  # read as a smaller number
    r = c.collect()
    assert values(r, "rackpulse_rapl_power_watts")["package-0"] == 100.0 and r.warnings == []
    assert values(r, "rackpulse_energy_joules_total") == {"cpu": 3000.0}
    state = r.state
    assert isinstance(state, RaplState) and state.source_watts == 100.0


def test_a_counter_someone_reset_is_not_booked_as_energy(tree: Path) -> None:
    clock = Clock()
    c = RaplCollector(tree, RaplConfig(), clock)
    c.collect()
    clock.t += 30
    (tree / "intel-rapl:1" / "energy_uj").write_text("5000000\n")  # `echo 0 > energy_uj`, then 5 J
    r = c.collect()
    assert r.warnings == ["RAPL package-1: counter moved 64032 J in 30 s, more than 2000 W: a reset or a bad read, "
                          "not booked"]
    assert values(r, "rackpulse_energy_joules_total") == {"cpu": 0.0}
    clock.t += 30
    move(tree, "intel-rapl:1", 600)  # from the new base on, as usual
    r = c.collect()
    assert r.warnings == [] and values(r, "rackpulse_rapl_power_watts")["package-1"] == 20.0


def test_after_a_restart_the_cpus_energy_goes_on_from_the_stored_state(tree: Path) -> None:
    clock = Clock()
    c = RaplCollector(tree, RaplConfig(source="r720-cpu"), clock)
    c.collect()
    clock.t += 60
    move(tree, "intel-rapl:0", 6000)
    state = c.collect().state
    again = RaplCollector(tree, RaplConfig(source="r720-cpu"), clock)
    again.restore(state)
    clock.t += 60
    move(tree, "intel-rapl:0", 6000)  # while nothing read it: unknown, not booked
    r = again.collect()
    assert values(r, "rackpulse_energy_joules_total") == {"r720-cpu": 6000.0}
    clock.t += 60
    move(tree, "intel-rapl:0", 3000)
    assert values(again.collect(), "rackpulse_energy_joules_total") == {"r720-cpu": 9000.0}


def test_no_powercap_tree_is_no_data_not_a_failure(tmp_path: Path) -> None:
    with pytest.raises(NoData, match="no RAPL zones under"):
        RaplCollector(tmp_path / "absent", RaplConfig()).collect()


def test_a_counter_the_kernel_will_not_let_rackpulse_read_is_one_error_that_says_how_to_grant_it(
        tree: Path) -> None:
    # Linux 5.10+ serves energy_uj as root's, mode 0400. Here the file is another user's, mode
    # 0400, read by this test's user without the capabilities that let root read anything (util-
    # linux's setpriv drops them): the kernel refuses the read as it refuses rackpulse's.
    counter = tree / "intel-rapl:0" / "energy_uj"
    code = ("import sys; from pathlib import Path; from collectors.host.rapl.collector import RaplCollector\n"
            "from collectors.host.rapl.config import RaplConfig\nfrom collectors.base import CollectorError\n"
            "try:\n    RaplCollector(Path(sys.argv[1]), RaplConfig()).collect()\n"
            "except CollectorError as exc:\n    print(exc)\n")
    if os.geteuid() == 0:
        os.chown(counter, 65534, 65534)
        counter.chmod(0o400)
        argv = ["setpriv", "--inh-caps=-all", "--bounding-set=-all", sys.executable, "-c", code, str(tree)]
    else:
        counter.chmod(0)
        argv = [sys.executable, "-c", code, str(tree)]
    repo = Path(__file__).resolve().parents[4]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=repo, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"RAPL: {counter}: permission denied (energy_uj is readable by root only since "
                                  "Linux 5.10 (CVE-2020-8694): give rackpulse's group read access with the udev rule")


def test_a_counter_that_is_not_a_number_is_an_error_quoting_it(tree: Path) -> None:
    (tree / "intel-rapl:1" / "energy_uj").write_text("\x00\x00garbage\n")
    with pytest.raises(CollectorError, match=r"intel-rapl:1/energy_uj: not a counter: '\\x00\\x00garbage'"):
        RaplCollector(tree, RaplConfig()).collect()
