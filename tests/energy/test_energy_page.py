"""The demo's /energy: its three smart plugs, the lab's draw and its bill, in the navigation."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from app.demo.history import seed_everything
from tests.test_web import demo_app, fetch


def test_the_demo_opens_energy_on_its_plugs_and_a_months_bill(tmp_path: Path) -> None:
    app = demo_app(tmp_path, 80, runs=2, shared=False)
    seed_everything(app.state.store, int(time.time()))  # as `rackpulse demo` does after its first round
    got = fetch(app, "/api/v1/energy").json()
    sources = {s["source"]: s for s in got["sources"]}
    assert set(sources) == {"rack", "network", "desk", "r720", "r430", "heatpump", "cpu", "ups12v"}
    # the NAS's CPUs (RAPL) behind the UPS (its ups.load of ups.realpower.nominal): counted there
    assert (sources["cpu"]["inside"], sources["cpu"]["watts"], sources["ups12v"]["watts"]) == ("ups12v", 42.3, 93.2)
    # the heat pump's electricity: the ISG's counters, whole kWh, no draw of the moment
    assert sources["heatpump"]["reports_power"] is False and sources["heatpump"]["watts"] is None
    # the servers' BMCs report their draw (DCMI) inside the rack plug's: shown, counted once
    assert (sources["r720"]["inside"], sources["r430"]["inside"]) == ("rack", "rack")
    assert (sources["r720"]["watts"], sources["r430"]["watts"]) == (184.0, 96.0)
    assert got["lab"]["watts"] == 586.3  # rack 342.1 + network 37 + desk 114 + the UPS 93.2 W at story time 80
    assert got["lab"]["month"]["kwh"] > 0 and got["lab"]["month"]["cost"] > 0 and got["currency"] == "EUR"
    page = fetch(app, "/energy").text.replace("&nbsp;", " ")  # "586&nbsp;W": bound to its unit, read as a space
    assert "The lab draws <strong>586 W</strong>" in page and 'id="source-rack"' in page
    assert '<td data-label="Source">heatpump</td>\n<td data-label="Now"><small>kWh only</small></td>' in page
    assert 'data-source="rack"' in page and 'data-source="r720"' not in page  # inside the rack: not stacked again
    assert '<a href="/energy" aria-current="page">Energy</a>' in page


def test_the_demos_energy_counters_keep_rising_across_the_storys_loop(tmp_path: Path) -> None:
    # The story loops every 240 s; a plug's or a CPU's counter that went back with it read as a
    # plug rebooting each loop (a month's kWh booked again every four minutes, seen in a 30-minute
    # demo), or as a counter reset the RAPL collector books nothing of.
    import json

    from app.demo import story
    from collectors.home.smartplugs.demo import ScenePlugs

    rack, cpu = [], []
    for t in (200.0, 239.0, 241.0, 300.0, 479.5, 480.5):
        story.write_tree(tmp_path, story.story_state(t))
        said = dict(ScenePlugs(tmp_path)())
        rack.append(json.loads(said["shellyplugpm-rack/status/switch:0"])["aenergy"]["total"])
        cpu.append(int((tmp_path / "sys/class/powercap/intel-rapl:0/energy_uj").read_text()))
    assert rack == sorted(rack) and len(set(rack)) == len(rack)
    assert cpu == sorted(cpu) and len(set(cpu)) == len(cpu)
    # and at the story's pace: the rack's 330 W for the 280.5 s from 200 to 480.5, give or take its swing
    assert abs((rack[-1] - rack[0]) * 3600 / 280.5 - 330) < 14


def test_a_bands_source_is_escaped_and_its_figures_are_those_the_table_rounds_to() -> None:
    # The bands are written in Python, not by the template (bench/page_cpu.py: most of the page's
    # cost): a source's name comes from a plug's own topic, so it is escaped there as Jinja would.
    from app.energy.chart import Band, Stack
    from app.web.energy import bands_svg

    st = Stack("30d", [], [], {})
    st.bands = [Band('<img src=x onerror="a">', 1, 10.5, 20.25, 5.0, 3.1, 1.23456)]
    assert str(bands_svg(st)) == (
        '<rect class="src-1" x="10.5" y="20.25" width="5.0" height="3.1" '
        'data-source="&lt;img src=x onerror=&#34;a&#34;&gt;" data-kwh="1.235">'
        '<title>&lt;img src=x onerror=&#34;a&#34;&gt;: 1.23&nbsp;kWh</title></rect>\n')


@pytest.mark.parametrize("highest, ticks", [
    (25.0, ["0 kWh", "5 kWh", "10 kWh", "15 kWh", "20 kWh", "25 kWh"]),  # was 0, 6.25, 12.5, 18.75, 25
    (18.2, ["0 kWh", "5 kWh", "10 kWh", "15 kWh", "20 kWh"]),
    (2.4, ["0 kWh", "0.5 kWh", "1.0 kWh", "1.5 kWh", "2.0 kWh", "2.5 kWh"]),
    (0.33, ["0 kWh", "0.1 kWh", "0.2 kWh", "0.3 kWh", "0.4 kWh"]),
    (0.0, ["0 kWh", "0.2 kWh", "0.4 kWh", "0.6 kWh", "0.8 kWh", "1.0 kWh"]),
])
def test_the_bars_axis_ticks_on_round_figures_with_their_unit(highest: float, ticks: list[str]) -> None:
    from app.energy.chart import Stack, draw

    st = Stack("24h", [datetime(2026, 12, 1, h) for h in range(24)], ["ups"], {"ups": [highest] + [0.0] * 23})
    draw(st)
    assert [label for _, label in st.ticks] == ticks
    assert st.top >= highest


def test_no_period_label_is_cut_off_at_the_charts_edges_and_days_read_as_month_and_day() -> None:
    from app.energy.chart import CHAR, LEFT, WIDTH, Stack, draw

    days = [datetime(2026, 11, 2) + timedelta(days=i) for i in range(30)]
    st = Stack("30d", days, ["ups"], {"ups": [1.0] * 30})
    draw(st)
    assert st.labels[-1][1:] == ("12-01", "end")
    for x, label, anchor in st.labels:
        width = len(label) * CHAR
        left = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
        assert LEFT <= left and left + width <= WIDTH, label


@pytest.mark.parametrize("value, said", [(0.33, "0.33"), (9.97, "9.97"), (18.2, "18.2"), (18.25, "18.2"),
                                         (99.94, "99.9"), (7236.4, "7236"), (None, "–"), (float("nan"), "–")])
def test_an_amount_of_energy_is_rounded_one_way_wherever_a_page_says_kwh(value: float | None, said: str) -> None:
    from app.words import kwh

    assert kwh(value) == said


def test_the_energy_page_says_each_kwh_with_one_rounding(tmp_path: Path) -> None:
    import re

    page = fetch(demo_app(tmp_path, 80), "/energy").text
    figures = re.findall(r"(\d+(?:\.\d+)?)&nbsp;kWh", page)
    assert figures
    for f in figures:  # two decimals under 10, one under 100, none above
        decimals = len(f.split(".")[1]) if "." in f else 0
        assert decimals == (2 if float(f) < 10 else 1 if float(f) < 100 else 0), f
