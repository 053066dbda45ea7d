"""Smart plugs over MQTT: a subscriber (paho-mqtt, in its own thread, reconnecting with backoff)
keeps each plug's latest reading; a run reads them. A broker that is down costs this collector
its data ("no data" for every plug), never a stall: nothing here waits on the network."""

from __future__ import annotations

import logging
import ssl
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import urlsplit

from collectors import energy
from collectors.base import Collector, CollectorError, CollectResult, MetricSpec, NoData, Runner, Sample
from collectors.context import HostContext
from collectors.counters import Most
from collectors.home.smartplugs.config import Plug, SmartplugsConfig
from collectors.home.smartplugs.meter import Meter
from collectors.home.smartplugs.payloads import Reading, parse_paths, parse_shelly, parse_tasmota
from collectors.home.smartplugs.state import SmartplugsState
from collectors.state import State

log = logging.getLogger("rackpulse.collectors.smartplugs")


def parser(p: Plug) -> Callable[[bytes], Reading]:
    if p.kind == "shelly":
        return parse_shelly
    if p.kind == "tasmota":
        return parse_tasmota
    return lambda payload: parse_paths(payload, p.power_path, p.energy_path, p.energy_unit)


class Inbox:
    """What the MQTT thread writes and a run reads, under one lock. The client's callbacks live
    here, not on the collector: the collector can be dropped (a reload) and its client stopped."""

    def __init__(self, plugs: list[Plug], clock: Callable[[], float]) -> None:
        self.lock = threading.Lock()
        self.clock = clock
        self.by_topic: dict[str, list[tuple[Meter, Callable[[bytes], Reading]]]] = {}
        self.meters: dict[str, Meter] = {}
        for p in plugs:
            m = Meter(p.name, p.kind, p.quiet_limit(), integrated=p.kind == "mqtt" and not p.energy_path,
                      max_watts=p.max_watts, started=clock())
            self.meters[p.name] = m
            self.by_topic.setdefault(p.subscription(), []).append((m, parser(p)))
        self.broker_error: str | None = "not connected yet"

    def on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, props: Any = None) -> None:
        if getattr(reason, "is_failure", False):
            with self.lock:
                self.broker_error = f"broker refused the connection: {reason}"
            return
        with self.lock:
            self.broker_error = None
        client.subscribe([(topic, 0) for topic in self.by_topic])

    def on_disconnect(self, client: Any, userdata: Any, flags: Any, reason: Any, props: Any = None) -> None:
        with self.lock:
            self.broker_error = f"disconnected from the broker ({reason}); reconnecting"

    def on_connect_fail(self, client: Any, userdata: Any) -> None:
        with self.lock:
            self.broker_error = "broker unreachable; retrying"

    def on_message(self, client: Any, userdata: Any, msg: Any) -> None:
        now = self.clock()
        for meter, parse in self.by_topic.get(msg.topic, []):
            try:
                reading = parse(msg.payload)
            except CollectorError as exc:
                with self.lock:
                    meter.error = str(exc)
                continue
            with self.lock:
                meter.update(reading, now)


class SmartplugsCollector(Collector):
    name: ClassVar[str] = "smartplugs"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        **energy.SPECS,
        "rackpulse_smartplug_silent": MetricSpec("1 while a plug has said nothing for longer than silent_after.",
                                                 states=("reporting", "silent")),
    }

    def __init__(self, cfg: SmartplugsConfig, clock: Callable[[], float] = time.time) -> None:
        self.cfg, self.clock = cfg, clock
        self.inbox = Inbox(cfg.plugs, clock)
        self._client: Any = None
        # The demo's plugs (no broker there): (topic, payload) pairs read as if they had arrived
        self.feed: Callable[[], list[tuple[str, bytes]]] | None = None

    def counter_limits(self) -> Mapping[str, Most]:
        # A plug's energy rises no faster than the most it can pass, plus a whole Wh of rounding.
        return {energy.ENERGY: Most(max((p.max_watts for p in self.cfg.plugs), default=3680.0), 3600.0)}

    def restore(self, state: State) -> None:
        if isinstance(state, SmartplugsState):
            with self.inbox.lock:
                for v in state.plugs:
                    if v.name in self.inbox.meters:
                        self.inbox.meters[v.name].restore(v)

    def _connect(self) -> None:
        import paho.mqtt.client as paho

        u = urlsplit(self.cfg.broker)
        client = paho.Client(paho.CallbackAPIVersion.VERSION2, protocol=paho.MQTTv311)
        if self.cfg.username:
            client.username_pw_set(self.cfg.username, self.cfg.password_value())
        if u.scheme == "mqtts":
            client.tls_set(cert_reqs=ssl.CERT_REQUIRED)
        client.reconnect_delay_set(1, 60)
        for name in ("on_connect", "on_disconnect", "on_connect_fail", "on_message"):
            setattr(client, name, getattr(self.inbox, name))
        client.connect_async(u.hostname or "127.0.0.1", u.port or (8883 if u.scheme == "mqtts" else 1883))
        client.loop_start()
        self._client = client
        weakref.finalize(self, _stop, client)  # a collector dropped by a reload takes its client along

    def collect(self) -> CollectResult:
        if not self.cfg.plugs:
            raise NoData("no plug configured in [[collectors.smartplugs.plugs]]")
        if self.feed is not None:
            for topic, payload in self.feed():
                self.inbox.on_message(None, None, _Message(topic, payload))
            with self.inbox.lock:
                self.inbox.broker_error = None
        elif self._client is None:
            self._connect()
        now = self.clock()
        with self.inbox.lock:
            views = [m.view(now) for m in self.inbox.meters.values()]
            broker_error = self.inbox.broker_error
        result = CollectResult(state=SmartplugsState(plugs=views, broker_error=broker_error))
        for v in views:
            result.samples.append(Sample.of("rackpulse_smartplug_silent", 1 if v.silent else 0, source=v.name))
            result.samples += energy.samples(v.name, v.watts, v.energy_joules)
        if broker_error and all(v.silent for v in views):
            result.warnings.append(f"{self.cfg.broker}: {broker_error}")
        return result


@dataclass(frozen=True)
class _Message:
    topic: str
    payload: bytes


def _stop(client: Any) -> None:
    try:
        client.loop_stop()
        client.disconnect()
    except Exception:  # noqa: BLE001 - stopping a client that is already gone
        log.debug("smart plugs: stopping the MQTT client", exc_info=True)


def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.smartplugs]."""
    return SmartplugsCollector(c)
