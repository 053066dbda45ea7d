"""Bay history: every disk that has sat in each bay and how it left, through restarts; a bay that
loses two disks in a year is a finding."""

from __future__ import annotations

import json
from pathlib import Path

from collectors.disks.smart.bay_history import of_bay, update
from collectors.disks.smart.collector import SmartCollector
from collectors.disks.smart.findings import findings
from collectors.disks.smart.state import BayStay, Disk, SmartState
from collectors.findings import Judging
from collectors.location import BayRule
from collectors.state import dump
from tests.collectors.disks.smart.standin import StandIn
from tests.states import one

DAY = 86400.0


class Shelf:
    def __init__(self, tmp: Path, devices: dict[str, str], bays: dict[str, str]) -> None:
        self.tmp = tmp
        self.smartctl = StandIn(tmp, devices)
        self.bays = bays  # serial -> bay label
        self.now = 1_760_000_000.0
        self.collector = self.fresh()

    def fresh(self) -> SmartCollector:
        return SmartCollector(self.tmp, self.smartctl.argv, bays=[BayRule(b, serial=s) for s, b in self.bays.items()],
                              clock=lambda: self.now)

    def collect(self) -> SmartState:
        self.now += DAY
        return self.collector.collect().state  # type: ignore[return-value]

    def disks(self, devices: dict[str, str]) -> None:
        s = self.smartctl.read()
        s["disks"] = {dev: s["disks"].get(dev) or {"serial": ser, "hours": 100, "standby": False, "running": None,
                                                   "log": []} for dev, ser in devices.items()}
        for dev, ser in devices.items():
            s["disks"][dev]["serial"] = ser
        self.smartctl.write(s)

    def restart(self, state: SmartState) -> None:
        """What a restart does: a new collector given the state stored in the database."""
        stored = one("smart", json.loads(json.dumps(dump(state))))
        self.collector = self.fresh()
        self.collector.restore(stored)


def stays(state: SmartState, bay: str) -> list[tuple[str, str | None]]:
    return [(s.serial, s.how) for s in of_bay(state.bays, bay)]


def test_a_disk_moved_from_bay_3_to_bay_5_is_remembered_through_a_restart(tmp_path: Path) -> None:
    shelf = Shelf(tmp_path, {"/dev/sda": "AAA", "/dev/sdb": "BBB"}, {"AAA": "bay 3", "BBB": "bay 4"})
    state = shelf.collect()
    shelf.bays["AAA"] = "bay 5"  # the same disk, now found in bay 5 (after a restart)
    shelf.restart(state)
    state = shelf.collect()
    assert stays(state, "bay 3") == [("AAA", "moved to bay 5")]
    assert stays(state, "bay 5") == [("AAA", None)]
    shelf.restart(state)
    state = shelf.collect()
    assert stays(state, "bay 3") == [("AAA", "moved to bay 5")] and stays(state, "bay 4") == [("BBB", None)]


def test_a_pulled_disk_and_its_replacement_each_have_their_stay(tmp_path: Path) -> None:
    shelf = Shelf(tmp_path, {"/dev/sda": "AAA"}, {"AAA": "bay 1", "NEW": "bay 1"})
    first = shelf.collect()
    shelf.disks({})
    shelf.smartctl.write({**shelf.smartctl.read(), "disks": {}})
    shelf.collector.devices = ["/dev/sda"]  # asked by name: it does not answer now
    shelf.disks({"/dev/sdb": "NEW"})
    shelf.collector.devices = []
    state = shelf.collect()
    assert stays(state, "bay 1") == [("NEW", None), ("AAA", "replaced")]
    old = of_bay(state.bays, "bay 1")[1]
    assert old.first_seen == first.bays[0].first_seen and old.left == shelf.now


def test_a_disk_that_does_not_answer_once_has_not_left_its_bay(tmp_path: Path) -> None:
    shelf = Shelf(tmp_path, {"/dev/sda": "AAA"}, {"AAA": "bay 1"})
    shelf.collect()
    shelf.collector.devices = ["/dev/sda", "/dev/sdz"]
    shelf.smartctl.change("/dev/sda", serial="AAA")
    before = shelf.collector._stays
    assert update(before, [], {"sda"}, shelf.now + 1) == before


def test_a_failed_disk_leaves_as_failed_and_two_in_a_year_make_the_bay_a_finding() -> None:
    t0 = 1_760_000_000.0

    def disk(key: str, health: str) -> Disk:
        return Disk(key=key, device="sdh", bay="bay 7", health={"ok": 0, "failing": 2}[health], health_name=health)

    history: list[BayStay] = update([], [disk("AAA", "failing")], set(), t0)
    history = update(history, [disk("BBB", "ok")], set(), t0 + 30 * DAY)
    history = update(history, [disk("BBB", "failing")], set(), t0 + 200 * DAY)
    history = update(history, [disk("CCC", "ok")], set(), t0 + 201 * DAY)
    assert [(s.serial, s.how) for s in of_bay(history, "bay 7")] == [("CCC", None), ("BBB", "failed"),
                                                                     ("AAA", "failed")]
    state = SmartState(disks=[disk("CCC", "ok")], bays=history)
    found = [f for f in findings(state, Judging(now=t0 + 202 * DAY)) if f.rule == "bay_losing_disks"]
    assert len(found) == 1 and found[0].text.startswith("bay 7 has lost 2 disks since ")
    assert found[0].text.endswith("(AAA, BBB): check its cable and backplane slot")
    # a year after the first loss only one is left within the year: no finding
    assert not [f for f in findings(state, Judging(now=t0 + 30 * DAY + 366 * DAY)) if f.rule == "bay_losing_disks"]


def test_one_disk_failing_again_after_being_put_back_is_one_loss_not_two() -> None:
    """The demo's story loops: the same disk fails in bay 7 every loop; that is not a bad slot."""
    t0 = 1_760_000_000.0
    history: list[BayStay] = []
    for loop in range(5):
        t = t0 + loop * 240
        history = update(history, [Disk(key="ZA1049HK", device="sdh", bay="bay 7", health=2, health_name="failing")],
                         set(), t)
        history = update(history, [Disk(key="ZR9Q0NEWK", device="sdm", bay="bay 7", health=0, health_name="ok")],
                         set(), t + 120)
    state = SmartState(bays=history)
    assert not [f for f in findings(state, Judging(now=t0 + 2000)) if f.rule == "bay_losing_disks"]
