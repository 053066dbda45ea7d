"""The runtime's alerting: one Alerting for this host and one per agent host, built on first use
(their tables exist only after the migrations ran), the channels of the config and of the
browser given to each, the alert tick, and the lead among several servers on one PostgreSQL
(app/leader.py): whoever leads evaluates the agents' hosts and notifies."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from app.config import Config
from app.ingest.agents import Agents
from app.ingest.conditions import agent_conditions
from app.leader import Leadership
from app.scheduler import Snapshot
from app.storage.meta import get_meta, set_meta

if TYPE_CHECKING:
    from app.alerting.channels import Channel
    from app.alerting.service import Alerting

log = logging.getLogger("rackpulse.runtime")
LEADER_HOST = "alerts_leader_host"  # meta: the host name of the server that leads the alerts


class RuntimeAlerts:
    def __init__(self, config: Callable[[], Config], engine: Engine, snap: Snapshot, agents: Agents,
                 leadership: Leadership, extra: Callable[[], Sequence[Any]]) -> None:
        """`config`: the running config (a reload replaces it); `extra`: conditions of this host
        beyond its collectors' (the energy rules'), read at each tick."""
        self.config, self.engine, self.snap, self.agents = config, engine, snap, agents
        self.leadership, self.extra = leadership, extra
        self._local: dict[str, Alerting | None] = {}
        self.host_alerting: dict[str, Alerting] = {}  # agent host -> its Alerting
        self._failed_hosts: set[str] = set()
        self._channels: list[Channel] | None = None  # the config's and the browser's, once loaded
        self.leading = False

    def get(self) -> Alerting | None:
        """This host's, built on first use; None when alerts are off."""
        if "a" not in self._local:
            from app.alerting.setup import from_config

            cfg = self.config()
            a = self._local["a"] = from_config(cfg, self.engine) if cfg.alerts.enabled else None
            if a is not None and self._channels is not None:
                a.set_channels(self._channels)
        return self._local["a"]

    def built(self) -> Alerting | None:
        return self._local.get("a")

    def ready(self, host: str) -> bool:
        """Whether for_host(host) is in memory already (else it reads its states from SQL)."""
        if "a" not in self._local:
            return False
        return host == self.config().host or self._local["a"] is None or host in self.host_alerting

    def for_host(self, host: str) -> Alerting | None:
        """One Alerting per agent host (its own states, flaps and silences); None when disabled."""
        if host == self.config().host or self.get() is None:
            return self.get()
        if host not in self.host_alerting:
            from app.alerting.setup import from_config

            a = self.host_alerting[host] = from_config(self.config(), self.engine, host=host)
            if self._channels is not None:
                a.set_channels(self._channels)
        return self.host_alerting[host]

    def every(self) -> list[Alerting]:
        """Every Alerting built so far: this host's and the agent hosts'."""
        return [a for a in [self._local.get("a"), *self.host_alerting.values()] if a is not None]

    def load_channels(self) -> None:
        """The config file's channels and the ones made in the browser, into every host's alerting."""
        from app.alerting.saved_channels import saved_channels
        from app.alerting.setup import channels_of

        cfg = self.config()
        try:
            saved = saved_channels(self.engine, cfg.host, cfg.alerts.timezone)
        except SQLAlchemyError as exc:  # a database without the table yet (migrate=False): none
            log.warning("channels made in the browser not read: %s", exc)
            saved = []
        self._channels = channels_of(cfg) + saved
        for a in self.every():
            a.set_channels(self._channels)

    def tick(self) -> None:
        """This host's alerts, on every server (what only it sees: its collectors, its heartbeats),
        unless the leader has the same host name; then, on the leader only, each agent host's, with
        its agent_silent, clock skew and cardinality kept among them (keyed by the agent, whichever
        server evaluates). All only queue; the leader's courier delivers for all."""
        now = time.time()
        local = self.get()
        if local is None:
            return
        leading = self.lead()
        if leading or self._own_host_is_mine():
            local.tick(self.snap, now, extra=self.extra(), deliver=False)
        if not leading:
            return
        if self.leadership.shared:  # another server may have taken an agent's latest batch
            self.agents.catch_up()
        about: dict[str, list[Any]] = {}
        for c in agent_conditions(self.agents, self.config(), now):
            about.setdefault(c.subject, []).append(c)
        for host in sorted({*self.agents.snapshots, *about}):
            alerting = self.for_host(host)
            if alerting is None:
                return
            hsnap = self.agents.snapshots.get(host) or Snapshot(host=host)
            try:  # one agent host's odd state must not stop alerts for the others
                alerting.tick(hsnap, now, extra=about.get(host, ()), deliver=False)
            except Exception:  # noqa: BLE001
                if host not in self._failed_hosts:
                    log.exception("alerts for agent host %s failed", host)
                    self._failed_hosts.add(host)
        local.courier.wake()  # delivery runs in the courier's threads: a hanging endpoint never delays this

    def _own_host_is_mine(self) -> bool:
        """A standby evaluates its own host itself, unless the leader has the same host name (two
        servers of one identity): nobody else sees its collectors and the pings it takes."""
        if not self.leadership.shared:
            return False
        try:
            return get_meta(self.engine, LEADER_HOST) != self.config().host
        except SQLAlchemyError:
            return False

    def lead(self) -> bool:
        """Whether this server evaluates alerts now. Taking over from another server, it reads
        the alerts' states that server left in the database first: what it notified stays
        notified, what it acknowledged stays acknowledged."""
        leading = self.leadership.check()
        if leading and not self.leading:
            if self.leadership.shared:
                log.info("alerts: this server evaluates and notifies now (it holds the lead in the database)")
                try:
                    set_meta(self.engine, LEADER_HOST, self.config().host)
                except SQLAlchemyError as exc:
                    log.warning("could not note the leader's host name: %s", exc)
            for a in self.every():
                with a.lock:
                    a.states = a._load()
        elif self.leading and not leading:
            log.info("alerts: another server evaluates and notifies; this one stands by")
        self.leading = leading
        return leading
