"""Time-of-use bands priced by the minute, and bands that overlap refused with both named: pure
arithmetic over hourly energy (app/energy/bill.py), and check-config on a real file."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from app.energy.bill import bills
from app.energy.config import EnergyConfig
from tests.cli import run_cli

BERLIN = ZoneInfo("Europe/Berlin")
KWH = 3.6e6


def a_day_of_one_kwh_an_hour(day: datetime) -> list[tuple[int, float]]:
    start = int(day.timestamp())
    return [(start + h * 3600, KWH) for h in range(24)]


def test_a_band_from_22_30_prices_half_of_the_22_oclock_hour() -> None:
    cfg = EnergyConfig(price_per_kwh=0.40, tariffs=[{"from": "22:30", "to": "06:00", "price": 0.20}])
    day = datetime(2026, 11, 10, tzinfo=BERLIN)
    (b,) = bills({"rack": a_day_of_one_kwh_an_hour(day)}, cfg, day.timestamp() + 86400, BERLIN)
    # 7.5 hours at 0.20 and 16.5 at 0.40; priced by the hour's start it was 7 and 17: 8.20
    assert b.month.cost == pytest.approx(7.5 * 0.20 + 16.5 * 0.40)
    assert cfg.price_of_hour(22 * 60) == pytest.approx(0.30) and cfg.price_of_hour(23 * 60) == 0.20


def test_a_band_edge_on_any_minute_is_priced_from_that_minute() -> None:
    cfg = EnergyConfig(price_per_kwh=0.30, tariffs=[{"from": "13:17", "to": "13:47", "price": 0.0}])
    assert cfg.price_of_hour(13 * 60) == pytest.approx(0.30 * 30 / 60)
    assert cfg.price_of_hour(13 * 60 + 30) == pytest.approx(0.30 * 43 / 60)  # 13:30-14:30: 17 free minutes


@pytest.mark.parametrize(("bands", "words"), [
    ([("22:00", "06:00"), ("05:00", "07:00")], "22:00-06:00 and 05:00-07:00 overlap from 05:00 (60 minutes a day)"),
    ([("08:00", "12:00"), ("11:59", "13:00")], "08:00-12:00 and 11:59-13:00 overlap from 11:59 (1 minutes a day)"),
])
def test_overlapping_bands_are_refused_naming_both(bands: list[tuple[str, str]], words: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(words)):
        EnergyConfig(tariffs=[{"from": a, "to": b, "price": 0.1} for a, b in bands])


def test_bands_that_meet_at_an_edge_do_not_overlap() -> None:
    cfg = EnergyConfig(price_per_kwh=0.3, tariffs=[{"from": "22:00", "to": "06:00", "price": 0.2},
                                                   {"from": "06:00", "to": "08:00", "price": 0.25}])
    assert (cfg.price_at(5 * 60 + 59), cfg.price_at(6 * 60), cfg.price_at(8 * 60)) == (0.2, 0.25, 0.3)


def test_check_config_refuses_overlapping_bands_and_names_them(tmp_path: Path) -> None:
    cfg = tmp_path / "rackpulse.toml"
    cfg.write_text('[energy]\nprice_per_kwh = 0.3\n[[energy.tariffs]]\nfrom = "22:00"\nto = "06:00"\nprice = 0.2\n'
                   '[[energy.tariffs]]\nfrom = "05:30"\nto = "09:00"\nprice = 0.25\n')
    r = run_cli("check-config", "--config", str(cfg))
    assert r.returncode != 0
    assert "22:00-06:00 and 05:30-09:00 overlap" in r.stdout + r.stderr
