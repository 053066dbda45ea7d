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
from app.data.watch import DataWatch
from app.disks import bay_labels
from app.energy.watch import EnergyWatch
from app.ingest.agents import Agents
from app.judge import thresholds
from app.leader import Leadership
from app.runtime.alerts import RuntimeAlerts
from app.scheduler import Scheduler, Snapshot
from app.storage.db import make_engine, upgrade
from app.storage.monitors import as_entries, list_monitors
from app.storage.opening import url_of
from app.storage.store import Store
from collectors import build_collectors, host_context
from collectors.base import Runner, run_command
from collectors.context import PingBook, SavedEntries

if TYPE_CHECKING:  # built on first use (their imports are heavy, and alerting's tables need the migrations)
    from app.alerting.engine import Condition
    from app.alerting.service import Alerting
    from app.export.mqtt import MqttExport
    from app.export.remote_write import RemoteWrite

log = logging.getLogger("rackpulse.runtime")
DATA_TICK = 30.0  # a failed disk's effect on the data sets within the alert tick's own pace
ENERGY_TICK = 60.0  # the draw now against each source's baseline; the bill itself is worked out every 5 minutes


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
        self.energy = EnergyWatch()  # the bill on /metrics; energy_budget and power_above_baseline
        self.energy_conditions: list[Any] = []
        self.data = DataWatch()  # the /data page's verdicts; data_unprotected and data_at_risk
        self.data_conditions: list[Condition] = []
        # Several servers on one PostgreSQL: one evaluates and notifies (app/leader.py).
        self.leadership = Leadership(self.engine)
        self.alerts = RuntimeAlerts(lambda: self.cfg, self.engine, self.snap, self.agents, self.leadership,
                                    lambda: [*self.energy_conditions, *self.data_conditions])
        self.size_note: dict[str, object] | None = None  # what storage.max_size gave up last (the overview)
        # A line every page shows while it is set: the demo's "history loading" while it seeds.
        self.notice: str | None = None

    # -- alerting (app/runtime/alerts.py): the names the web and reload call -----------------

    def get_alerting(self) -> Alerting | None:
        return self.alerts.get()

    def built_alerting(self) -> Alerting | None:
        return self.alerts.built()

    def alerting_ready(self, host: str) -> bool:
        return self.alerts.ready(host)

    def alerting_for(self, host: str) -> Alerting | None:
        return self.alerts.for_host(host)

    def load_channels(self) -> None:
        self.alerts.load_channels()

    def alert_tick(self) -> None:
        self.alerts.tick()

    def lead(self) -> bool:
        return self.alerts.lead()

    @property
    def leading(self) -> bool:
        return self.alerts.leading

    @property
    def host_alerting(self) -> dict[str, Alerting]:
        return self.alerts.host_alerting

    def energy_tick(self) -> None:
        """This host's energy figures: the cost gauge, and the energy rules' conditions for the next alert tick."""
        self.energy_conditions = self.energy.update(self.store, self.snap, self.cfg.energy, time.time())

    def data_tick(self) -> None:
        """Each data set judged from the latest states: the /data page, its gauges and its two rules."""
        self.data_conditions = self.data.update(self.snap, self.cfg.data, time.time(), self.agents.snapshots)

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
        scheduler.add_task(self.data_tick, DATA_TICK, "data")
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
