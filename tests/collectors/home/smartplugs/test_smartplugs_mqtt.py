"""Smart plugs over a real Mosquitto the test starts: Shelly Gen2 and Tasmota payloads as their
documentation gives them (collectors/home/smartplugs/payloads.py) published as the plugs do, read
as watts and energy; a plug that reboots loses no energy, a plug gone silent is "no data", a
broker that is down stalls nothing."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import paho.mqtt.client as paho
import pytest

from collectors.findings import Judging
from collectors.home.smartplugs import findings
from collectors.home.smartplugs.collector import SmartplugsCollector
from collectors.home.smartplugs.config import SmartplugsConfig
from collectors.home.smartplugs.state import PlugView, SmartplugsState
from collectors.state import dump, load
from tests.peers import free_port
from tests.peers.mosquitto import Broker

WH = 3600.0


def shelly(apower: float, total_wh: float) -> dict[str, Any]:
    # Shelly Gen2 API, Switch.GetStatus / status notification of a metering switch
    return {"id": 0, "source": "timer", "output": True, "apower": apower, "voltage": 231.4, "current": 0.21,
            "aenergy": {"total": total_wh, "by_minute": [12.1, 11.9, 12.4], "minute_ts": 1795857120},
            "temperature": {"tC": 41.2, "tF": 106.2}}


def tasmota(power: float, total_kwh: float) -> dict[str, Any]:
    # Tasmota tele/<topic>/SENSOR of a plug with energy monitoring
    return {"Time": "2026-11-28T10:00:00", "ENERGY": {"TotalStartTime": "2026-01-02T10:11:12", "Total": total_kwh,
                                                      "Yesterday": 0.512, "Today": 0.231, "Period": 1, "Power": power,
                                                      "ApparentPower": 52, "ReactivePower": 20, "Factor": 0.87,
                                                      "Voltage": 231, "Current": 0.226}}


class Plugs:
    """Publishes as the plugs do (retained, as Shelly and Tasmota may be told to)."""

    def __init__(self, port: int) -> None:
        self.client = paho.Client(paho.CallbackAPIVersion.VERSION2)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()

    def say(self, topic: str, payload: dict[str, Any] | bytes) -> None:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.client.publish(topic, body, qos=1, retain=True).wait_for_publish(10)

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


@pytest.fixture
def plugs(broker: Broker) -> Iterator[Plugs]:
    p = Plugs(broker.port)
    yield p
    p.close()


def collector(port: int, *plugs: dict[str, Any], clock: Callable[[], float] = time.time) -> SmartplugsCollector:
    return SmartplugsCollector(SmartplugsConfig(broker=f"mqtt://127.0.0.1:{port}", plugs=list(plugs)), clock=clock)


def until(c: SmartplugsCollector, done: Callable[[dict[str, PlugView]], bool]) -> dict[str, PlugView]:
    """Collect until `done`; the deadline is the collector's own run budget (timeout)."""
    deadline = time.monotonic() + c.cfg.timeout
    while True:
        state = c.collect().state
        assert isinstance(state, SmartplugsState)
        views = {p.name: p for p in state.plugs}
        if done(views):
            return views
        assert time.monotonic() < deadline, views
        time.sleep(0.05)


RACK = {"name": "rack", "kind": "shelly", "topic": "shellyplugpm-rack"}
DESK = {"name": "desk", "kind": "tasmota", "topic": "desk-plug"}


def test_shelly_and_tasmota_payloads_give_watts_and_energy(broker: Broker, plugs: Plugs) -> None:
    now = [1_000_000.0]  # a plug reports every 30-60 s: its counter may rise by what 3,680 W make in that
    c = collector(broker.port, RACK, DESK, clock=lambda: now[0])
    plugs.say("shellyplugpm-rack/status/switch:0", shelly(48.5, 1000.0))
    plugs.say("tele/desk-plug/SENSOR", tasmota(31, 12.345))
    views = until(c, lambda v: v["rack"].watts is not None and v["desk"].watts is not None)
    assert (views["rack"].watts, views["desk"].watts) == (48.5, 31.0)
    assert (views["rack"].energy_joules, views["desk"].energy_joules) == (0.0, 0.0)  # counted from here on
    now[0] += 60
    plugs.say("shellyplugpm-rack/status/switch:0", shelly(50.0, 1012.5))
    plugs.say("tele/desk-plug/SENSOR", tasmota(33, 12.395))
    views = until(c, lambda v: v["rack"].watts == 50.0 and v["desk"].watts == 33.0)
    assert views["rack"].energy_joules == pytest.approx(12.5 * WH)
    assert views["desk"].energy_joules == pytest.approx(0.05 * 1000 * WH)
    samples = {(s.metric, dict(s.labels)["source"]): s.value for s in c.collect().samples}
    assert samples[("rackpulse_power_watts", "rack")] == 50.0
    assert samples[("rackpulse_energy_joules_total", "rack")] == pytest.approx(12.5 * WH)


def test_a_plug_that_reboots_loses_no_energy_and_a_restart_of_rackpulse_neither(broker: Broker, plugs: Plugs) -> None:
    now = [1_000_000.0]
    c = collector(broker.port, RACK, clock=lambda: now[0])
    topic = "shellyplugpm-rack/status/switch:0"
    for apower, total in ((40.0, 100.0), (41.0, 150.0), (42.0, 5.0)):  # the third: rebooted, counting from 0
        plugs.say(topic, shelly(apower, total))
        views = until(c, lambda v, a=apower: v["rack"].watts == a)
        now[0] += 60
    assert views["rack"].energy_joules == pytest.approx(55 * WH)  # 50 before the reboot, 5 after
    again = collector(broker.port, RACK, clock=lambda: now[0])
    again.restore(load(SmartplugsState, dump(c.collect().state)))  # type: ignore[arg-type]
    plugs.say(topic, shelly(43.0, 7.0))
    views = until(again, lambda v: v["rack"].watts == 43.0)
    assert views["rack"].energy_joules == pytest.approx(57 * WH)


