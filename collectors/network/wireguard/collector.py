"""WireGuard: every interface's peers from `wg show all dump`, with how old each one's latest
handshake is. No wg on the host is "source absent", not a failure."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar

from collectors.base import (
    Collector,
    CollectorError,
    CollectResult,
    CommandNotFound,
    Entity,
    MetricSpec,
    NoData,
    Runner,
    Sample,
    run_command,
)
from collectors.context import HostContext
from collectors.network.wireguard.config import WireguardConfig
from collectors.network.wireguard.dump import parse_dump
from collectors.network.wireguard.state import WgPeerView, WireguardState


class WireguardCollector(Collector):
    name: ClassVar[str] = "wireguard"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_wireguard_peer_handshake_age_seconds": MetricSpec("Seconds since the peer's latest handshake "
                                                                     "(absent: never)."),
        "rackpulse_wireguard_peer_receive_bytes_total": MetricSpec("Bytes received from the peer.", "counter"),
        "rackpulse_wireguard_peer_transmit_bytes_total": MetricSpec("Bytes sent to the peer.", "counter"),
        "rackpulse_wireguard_peer_stale": MetricSpec("1 when a watched peer's handshake is older than stale_after.",
                                                     states=("fresh", "stale")),
    }

    def __init__(self, cfg: WireguardConfig, runner: Runner = run_command,
                 clock: Callable[[], float] = time.time) -> None:
        self.cfg, self.runner, self.clock = cfg, runner, clock

    def collect(self) -> CollectResult:
        try:
            res = self.runner([*self.cfg.wg, "show", "all", "dump"], self.cfg.command_timeout)
        except CommandNotFound as exc:
            raise NoData(f"{exc} (WireGuard tools not installed)") from None
        if res.returncode != 0:
            err = res.stderr.decode("utf-8", "replace").strip() or f"exit {res.returncode}"
            raise CollectorError(f"wg show all dump: {err[:300]} (it needs CAP_NET_ADMIN: run it with sudo -n)")
        interfaces = parse_dump(res.stdout.decode("utf-8", "replace"))
        if not interfaces:
            raise NoData("no WireGuard interface on this host")
        named = {p.key: p for p in self.cfg.peers}
        now = self.clock()
        result = CollectResult()
        views = []
        for iface in interfaces:
            for p in iface.peers:
                cfg = named.get(p.public_key)
                age = None if p.latest_handshake is None else max(0.0, now - p.latest_handshake)
                watched = p.keepalive is not None or (cfg is not None and cfg.expect)
                stale = watched and (age is None or age > self.cfg.stale_after)
                v = WgPeerView(interface=iface.name, key=p.public_key, name=cfg.name if cfg else None,
                               endpoint=p.endpoint, allowed_ips=p.allowed_ips, handshake_age=age, rx_bytes=p.rx_bytes,
                               tx_bytes=p.tx_bytes, keepalive=p.keepalive, watched=watched, stale=stale)
                views.append(v)
                labels = {"interface": iface.name, "peer": v.name or p.public_key[:8]}
                if age is not None:
                    result.samples.append(Sample.of("rackpulse_wireguard_peer_handshake_age_seconds", age, **labels))
                result.samples.append(Sample.of("rackpulse_wireguard_peer_receive_bytes_total", p.rx_bytes, **labels))
                result.samples.append(Sample.of("rackpulse_wireguard_peer_transmit_bytes_total", p.tx_bytes, **labels))
                result.samples.append(Sample.of("rackpulse_wireguard_peer_stale", 1 if stale else 0, **labels))
                # The endpoint in the inventory: a roaming peer's new address is an event.
                result.entities.append(Entity("wireguard_peer", f"{iface.name}/{v.name or p.public_key}",
                                              {"endpoint": p.endpoint, "allowed_ips": ",".join(p.allowed_ips)}))
        result.state = WireguardState(peers=views, stale_after=self.cfg.stale_after)
        return result


def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.wireguard]."""
    return WireguardCollector(c, runner)
