"""The range a page's charts open on: 24 hours when all is well; when something is wrong, the
shortest range that shows it in its last quarter, with the calm before it."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from app.web.story_range import began, range_for

NOW = 1_800_000_000.0


@pytest.mark.parametrize("ago, expected", [
    (None, "24h"),
    (60, "1h"),           # the demo's failures: minutes old
    (15 * 60, "1h"),      # a quarter of an hour: the last quarter of one
    (15 * 60 + 1, "6h"),
    (5 * 3600, "24h"),
    (36 * 3600, "7d"),    # a disk failing since yesterday
    (6 * 86400, "30d"),
    (200 * 86400, "1y"),  # older than any range's quarter: the longest
])
def test_the_range_shows_what_went_wrong_in_its_last_quarter(ago: float | None, expected: str) -> None:
    assert range_for([] if ago is None else [NOW - ago, NOW - 10], NOW) == expected


@dataclass
class Alert:
    state: str
    since: float
    subject: str = ""
    labels: dict[str, str] = field(default_factory=dict)


def test_only_pending_and_firing_alerts_about_the_page_count() -> None:
    states = {("md_degraded", "md0"): Alert("firing", NOW - 300, "md0", {"array": "md0"}),
              ("smart_failing", "ZA1049HK"): Alert("pending", NOW - 100, "ZA1049HK", {"array": "md0"}),
              ("ups_on_battery", "ups12v"): Alert("firing", NOW - 9000, "ups12v"),
              ("bgp_down", "10.0.0.2"): Alert("resolved", NOW - 90000, "10.0.0.2")}
    assert sorted(began(states, [("md_degraded", "md0")])) == [NOW - 300]
    assert sorted(began(states, subject="md0")) == [NOW - 300, NOW - 100]  # by subject or a label
    assert began(states, [("bgp_down", "10.0.0.2")]) == []  # over: the page is calm again
    assert began(states, subject="sdq") == []


def test_a_page_about_a_firing_alert_opens_on_the_hour_and_keeps_it_in_its_live_address(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import re

    from tests.test_web import demo_app, fetch

    def drawn(path: str) -> tuple[set[str], list[str], list[str]]:
        page = fetch(app, path).text
        return (set(re.findall(r'data-chart="[^"]*range=(\w+)', page)),
                re.findall(r'<a href="\?range=(\w+)" aria-current="true">', page), re.findall(r'hx-get="([^"]*)"', page))

    app = demo_app(tmp_path, 80, runs=2, shared=False)  # md0 has just lost a disk; the bond's eoip4 drops
    assert drawn("/entity/md_array/md0")[:2] == ({"24h"}, ["24h"])  # no alert judged yet: the calm day
    assert drawn("/network") == ({"24h"}, ["24h"], ["/network?range=24h"])
    app.state.get_alerting().tick(app.state.snapshot)  # md_degraded and the bond's alerts begin now
    assert drawn("/entity/md_array/md0")[:2] == ({"1h"}, ["1h"])
    # the next live update asks for the range shown, so the charts do not jump when the alert ends
    assert drawn("/network") == ({"1h"}, ["1h"], ["/network?range=1h"])
    assert drawn("/entity/md_array/md0?range=7d")[:2] == ({"7d"}, ["7d"])  # a range asked for is drawn
    assert drawn("/network?range=6h")[2] == ["/network?range=6h"]
    assert drawn("/heatpump")[0] <= {"24h"}  # a page with nothing wrong stays on the day
