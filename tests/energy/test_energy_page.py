"""The demo's /energy: its three smart plugs, the lab's draw and its bill, in the navigation."""

from __future__ import annotations

import time
from pathlib import Path

from demo.history import seed_everything
from tests.test_web import demo_app, fetch


def test_the_demo_opens_energy_on_its_plugs_and_a_months_bill(tmp_path: Path) -> None:
    app = demo_app(tmp_path, 80, runs=2, shared=False)
    seed_everything(app.state.store, int(time.time()))  # as `rackpulse demo` does after its first round
    got = fetch(app, "/api/v1/energy").json()
    assert {s["source"] for s in got["sources"]} == {"rack", "network", "desk"}
    assert got["lab"]["watts"] == 345.1  # 194.1 + 37 + 114 W at story time 80
    assert got["lab"]["month"]["kwh"] > 0 and got["lab"]["month"]["cost"] > 0 and got["currency"] == "EUR"
    page = fetch(app, "/energy").text
    assert "The lab draws <strong>345 W</strong>" in page and 'id="source-rack"' in page
    assert '<a href="/energy" aria-current="page">Energy</a>' in page
