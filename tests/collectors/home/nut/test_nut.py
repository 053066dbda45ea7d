"""UPS over NUT (against a real upsd + dummy-ups), and over UPS-MIB (against a real snmpd)."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.base import CollectorError, ParseError
from collectors.home.nut.collector import NutCollector, parse_list_var
from collectors.home.nut.config import UpsdTarget
from collectors.snmpwire import SnmpTarget
from tests.peers import running
from tests.peers.nut import NutPeer


def test_list_var_replies_parse_with_escapes() -> None:
    lines = ["BEGIN LIST VAR ups", 'VAR ups ups.status "OB LB"', r'VAR ups ups.model "Back-UPS \"ES\" 700"',
             "END LIST VAR ups"]
    assert parse_list_var(lines, "ups") == {"ups.status": "OB LB", "ups.model": 'Back-UPS "ES" 700'}


@pytest.mark.parametrize(("lines", "message"), [
    (["ERR DRIVER-NOT-CONNECTED"], "Driver not connected"),
    (["ERR DATA-STALE"], "Data stale"),
    (["BEGIN LIST VAR ups", 'VAR ups x "1"'], "not framed"),
    (["BEGIN LIST VAR ups", "garbage", "END LIST VAR ups"], "unexpected line"),
    ([], "empty"),
])
def test_errors_and_broken_replies_are_clear(lines: list[str], message: str) -> None:
    with pytest.raises(CollectorError, match=message):
        parse_list_var(lines, "ups")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=8))
def test_no_reply_crashes_the_parser(lines: list[str]) -> None:
    try:
        parse_list_var(["BEGIN LIST VAR u", *lines, "END LIST VAR u"], "u")
    except (ParseError, CollectorError):
        pass


@pytest.fixture(scope="module")
def ups() -> Iterator[NutPeer]:
    with running(NutPeer, "nut") as peer:
        yield peer


def collect(peer: NutPeer) -> dict:  # type: ignore[type-arg]
    c = NutCollector([UpsdTarget(port=peer.port, username="monitor", password="monpass")], timeout=2)
    return c.collect().state.ups[0]


@pytest.mark.parametrize(("state", "flags", "on_battery", "low", "charge"), [
    ("OL", ["OL"], False, False, 100),
    ("OB", ["DISCHRG", "OB"], True, False, 64),
    ("OBLB", ["DISCHRG", "LB", "OB"], True, True, 8),
    ("OLCHRG", ["CHRG", "OL"], False, False, 47),
])
def test_the_real_ups_states_are_read(ups: NutPeer, state: str, flags: list[str], on_battery: bool, low: bool,
                                      charge: int) -> None:
    ups.set_state(state)
    got = collect(ups)
    assert (got.flags, got.on_battery, got.low_battery, got.charge) == (flags, on_battery, low, charge)


def test_time_on_battery_is_counted_and_metrics_are_named(ups: NutPeer) -> None:
    ups.set_state("OB")
    c = NutCollector([UpsdTarget(port=ups.port)], timeout=2)
    c.collect()
    time.sleep(1.1)
    r = c.collect()
    values = {s.metric: s.value for s in r.samples if "flag" not in dict(s.labels)}
    assert values["rackpulse_ups_on_battery"] == 1 and values["rackpulse_ups_on_battery_seconds"] >= 1
    assert values["rackpulse_ups_battery_voltage_volts"] == 12.3
    assert values["rackpulse_ups_battery_charge_ratio"] == 0.64
    assert values["rackpulse_ups_runtime_seconds"] == 840
    ups.set_state("OL")


def test_a_stale_driver_and_a_dead_driver_are_errors_with_nuts_words(ups: NutPeer) -> None:
    c = NutCollector([UpsdTarget(port=ups.port)], timeout=2)
    ups.freeze_driver(True)
    try:
        deadline = time.monotonic() + 20
        message = ""
        while time.monotonic() < deadline:
            try:
                c.collect()
            except CollectorError as exc:
                message = str(exc)
                break
            time.sleep(0.5)
        assert "Data stale" in message
    finally:
        ups.freeze_driver(False)
    ups.stop_driver()
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                c.collect()
            except CollectorError as exc:
                if "Driver not connected" in str(exc):
                    break
            time.sleep(0.3)
        else:
            pytest.fail("never saw 'Driver not connected'")
    finally:
        ups.start_driver()
        ups.wait_status("OL")


def test_upsd_down_is_a_connection_error() -> None:
    from tests.peers.nut import free_port

    with pytest.raises(CollectorError, match="cannot connect"):
        NutCollector([UpsdTarget(port=free_port())], timeout=1).collect()


def test_ups_mib_values_map_to_nut_variables() -> None:
    from collectors.home.nut.upsmib import ups_mib_to_nut

    assert ups_mib_to_nut({"output_source": 5, "battery_status": 3, "charge_remaining": 42, "battery_voltage": 121,
                           "minutes_remaining": 7, "output_load": 30}) == {
        "ups.status": "OB DISCHRG LB", "battery.charge": "42", "battery.voltage": "12.1", "ups.load": "30",
        "battery.runtime": "420"}
    with pytest.raises(CollectorError, match="upsOutputSource"):
        ups_mib_to_nut({"output_source": None})


@pytest.mark.peers
def test_a_ups_with_a_network_card_is_read_through_ups_mib_from_a_real_snmpd() -> None:
    from tests.peers.snmpd import Snmpd

    mib = "\n".join(f"override .1.3.6.1.2.1.33.1.{oid} integer {v}" for oid, v in (
        ("2.1.0", 3), ("2.2.0", 125), ("2.3.0", 4), ("2.4.0", 18), ("2.5.0", 117), ("4.1.0", 5)))
    base = Path(tempfile.mkdtemp(prefix="rackpulse-upsmib-"))
    agent = Snmpd(base, extra=mib)
    try:
        agent.up()
        target = SnmpTarget(name="rack-ups", host="127.0.0.1", port=agent.port, community=agent.community, timeout=1, retries=0)
        r = NutCollector([], snmp_targets=[target]).collect()
    finally:
        agent.down()
        shutil.rmtree(base, ignore_errors=True)
    u = r.state.ups[0]
    assert (u.name, u.on_battery, u.low_battery, u.charge, u.battery_voltage, u.runtime) == (
        "rack-ups", True, True, 18, 11.7, 240)



def test_the_ups_draw_is_a_source_of_the_labs_energy_from_its_load_and_nominal_power(ups: NutPeer) -> None:
    # dummy-ups says ups.load 23 and ups.realpower.nominal 390 (no ups.realpower): 89.7 W
    now = [1_000_000.0]
    c = NutCollector([UpsdTarget(port=ups.port)], timeout=2, interval=10, clock=lambda: now[0])
    c.collect()
    now[0] += 10
    r = c.collect()
    got = {(s.metric, dict(s.labels).get("source")): s.value for s in r.samples}
    assert got[("rackpulse_power_watts", "ups12v")] == 89.7
    assert got[("rackpulse_energy_joules_total", "ups12v")] == pytest.approx(897.0)
    assert r.state.ups[0].watts == 89.7


def test_ups_mib_output_power_is_the_ups_draw_in_watts() -> None:
    from collectors.home.nut.upsmib import ups_mib_to_nut

    assert ups_mib_to_nut({"output_source": 3, "output_power": 412})["ups.realpower"] == "412"