def test_a_plug_gone_silent_is_no_data_not_zero_watts(broker: Broker, plugs: Plugs) -> None:
    now = [time.time()]
    c = collector(broker.port, {**RACK, "silent_after": 60}, clock=lambda: now[0])
    plugs.say("shellyplugpm-rack/status/switch:0", shelly(48.5, 1000.0))
    until(c, lambda v: v["rack"].watts == 48.5)
    now[0] += 61
    result = c.collect()
    state = result.state
    assert isinstance(state, SmartplugsState)
    (view,) = state.plugs
    assert view.silent and view.watts is None and view.energy_joules == 0.0  # what it counted stays
    assert [s.metric for s in result.samples if s.metric == "rackpulse_power_watts"] == []
    assert [(f.rule, f.text) for f in findings.findings(state, Judging(host="nas", now=now[0]))] == \
        [("smartplug_silent", "smart plug rack: no data for 1 min")]


def test_a_message_that_cannot_be_read_is_said_and_the_next_good_one_clears_it(broker: Broker, plugs: Plugs) -> None:
    c = collector(broker.port, RACK)
    topic = "shellyplugpm-rack/status/switch:0"
    plugs.say(topic, b"{not json")
    views = until(c, lambda v: v["rack"].error is not None)
    assert "not JSON" in (views["rack"].error or "") and views["rack"].watts is None
    plugs.say(topic, shelly(12.0, 3.0))
    views = until(c, lambda v: v["rack"].watts == 12.0)
    assert views["rack"].error is None


def test_a_generic_topic_without_a_counter_is_integrated_from_its_watts(broker: Broker, plugs: Plugs) -> None:
    now = [1_000_000.0]
    desk = {"name": "desk", "kind": "mqtt", "topic": "home/desk/meter", "power_path": "meter.watts",
            "silent_after": 120}
    c = collector(broker.port, desk, clock=lambda: now[0])
    plugs.say("home/desk/meter", {"meter": {"watts": 100}})
    until(c, lambda v: v["desk"].watts == 100.0)
    now[0] += 60
    plugs.say("home/desk/meter", {"meter": {"watts": 140}})
    views = until(c, lambda v: v["desk"].watts == 140.0)
    assert views["desk"].energy_joules == pytest.approx(120 * 60) and views["desk"].method == "integrated"


def test_a_broker_that_is_down_stalls_nothing_and_every_plug_is_no_data() -> None:
    now = [1_000_000.0]
    c = collector(free_port(), RACK, DESK, clock=lambda: now[0])  # nothing listens there
    t0 = time.monotonic()
    result = c.collect()
    assert time.monotonic() - t0 < c.cfg.timeout  # within its run budget: nothing waits on the network
    state = result.state
    assert isinstance(state, SmartplugsState)
    # not "no data yet" 5 s after the start: only once silent_after has passed since
    assert not any(p.silent for p in state.plugs) and all(p.watts is None for p in state.plugs)
    assert [f for f in findings.findings(state, Judging(host="nas")) if f.rule == "smartplug_silent"] == []
    now[0] += 901  # past both kinds' silent_after (300 s, 900 s)
    state = c.collect().state
    assert isinstance(state, SmartplugsState)
    assert all(p.silent and p.watts is None for p in state.plugs)
    texts = [f.text for f in findings.findings(state, Judging(host="nas"))]
    assert "smart plug rack: no data yet" in texts and any(t.startswith("smart plugs: ") for t in texts)


def test_a_counter_that_flaps_or_jumps_books_no_more_than_the_plug_can_pass_and_watts_below_zero_none() -> None:
    """Fed directly (no broker): a Shelly counter alternating 1,000,000 Wh / 0 every 2 s booked
    10,000 kWh in 20 s; -1,000,000 W for 10 s booked -6.26 kWh."""
    from collectors.home.smartplugs.meter import SETTLE, Meter
    from collectors.home.smartplugs.payloads import Reading

    m = Meter("rack", "shelly", 300.0, integrated=False, max_watts=3680.0, started=0.0)
    booked, said = [], []
    for i in range(10):
        m.update(Reading(50.0, (1_000_000.0 if i % 2 == 0 else 0.0) * WH), 2.0 * i)
        booked.append(m.energy or 0.0)
        said.append(m.error or "")
    assert max(booked) <= 3680.0 * 20 + 3600.0 and booked == sorted(booked)  # never falls
    assert sum("bad read" in e for e in said) == 4  # each rise back to 1,000,000 Wh
    m2 = Meter("desk", "mqtt", 120.0, integrated=True, max_watts=3680.0, started=0.0)
    for t in range(0, 11, 1):
        m2.update(Reading(-1_000_000.0, None), float(t))
    assert (m2.energy or 0.0) >= 0.0 and m2.watts is None and "bad read" in (m2.error or "")
    m3 = Meter("new", "shelly", 300.0, integrated=False, started=0.0)  # a plug replaced: its counter stays
    m3.update(Reading(10.0, 100.0 * WH), 0.0)
    for i in range(1, SETTLE + 1):
        m3.update(Reading(10.0, 5_000_000.0 * WH), 60.0 * i)
    assert m3.counter == 5_000_000.0 * WH and (m3.energy or 0.0) < 10 * WH  # new base, the jump not booked
    m3.update(Reading(10.0, 5_000_001.0 * WH), 60.0 * (SETTLE + 1))
    assert m3.energy == pytest.approx(1 * WH, abs=1e-6)
