"""The 24-hour line beside a row's value (app/web/sparkline.py): drawn from zero up to its peak,
broken where the thing was away, its label saying the peak and the value now, read from the
store once per five minutes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.storage.base import Point
from app.storage.db import make_engine, upgrade
from app.storage.store import Store
from app.web import sparkline
from app.web.sparkline import HEIGHT, WIDTH, Sparks, draw, per_second, segments, words
from collectors.base import Sample

NOW = 1_800_000_000


def pts(*pairs: tuple[int, float]) -> list[Point]:
    return [Point(t, v, v, v) for t, v in pairs]


def test_nothing_to_draw_draws_nothing() -> None:
    assert draw([], NOW - 86400, NOW, "CPU", "rackpulse_pve_guest_cpu_ratio") == ""


def test_the_line_runs_from_zero_at_the_bottom_to_the_peak_at_the_top_across_the_day() -> None:
    svg = draw(pts((NOW - 1800, 0.0), (NOW - 900, 0.5), (NOW, 0.25)), NOW - 1800, NOW, "CPU",
               "rackpulse_pve_guest_cpu_ratio")
    line = re.search(r'<polyline points="([^"]+)"/>', svg)
    assert line is not None
    xy = [tuple(map(float, p.split(","))) for p in line[1].split()]
    assert xy == [(0.0, HEIGHT - 1), (WIDTH / 2, 1.0), (WIDTH, HEIGHT / 2)]
    assert 'aria-label="CPU, last 24 h: peak 50 %, latest 25 %"' in svg and "<title>CPU, last 24 h" in svg


def test_a_stretch_without_points_is_a_hole_in_the_line_not_a_straight_line_across_it() -> None:
    day = pts((NOW - 7200, 1), (NOW - 6900, 1), (NOW - 600, 2), (NOW - 300, 2), (NOW, 2))
    assert [[p.ts for p in run] for run in segments(day, gap=900)] == [[NOW - 7200, NOW - 6900],
                                                                        [NOW - 600, NOW - 300, NOW]]
    svg = draw(day + pts((NOW + 5000, 3)), NOW - 86400, NOW + 5000, "x", "rackpulse_x")
    assert svg.count("<polyline") == 2 and svg.count("<circle") == 1  # a lone point is a dot


def test_a_counter_is_drawn_as_its_rate_and_a_restart_is_no_negative_rate() -> None:
    assert per_second(pts((0, 100), (10, 300), (20, 50), (30, 150))) == pts((10, 20.0), (30, 10.0))
    assert per_second(pts((0, 1), (0, 2))) == []


@pytest.mark.parametrize("metric, value, rate, said", [
    ("rackpulse_pve_guest_cpu_ratio", 0.41, False, "41 %"),
    ("rackpulse_pve_guest_cpu_ratio", 0.021, False, "2.1 %"),
    ("rackpulse_pve_guest_cpu_ratio", 0.0, False, "0 %"),
    ("rackpulse_pve_guest_memory_used_bytes", 3.2e9, False, "3.2 GB"),
    ("rackpulse_pve_guest_memory_used_bytes", 512e6, False, "512.0 MB"),
    ("rackpulse_pve_guest_memory_used_bytes", 12, False, "12 B"),
    ("rackpulse_libvirt_domain_cpu_seconds_total", 0.05, True, "5.0 %"),
    ("rackpulse_pve_guest_network_receive_bytes_total", 1.5e6, True, "12.0 Mbit/s"),
])
def test_values_are_said_in_their_charts_unit(metric: str, value: float, rate: bool, said: str) -> None:
    assert words(metric, value, rate) == said


def test_a_title_is_escaped() -> None:
    svg = draw(pts((NOW, 1)), NOW - 86400, NOW, 'CPU of <b>"x"</b>', "rackpulse_x")
    assert "<b>" not in svg and "&lt;b&gt;" in svg


def test_the_store_is_read_once_per_five_minutes_and_each_series_apart(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    upgrade(url)
    store = Store(make_engine(url), "nas")
    sparkline._kept.clear()

    def write(ts: int, value: float) -> None:
        with store.engine.begin() as conn:
            store.write_samples(conn, ts, [Sample.of("rackpulse_pve_guest_cpu_ratio", value, vmid="100"),
                                           Sample.of("rackpulse_pve_guest_cpu_ratio", value / 2, vmid="101")])

    clock = [float(NOW)]
    spark = Sparks(store, clock=lambda: clock[0])
    write(NOW - 600, 0.2)
    first = spark("rackpulse_pve_guest_cpu_ratio", {"vmid": 100}, "CPU")
    assert "peak 20 %" in first and "peak 10 %" in spark("rackpulse_pve_guest_cpu_ratio", {"vmid": "101"}, "CPU")
    write(NOW - 60, 0.9)  # the last five minutes hold two samples now: the line shows their mean
    write(NOW - 30, 0.1)
    clock[0] += 299
    assert spark("rackpulse_pve_guest_cpu_ratio", {"vmid": "100"}, "CPU") == first  # kept
    clock[0] += 1
    assert "peak 90 %, latest 50 %" in spark("rackpulse_pve_guest_cpu_ratio", {"vmid": "100"}, "CPU")
    assert spark("rackpulse_pve_guest_cpu_ratio", {"vmid": "999"}, "CPU") == ""  # no such series
    store.engine.dispose()
