"""Home Assistant over MQTT against a real Mosquitto the test starts on a free port, read by a
subscriber as Home Assistant reads: retained discovery configs with the classes HA's energy
dashboard needs, states, availability with a last will, one device per host; a broker that
goes away and comes back empty gets every config and the current states again."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
import pytest

from app.config import MqttExportConfig
from app.export.mqtt import MqttExport
from app.scheduler import Snapshot
from collectors.base import Sample
from tests.peers import free_port
from tests.peers.mosquitto import Broker
from tests.states import one


class Listener:
    """Subscribes as Home Assistant does and keeps the last message per topic."""

    def __init__(self, port: int, auth: tuple[str, str] | None = None) -> None:
        self.messages: dict[str, tuple[str, bool]] = {}
        self.lock = threading.Lock()
        self.client = paho.Client(paho.CallbackAPIVersion.VERSION2)
        if auth:
            self.client.username_pw_set(*auth)
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", port)
        self.client.subscribe([("homeassistant/#", 1), ("rackpulse/#", 1)])
        self.client.loop_start()

    def _on_message(self, client: Any, userdata: Any, msg: paho.MQTTMessage) -> None:
        with self.lock:
            self.messages[msg.topic] = (msg.payload.decode(), bool(msg.retain))

    def wait_for(self, topic: str, payload: str | None = None, timeout: float = 15) -> str:
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                got = self.messages.get(topic)
            if got is not None and (payload is None or got[0] == payload):
                return got[0]
            time.sleep(0.05)
        raise AssertionError(f"no {payload or 'message'} on {topic}; have {sorted(self.messages)[:20]}")

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def snapshot(host: str, heat_kwh: float = 1234.5, outside: float = 3.4) -> Snapshot:
    snap = Snapshot(host=host)
    snap.samples["heatpump"] = [
        Sample.of("rackpulse_heatpump_temperature_celsius", outside, sensor="outside"),
        Sample.of("rackpulse_heatpump_heat_joules_total", heat_kwh * 3.6e6, use="heating"),
        Sample.of("rackpulse_heatpump_electricity_joules_total", 400.25 * 3.6e6, use="heating"),
        Sample.of("rackpulse_heatpump_fault", 0)]
    snap.samples["nut"] = [Sample.of("rackpulse_ups_battery_charge_ratio", 0.97, ups="ups12v"),
                           Sample.of("rackpulse_ups_on_battery", 0, ups="ups12v")]
    snap.samples["mdraid"] = [Sample.of("rackpulse_md_array_degraded", 1, array="md0")]
    snap.samples["smart"] = [Sample.of("rackpulse_disk_health", 2, serial="ZA1049HK")]
    snap.states["smart"] = one("smart", {"disks": [{"key": "ZA1049HK", "serial": "ZA1049HK", "device": "sdh",
                                                    "bay": "shelf 1, bay 7"}]})
    return snap


def exporter(port: int, **kw: Any) -> MqttExport:
    e = MqttExport(MqttExportConfig(url=f"mqtt://127.0.0.1:{port}", **kw), "0.1.0")
    e.start("nas")
    assert e.connected.wait(15)
    return e


HEAT = "homeassistant/sensor/rackpulse_nas/heatpump_heat_joules_total_heating/config"



def test_the_boosters_energy_is_an_energy_sensor_of_its_own_and_the_days_cop_a_measurement(broker: Broker) -> None:
    snap = Snapshot(host="nas")
    snap.samples["heatpump"] = [Sample.of("rackpulse_heatpump_backup_heat_joules_total", 212 * 3.6e6, use="heating"),
                                Sample.of("rackpulse_heatpump_cop", 3.38, period="yesterday")]
    e = exporter(broker.port)
    try:
        assert e.publish([snap]) == 2
        ha = Listener(broker.port)
        booster = json.loads(ha.wait_for("homeassistant/sensor/rackpulse_nas/heatpump_backup_heat_joules_total_heating/"
                                         "config"))
        # HA's energy dashboard takes it as a source apart from the heat pump's own heat.
        assert (booster["device_class"], booster["state_class"], booster["unit_of_measurement"]) == (
            "energy", "total_increasing", "kWh")
        assert ha.wait_for("rackpulse/nas/heatpump_backup_heat_joules_total_heating") == "212.0"
        cop = json.loads(ha.wait_for("homeassistant/sensor/rackpulse_nas/heatpump_cop_yesterday/config"))
        # A ratio that goes down as well as up: a measurement (total_increasing would make HA read a drop as a reset).
        assert cop["state_class"] == "measurement" and cop["name"] == "Heat pump COP yesterday"
        assert ha.wait_for("rackpulse/nas/heatpump_cop_yesterday") == "3.38"
        ha.close()
    finally:
        e.stop()

def test_a_smart_plugs_energy_and_draw_are_sensors_home_assistants_energy_dashboard_takes(broker: Broker) -> None:
    snap = Snapshot(host="nas")
    snap.samples["smartplugs"] = [Sample.of("rackpulse_energy_joules_total", 12.5 * 3.6e6, source="rack"),
                                  Sample.of("rackpulse_power_watts", 182.4, source="rack")]
    e = exporter(broker.port)
    try:
        assert e.publish([snap]) == 2
        ha = Listener(broker.port)
        energy = json.loads(ha.wait_for("homeassistant/sensor/rackpulse_nas/energy_joules_total_rack/config"))
        assert {k: energy[k] for k in ("device_class", "state_class", "unit_of_measurement", "name")} == {
            "device_class": "energy", "state_class": "total_increasing", "unit_of_measurement": "kWh",
            "name": "Energy rack"}
        assert ha.wait_for("rackpulse/nas/energy_joules_total_rack") == "12.5"
        power = json.loads(ha.wait_for("homeassistant/sensor/rackpulse_nas/power_watts_rack/config"))
        assert (power["device_class"], power["state_class"], power["unit_of_measurement"]) == (
            "power", "measurement", "W")
        assert ha.wait_for("rackpulse/nas/power_watts_rack") == "182.4"
        ha.close()
    finally:
        e.stop()


def test_home_assistant_finds_the_heat_pump_energy_for_its_energy_dashboard(broker: Broker) -> None:
    e = exporter(broker.port)
    try:
        assert e.publish([snapshot("nas"), snapshot("ceph-node1", heat_kwh=10)]) == 16
        # Once the last state is at the broker, a subscriber that comes after gets it all retained.
        first = Listener(broker.port)
        first.wait_for("rackpulse/ceph_node1/heatpump_fault", "OFF")
        first.close()
        ha = Listener(broker.port)
        config = json.loads(ha.wait_for(HEAT))
        assert {k: config[k] for k in ("device_class", "state_class", "unit_of_measurement", "name")} == {
            "device_class": "energy", "state_class": "total_increasing", "unit_of_measurement": "kWh",
            "name": "Heat pump heat heating"}
        assert config["state_topic"] == "rackpulse/nas/heatpump_heat_joules_total_heating"
        assert config["availability_topic"] == "rackpulse/nas/availability"
        assert config["device"]["identifiers"] == ["rackpulse_nas"] and config["device"]["name"] == "nas"
        assert ha.wait_for("rackpulse/nas/heatpump_heat_joules_total_heating") == "1234.5"
        assert ha.wait_for("rackpulse/nas/availability") == "online"
        assert ha.messages["rackpulse/nas/heatpump_heat_joules_total_heating"][1]  # retained
        temp = json.loads(ha.wait_for("homeassistant/sensor/rackpulse_nas/heatpump_temperature_celsius_outside/config"))
        assert (temp["device_class"], temp["unit_of_measurement"]) == ("temperature", "°C")
        assert ha.wait_for("rackpulse/nas/md_array_degraded_md0") == "ON"
        disk = json.loads(ha.wait_for("homeassistant/sensor/rackpulse_nas/disk_health_za1049hk/config"))
        assert disk["name"] == "Disk shelf 1, bay 7 health" and disk["options"] == ["ok", "warning", "failing"]
        assert ha.wait_for("rackpulse/nas/disk_health_za1049hk") == "failing"
        # the agent host is a device of its own
        other = json.loads(ha.wait_for("homeassistant/sensor/rackpulse_ceph_node1/heatpump_heat_joules_total_heating/"
                                       "config"))
        assert other["device"]["identifiers"] == ["rackpulse_ceph_node1"]
        ha.close()
    finally:
        e.stop()


def test_only_changes_are_sent_and_stopping_says_offline(broker: Broker) -> None:
    e = exporter(broker.port)
    ha = Listener(broker.port)
    try:
        e.publish([snapshot("nas")])
        ha.wait_for("rackpulse/nas/heatpump_temperature_celsius_outside", "3.4")
        sent = dict(e._sent)
        e.publish([snapshot("nas", outside=2.9)])
        ha.wait_for("rackpulse/nas/heatpump_temperature_celsius_outside", "2.9")
        changed = {t for t, p in e._sent.items() if sent.get(t) != p}
        assert changed == {"rackpulse/nas/heatpump_temperature_celsius_outside"}
    finally:
        e.stop()
    assert ha.wait_for("rackpulse/nas/availability", "offline")
    ha.close()


def test_a_broker_outage_loses_no_state_the_current_one_is_sent_on_reconnect(broker: Broker) -> None:
    e = exporter(broker.port)
    try:
        e.publish([snapshot("nas", heat_kwh=1000)])
        Listener(broker.port).wait_for("rackpulse/nas/heatpump_heat_joules_total_heating", "1000.0")
        broker.stop()  # the broker goes away, and comes back without its retained messages
        deadline = time.time() + 10
        while e.connected.is_set() and time.time() < deadline:
            time.sleep(0.05)
        e.publish([snapshot("nas", heat_kwh=1001.5)])  # collected during the outage
        broker.start()
        assert e.connected.wait(90)
        ha = Listener(broker.port)
        assert ha.wait_for("rackpulse/nas/heatpump_heat_joules_total_heating", "1001.5")
        assert json.loads(ha.wait_for(HEAT))["device_class"] == "energy"
        assert ha.wait_for("rackpulse/nas/availability") == "online"
        ha.close()
    finally:
        e.stop()


def test_a_process_that_dies_is_marked_offline_by_its_last_will(broker: Broker) -> None:
    e = exporter(broker.port)
    e.publish([snapshot("nas")])
    ha = Listener(broker.port)
    ha.wait_for("rackpulse/nas/availability", "online")
    e.client.loop_stop()
    sock = e.client.socket()
    assert sock is not None
    sock.close()  # no DISCONNECT: as if the process were killed
    assert ha.wait_for("rackpulse/nas/availability", "offline", timeout=60)
    ha.close()


def test_a_broker_with_passwords_takes_the_password_file(tmp_path: Path) -> None:
    b = Broker(tmp_path, free_port(), password="s3cret")
    b.start()
    try:
        pw = tmp_path / "mqtt.pw"
        pw.write_text("s3cret\n")
        e = exporter(b.port, username="rackpulse", password_file=pw)
        try:
            e.publish([snapshot("nas")])
            ha = Listener(b.port, auth=("rackpulse", "s3cret"))
            assert ha.wait_for("rackpulse/nas/availability") == "online"
            ha.close()
        finally:
            e.stop()
    finally:
        b.stop()


def test_serve_starts_the_export_from_the_config_and_stops_it_offline(broker: Broker, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from app.config import load_config
    from app.web.app import create_app
    from collectors import plugins

    off = {name: {"enabled": False} for name in plugins()}
    cfg = load_config(None, {"host": "nas", "host_root": str(tmp_path), "storage": {"url": f"sqlite:///{tmp_path}/db"},
                             "collectors": off,
                             "export": {"mqtt": {"url": f"mqtt://127.0.0.1:{broker.port}", "interval": 0.2}}})
    ha = Listener(broker.port)
    with TestClient(create_app(cfg)):
        assert ha.wait_for("rackpulse/nas/availability", "online")
    assert ha.wait_for("rackpulse/nas/availability", "offline")
    ha.close()


def test_serve_runs_on_when_the_mqtt_password_file_cannot_be_read(tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    from fastapi.testclient import TestClient

    from app.config import load_config
    from app.web.app import create_app
    from collectors import plugins

    off = {name: {"enabled": False} for name in plugins()}
    cfg = load_config(None, {"host": "nas", "host_root": str(tmp_path), "storage": {"url": f"sqlite:///{tmp_path}/db"},
                             "collectors": off, "export": {"mqtt": {"url": "mqtt://127.0.0.1:9", "username": "rp",
                                                                    "password_file": str(tmp_path / "nope")}}})
    with TestClient(create_app(cfg), base_url="http://127.0.0.1") as client:
        assert client.get("/healthz").status_code == 200
    assert "export.mqtt not started: cannot read password_file" in caplog.text

