"""Everything rackpulse runs besides answering requests: collection (the scheduler and its
store), the agent hosts, alerting and its delivery, the exports and the maintenance, built in
one place and started and stopped as one. The web app only reads it (app/web/app.py)."""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastapi.concurrency import run_in_threadpool
from sqlalchemy.exc import SQLAlchemyError

from app import version
from app.config import Config
from app.disks import bay_labels
from app.energy.watch import EnergyWatch
from app.ingest.agents import Agents
from app.ingest.conditions import agent_conditions
from app.judge import thresholds
from app.leader import Leadership
from app.scheduler import Scheduler, Snapshot
from app.storage.db import make_engine, upgrade
from app.storage.meta import get_meta, set_meta
from app.storage.monitors import as_entries, list_monitors
from app.storage.opening import url_of
from app.storage.store import Store
from collectors import build_collectors, host_context
from collectors.base import Runner, run_command
from collectors.context import PingBook, SavedEntries

if TYPE_CHECKING:  # built on first use (their imports are heavy, and alerting's tables need the migrations)
    from app.alerting.channels import Channel
    from app.alerting.service import Alerting
    from app.export.mqtt import MqttExport
    from app.export.remote_write import RemoteWrite

log = logging.getLogger("rackpulse.runtime")
ENERGY_TICK = 60.0  # the draw now against each source's baseline; the bill itself is worked out every 5 minutes
LEADER_HOST = "alerts_leader_host"  # meta: the host name of the server that leads the alerts


