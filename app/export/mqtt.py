"""Home Assistant over MQTT: discovery configs (retained), states, availability with a last
will, one HA device per host. paho-mqtt keeps the connection in its own thread and reconnects
with backoff; every (re)connect republishes every config and the current states, so a broker
outage or a broker that lost its retained messages loses nothing."""

from __future__ import annotations

import json
import logging
import ssl
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

import paho.mqtt.client as paho

from app.disks.bays import storage_bays
from app.export.homeassistant import Entity, entities, slug
from app.snapshot import Snapshot

log = logging.getLogger("rackpulse.export.mqtt")


class MqttExport:
    def __init__(self, cfg: Any, version: str = "") -> None:
        self.cfg = cfg
        self.version = version
        u = urlsplit(cfg.url)
        self.host, self.port = u.hostname or "127.0.0.1", u.port or (8883 if u.scheme == "mqtts" else 1883)
        self.client = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=cfg.client_id or "",
                                  protocol=paho.MQTTv311)
        if cfg.username:
            self.client.username_pw_set(cfg.username, cfg.password_value())
        if u.scheme == "mqtts":
            self.client.tls_set(cert_reqs=ssl.CERT_REQUIRED)
        self.client.reconnect_delay_set(1, 60)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_connect_fail = self._on_connect_fail
        self._failing = False
        self._lock = threading.Lock()
        self._hosts: dict[str, list[Entity]] = {}  # what was last built, per host
        self._sent: dict[str, str] = {}  # topic -> payload last published (states and configs)
        self.connected = threading.Event()
        self._will_host: str | None = None

    # -- topics -------------------------------------------------------------------------
    def availability(self, host: str) -> str:
        return f"{self.cfg.topic_prefix}/{slug(host)}/availability"

    def state_topic(self, host: str, e: Entity) -> str:
        return f"{self.cfg.topic_prefix}/{slug(host)}/{e.object_id}"

    def config_topic(self, host: str, e: Entity) -> str:
        return f"{self.cfg.discovery_prefix}/{e.component}/rackpulse_{slug(host)}/{e.object_id}/config"

    def payload(self, host: str, e: Entity) -> str:
        return json.dumps({**e.config, "state_topic": self.state_topic(host, e),
                           "availability_topic": self.availability(host),
                           "device": {"identifiers": [f"rackpulse_{slug(host)}"], "name": host,
                                      "manufacturer": "rackpulse", "model": "home-lab host",
                                      "sw_version": self.version}}, sort_keys=True)

    # -- life -----------------------------------------------------------------------------
    def start(self, own_host: str) -> None:
        # The server's own host goes offline with it; an agent host's availability is its own.
        self._will_host = own_host
        self.client.will_set(self.availability(own_host), "offline", qos=1, retain=True)
        self.client.connect_async(self.host, self.port, keepalive=30)
        self.client.loop_start()

    def stop(self) -> None:
        if self.connected.is_set() and self._will_host:
            self.client.publish(self.availability(self._will_host), "offline", qos=1, retain=True).wait_for_publish(1)
        self.client.disconnect()
        self.client.loop_stop()

    def _on_connect(self, client: paho.Client, userdata: Any, flags: Any, reason: Any, props: Any = None) -> None:
        if getattr(reason, "is_failure", False):
            log.warning("MQTT broker %s:%s refused the connection: %s", self.host, self.port, reason)
            return
        log.info("MQTT connected to %s:%s", self.host, self.port)
        self._failing = False
        self.connected.set()
        with self._lock:
            self._sent.clear()  # a broker that restarted may have lost its retained messages: say everything again
            hosts = dict(self._hosts)
        for host, ents in hosts.items():
            self._publish_host(host, ents)

    def _on_connect_fail(self, client: paho.Client, userdata: Any) -> None:
        # No broker listening, or a name that does not resolve: paho retries in its loop thread,
        # saying nothing. One warning per outage; the retries after it at debug.
        (log.debug if self._failing else log.warning)(
            "MQTT broker %s:%s cannot be reached; retrying (1 s doubling to 60 s)", self.host, self.port)
        self._failing = True

    def _on_disconnect(self, client: paho.Client, userdata: Any, flags: Any, reason: Any, props: Any = None) -> None:
        self.connected.clear()
        log.warning("MQTT disconnected from %s:%s (%s); reconnecting", self.host, self.port, reason)

    # -- publishing -------------------------------------------------------------------------
    def _send(self, topic: str, payload: str) -> None:
        if self._sent.get(topic) == payload:
            return
        info = self.client.publish(topic, payload, qos=1, retain=True)
        if info.rc == paho.MQTT_ERR_SUCCESS:
            self._sent[topic] = payload

    def _publish_host(self, host: str, ents: list[Entity]) -> None:
        if not self.connected.is_set():
            return
        with self._lock:
            self._send(self.availability(host), "online")
            for e in ents:
                self._send(self.config_topic(host, e), self.payload(host, e))
            for e in ents:
                self._send(self.state_topic(host, e), e.state)

    def publish(self, snapshots: Iterable[Snapshot]) -> int:
        """Build every host's entities from its snapshot and publish what changed; returns how
        many entities there are. While disconnected it only remembers: the reconnect sends."""
        built: dict[str, list[Entity]] = {}
        for snap in snapshots:
            samples = [s for part in snap.samples.values() for s in part]
            bays = {d.serial: d.bay for d in storage_bays(snap) if d.serial and d.bay}
            built[snap.host] = entities(snap.host, samples, bays)
        with self._lock:
            self._hosts = built
        for host, ents in built.items():
            self._publish_host(host, ents)
        return sum(len(e) for e in built.values())