class Runtime:
    def __init__(self, cfg: Config, *, collect: bool = True, runner: Runner = run_command,
                 snapshot: Snapshot | None = None, scheduler: Scheduler | None = None, migrate: bool = True) -> None:
        """``collect=False``: no scheduler (pages from a given snapshot: tests, parts of the demo)."""
        self.cfg, self.migrate, self.runner = cfg, migrate, runner
        self.saved_bays = bay_labels.host_bays(cfg)  # with the labels saved from disk pages; every collector holds it
        self.saved_entries = SavedEntries()  # monitors made in the browser, read from the database at start()
        self.pings = PingBook()  # what jobs said at /ping/<token>, read from the database at start()
        self.engine = make_engine(url_of(cfg))
        self.store = Store(self.engine, cfg.host)
        self.snap = snapshot or Snapshot(host=cfg.host)
        self.snap.judge.configure(thresholds(cfg))
        a = cfg.agents
        self.agents = Agents(self.engine, cfg.host, a.max_series_per_host, a.max_collectors_per_host,
                             a.max_entities_per_host, a.max_state_bytes, thresholds(cfg),
                             max_entity_changes=a.max_entity_changes_per_hour)
        if scheduler is None and collect:
            colls = build_collectors(cfg, runner, host_context(cfg, self.saved_bays, self.saved_entries, self.pings,
                                                               self.snap.states))
            scheduler = Scheduler(colls, cfg.schedules(colls), self.snap, self.store)
        self.scheduler = scheduler
        self.mqtt: MqttExport | None = None
        self.remote_writes: list[RemoteWrite] = []
        self._alerting: dict[str, Alerting | None] = {}
        self.host_alerting: dict[str, Alerting] = {}  # agent host -> its Alerting
        self._failed_hosts: set[str] = set()
        self._channels: list[Channel] | None = None  # the config's and the browser's, once loaded
        self.energy = EnergyWatch()  # the bill on /metrics; energy_budget and power_above_baseline
        self.energy_conditions: list[Any] = []
        # Several servers on one PostgreSQL: one evaluates and notifies (app/leader.py).
        self.leadership = Leadership(self.engine)
        self.leading = False
        self.size_note: dict[str, object] | None = None  # what storage.max_size gave up last (the overview)
        # A line every page shows while it is set: the demo's "history loading" while it seeds.
        self.notice: str | None = None

    # -- alerting ---------------------------------------------------------------------------

    def get_alerting(self) -> Alerting | None:
        """Built on first use: its tables exist only after the migrations ran."""
        if "a" not in self._alerting:
            from app.alerting.setup import from_config

            a = self._alerting["a"] = from_config(self.cfg, self.engine) if self.cfg.alerts.enabled else None
            if a is not None and self._channels is not None:
                a.set_channels(self._channels)
        return self._alerting["a"]

    def built_alerting(self) -> Alerting | None:
        return self._alerting.get("a")

    def alerting_ready(self, host: str) -> bool:
        """Whether alerting_for(host) is in memory already (else it reads its states from SQL)."""
        if "a" not in self._alerting:
            return False
        return host == self.cfg.host or self._alerting["a"] is None or host in self.host_alerting

    def alerting_for(self, host: str) -> Alerting | None:
        """One Alerting per agent host (its own states, flaps and silences); None when disabled."""
        if host == self.cfg.host or self.get_alerting() is None:
            return self.get_alerting()
        if host not in self.host_alerting:
            from app.alerting.setup import from_config

            a = self.host_alerting[host] = from_config(self.cfg, self.engine, host=host)
            if self._channels is not None:
                a.set_channels(self._channels)
        return self.host_alerting[host]

    def load_channels(self) -> None:
        """The config file's channels and the ones made in the browser, into every host's alerting."""
        from app.alerting.saved_channels import saved_channels
        from app.alerting.setup import channels_of

        try:
            saved = saved_channels(self.engine, self.cfg.host, self.cfg.alerts.timezone)
        except SQLAlchemyError as exc:  # a database without the table yet (migrate=False): none
            log.warning("channels made in the browser not read: %s", exc)
            saved = []
        self._channels = channels_of(self.cfg) + saved
        for a in [self._alerting.get("a"), *self.host_alerting.values()]:
            if a is not None:
                a.set_channels(self._channels)

    def alert_tick(self) -> None:
        """This host's alerts, on every server (what only it sees: its collectors, its heartbeats),
        unless the leader has the same host name; then, on the leader only, each agent host's, with
        its agent_silent, clock skew and cardinality kept among them (keyed by the agent, whichever
        server evaluates). All only queue; the leader's courier delivers for all."""
        now = time.time()
        local = self.get_alerting()
        if local is None:
            return
        leading = self.lead()
        if leading or self._own_host_is_mine():
            local.tick(self.snap, now, extra=self.energy_conditions, deliver=False)
        if not leading:
            return
        if self.leadership.shared:  # another server may have taken an agent's latest batch
            self.agents.catch_up()
        about: dict[str, list[Any]] = {}
        for c in agent_conditions(self.agents, self.cfg, now):
            about.setdefault(c.subject, []).append(c)
        for host in sorted({*self.agents.snapshots, *about}):
            alerting = self.alerting_for(host)
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

    def energy_tick(self) -> None:
        """This host's energy figures: the cost gauge, and the energy rules' conditions for the next alert tick."""
        self.energy_conditions = self.energy.update(self.store, self.snap, self.cfg.energy, time.time())

    def _own_host_is_mine(self) -> bool:
        """A standby evaluates its own host itself, unless the leader has the same host name (two
        servers of one identity): nobody else sees its collectors and the pings it takes."""
        if not self.leadership.shared:
            return False
        try:
            return get_meta(self.engine, LEADER_HOST) != self.cfg.host
        except SQLAlchemyError:
            return False

    def maintain(self) -> None:
        """Fold, prune by age, then (storage.max_size) by size."""
        from app.alerting.queries import forget_delivered
        from app.people.audit import forget_old
        from app.storage.base import RES_5M
        from app.storage.size import parse_size, trim

        if not self.leadership.check():
            return  # another server on this database folds and prunes
        st = self.cfg.storage
        self.store.make_rollups()
        self.store.prune(st.raw_days, st.rollup_5m_days, st.rollup_1h_days)
        forget_old(self.engine)  # the audit log keeps audit.KEEP_DAYS
        forget_delivered(self.engine)  # finished notifications: alerts.queries.OUTBOX_KEEP_DAYS
        bound = parse_size(st.max_size)
        if bound and trim(self.engine, bound, self.store._watermark(RES_5M)):
            self.size_note = self._size_note()

    def _size_note(self) -> dict[str, object] | None:
        from app.storage.size import last_trim

        try:
            return last_trim(self.engine)
        except SQLAlchemyError:
            return None

    def lead(self) -> bool:
        """Whether this server evaluates alerts now. Taking over from another server, it reads
        the alerts' states that server left in the database first: what it notified stays
        notified, what it acknowledged stays acknowledged."""
        leading = self.leadership.check()
        if leading and not self.leading:
            if self.leadership.shared:
                log.info("alerts: this server evaluates and notifies now (it holds the lead in the database)")
                try:
                    set_meta(self.engine, LEADER_HOST, self.cfg.host)
                except SQLAlchemyError as exc:
                    log.warning("could not note the leader's host name: %s", exc)
            for a in [self._alerting.get("a"), *self.host_alerting.values()]:
                if a is not None:
                    with a.lock:
                        a.states = a._load()
        elif self.leading and not leading:
            log.info("alerts: another server evaluates and notifies; this one stands by")
        self.leading = leading
        return leading

    # -- monitors made in the browser ---------------------------------------------------------

    def load_monitors(self) -> None:
        """The monitors made in the browser into what the collectors read (no restart needed)."""
        try:
            saved = list_monitors(self.engine, self.cfg.host)
        except SQLAlchemyError as exc:  # a database without the table yet (migrate=False): none
            log.warning("monitors made in the browser not read: %s", exc)
            return
        entries = as_entries([m for m in saved if not m.section.startswith("alerts.")])  # channels: load_channels
        for section in {*entries, "probes"}:
            self.saved_entries.replace(section, entries.get(section, []))

    def load_pings(self) -> None:
        from app.storage.heartbeats import load

        try:
            load(self.engine, self.cfg.host, self.pings)
        except SQLAlchemyError as exc:  # a database without the table yet (migrate=False): none
            log.warning("heartbeat pings not read: %s", exc)

    # -- life -------------------------------------------------------------------------------

    async def start(self, sessions_load: Callable[[], object] | None = None) -> None:
        cfg, scheduler = self.cfg, self.scheduler
        if self.migrate:
            upgrade(url_of(cfg))
        await run_in_threadpool(self.load_monitors)
        await run_in_threadpool(self.load_channels)
        await run_in_threadpool(self.load_pings)
        if sessions_load is not None:
            await run_in_threadpool(sessions_load)  # the session secret, before the first request needs it
        self.agents.restore()
        self.size_note = self._size_note()
        if scheduler is not None:
            scheduler.restore()
        # Move start-up objects (imports, templates, restored state) out of the GC's view:
        # later collections then scan only what requests and collections allocate.
        gc.collect()
        gc.freeze()
        if scheduler is None:
            return
        scheduler.start()
        # the fold and pruning: the leader's (or, alerts off, each server's own after the lead check)
        scheduler.add_task(self.maintain, lambda: self.cfg.storage.maintenance_interval, "maintenance")
        if self.leadership.shared and "heartbeats" in scheduler.collectors:
            # a job may ping any of the servers: the pings of this host's heartbeats that another
            # one took are in the database, read at the heartbeats collector's own interval
            every = scheduler.snapshot.statuses["heartbeats"].interval
            scheduler.add_task(self.load_pings, every, "pings")
        scheduler.add_task(self.energy_tick, ENERGY_TICK, "energy")
        alerting = self.get_alerting()
        if alerting is not None:
            alerting.courier.may_send = lambda: self.leading  # a standby's courier sends nothing
            alerting.courier.start()
            scheduler.add_task(self.alert_tick, lambda: self.cfg.alerts.interval, "alerts")  # a reload may change it
        self._start_exports(scheduler)

    def _start_exports(self, scheduler: Scheduler) -> None:
        cfg = self.cfg
        if cfg.export.mqtt is not None:
            from app.export.mqtt import MqttExport

            try:
                mqtt = MqttExport(cfg.export.mqtt, version())
            except OSError as exc:  # its password file: said, and the rest of rackpulse runs
                log.error("export.mqtt not started: cannot read password_file: %s", exc)
            else:
                mqtt.start(cfg.host)
                self.mqtt = mqtt
                scheduler.add_task(lambda: mqtt.publish([self.snap, *self.agents.snapshots.values()]),
                                   cfg.export.mqtt.interval, "mqtt")
        for rw_cfg in cfg.export.remote_write:
            from app.export.remote_write import RemoteWrite

            rw = RemoteWrite(rw_cfg, self.engine, f"rackpulse/{version()}")
            self.remote_writes.append(rw)
            scheduler.add_task(rw.tick, rw_cfg.interval, "remote_write")

    async def stop(self) -> None:
        """About a second whatever is going on: collecting first (its commands killed), then
        delivery and MQTT, each with a short bound of its own."""
        if self.scheduler is not None:
            await self.scheduler.stop()
        alerting = self.built_alerting()
        if alerting is not None:
            await run_in_threadpool(alerting.courier.stop, 1.0)
        if self.mqtt is not None:
            await run_in_threadpool(self.mqtt.stop)
        await run_in_threadpool(self.leadership.release)
        self.engine.dispose()
