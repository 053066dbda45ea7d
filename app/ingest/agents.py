"""The server side of agents: tokens, idempotent batch ingest, and each host's live view.

Each agent host gets its own Snapshot (what its pages show) and Store (its rows, by host)
on the server's one database. A batch is stored in one transaction together with the
agent's new sequence high-water mark, so a batch that was stored but whose answer was lost
is recognised when it comes again and stored only once.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time

from sqlalchemy import Connection, Engine, Row

from app.batch import Batch, BatchError, RunRecord
from app.exposition import Families, render_families
from app.ingest.records import (
    CLAIM,
    DONE,
    SERVER_METRICS,
    Accepted,
    Taken,
    dump_statuses,
    first_time,
    labels_of,
    load_statuses,
    server_samples,
    status_after,
    stored_runs,
    typed_states,
)
from app.ingest.tokens import (
    AgentRow,
    AuthError,
    Caller,
    TooManyHosts,
    authenticate,
    bearer_hash,
    issue,
    list_agents,
    revoke,
)
from app.judge import Judge, Thresholds
from app.snapshot import Snapshot, read_states
from app.storage.store import Late, SeriesLimit, Store
from collectors import metric_specs
from collectors.base import CollectResult, Entity, MetricSpec, Sample
from collectors.state import State

log = logging.getLogger("rackpulse.agents")
# kept here for the callers that have always found them here
__all__ = ["Agents", "AuthError", "Caller", "SERVER_METRICS", "TooManyHosts", "authenticate",
           "bearer_hash", "issue", "list_agents", "revoke", "typed_states"]


ROWS_SECONDS = 5.0


class Agents:
    """Everything the server holds about agent hosts, in memory and in SQL."""

    def __init__(self, engine: Engine, local_host: str, max_series: int | None = None, max_collectors: int = 64,
                 max_entities: int = 50_000, max_state_bytes: int = 2 * 1024 * 1024,
                 thresholds: Thresholds | None = None, max_entity_changes: int = 10_000) -> None:
        self.engine = engine
        self.thresholds = thresholds or Thresholds()  # each agent host's Judge judges with the server's
        # What one agent host may hold besides its series (agents.max_*_per_host, max_state_bytes):
        # 10,000 collector names and 400,000 entities once grew the server by 330 MB.
        self.max_collectors, self.max_entities, self.max_state_bytes = max_collectors, max_entities, max_state_bytes
        # inventory changes an hour per host: a token bucket each, full at start
        self.max_entity_changes = max_entity_changes
        self._change_budget: dict[str, tuple[float, float]] = {}  # host -> (changes left, at)
        self.local_host = local_host
        self.snapshots: dict[str, Snapshot] = {}
        self._stores: dict[str, Store] = {}
        self._specs: dict[str, dict[str, MetricSpec]] = {}
        self._blocks: dict[tuple[str, str], tuple[list[Sample], Families]] = {}
        self._lock = threading.Lock()
        self.generation = 0  # rises with every batch taken in: /metrics is merged again only then
        self._applied: dict[str, tuple[str | None, int]] = {}  # host -> (instance, seq) of its last batch here
        self._rows: tuple[int, float, list[AgentRow]] | None = None  # rows(): (generation, when, rows)
        self._bad_state: set[str] = set()
        self.max_series = max_series
        self.over_limit: dict[str, tuple[float, str]] = {}  # host -> (when, why) its last batch was refused
        self._callers: dict[str, Caller] = {}  # token hash -> agent, for tokens that were let in
        self._label_sets: dict[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]] = {}
        # SQLite has one writer: queueing here is cheaper than its busy-wait.
        self._write_lock = threading.Lock() if engine.dialect.name == "sqlite" else contextlib.nullcontext()

    def store(self, host: str) -> Store:
        with self._lock:
            if host not in self._stores:
                self._stores[host] = Store(self.engine, host, self.max_series)
            return self._stores[host]

    def changed(self) -> None:
        """A token issued or revoked here: the pages and /metrics read the agents table again."""
        with self._lock:
            self.generation += 1

    def rows(self, max_age: float = ROWS_SECONDS) -> list[AgentRow]:
        """The agents table, as list_agents reads it, kept until a batch changes it (or, for what
        another process changes, max_age seconds): the overview and /hosts read it on every view."""
        cached = self.cached_rows(max_age)
        if cached is not None:
            return cached
        generation, now = self.generation, time.monotonic()  # before the query: a batch meanwhile reads again
        fresh = list_agents(self.engine)
        self._rows = (generation, now, fresh)
        return fresh

    def cached_rows(self, max_age: float = ROWS_SECONDS) -> list[AgentRow] | None:
        """rows() while they are current, without touching the database; None when they are not
        (a page in the event loop then reads them in a thread)."""
        cached = self._rows
        if cached is not None and cached[0] == self.generation and time.monotonic() - cached[1] < max_age:
            return cached[2]
        return None

    def restore(self) -> None:
        """After a restart: every agent host's last state and collector statuses, from SQL."""
        for row in list_agents(self.engine):
            self._restore_host(row)

    def _restore_host(self, row: AgentRow) -> None:
        snap = self._snapshot(row["host"])
        snap.states.update(read_states(self.store(row["host"]).load_states(), f"agent {row['host']}"))
        snap.statuses.update(load_statuses(row["statuses"]))
        self._applied[row["host"]] = (row["instance"], row["last_seq"])

    def catch_up(self) -> list[str]:
        """Several servers on one database: the agent hosts whose latest batch another server
        took get their last states and statuses from the database, so the server that judges
        alerts judges what the agents said last, wherever they said it."""
        fresh = []
        for row in list_agents(self.engine):
            host = row["host"]
            if host == self.local_host or not row["last_seq"]:
                continue
            if self._applied.get(host) != (row["instance"], row["last_seq"]):
                self._restore_host(row)
                snap = self._snapshot(host)
                with self._lock:
                    for name in list(snap.states):
                        snap.findings_of(name)
                    snap.version += 1
                    self.generation += 1
                fresh.append(host)
        return fresh

    def specs(self, collector: str) -> dict[str, MetricSpec]:
        if collector not in self._specs:
            self._specs[collector] = metric_specs(collector)
        return self._specs[collector]

    def caller(self, hashed: str) -> Caller | None:
        """The agent a token hash names, if it was let in before (no database trip), else None:
        then ``authenticate`` it and ``remember`` it. ``accept`` checks the token again in its
        transaction, so a token revoked or replaced meanwhile is refused there and forgotten."""
        return self._callers.get(hashed)

    def remember(self, who: Caller) -> None:
        with self._lock:
            if len(self._callers) > 10_000:  # re-issued tokens leave old entries; keep this bounded
                self._callers.clear()
            self._callers[who.token_hash] = who

    def accept(self, who: Caller, batch: Batch, remote: str = "", now: float | None = None) -> Accepted:
        """Store a validated batch exactly once. Raises BatchError/AuthError; stores nothing then.
        Checked (its host, the host's limits, the token again), stored in one transaction with
        the agent's new high-water mark, then judged into the host's live view."""
        now = now or time.time()
        host = who.host
        if batch.host != host:
            raise AuthError(403, f"this token belongs to host {host!r}, but the batch says it is from {batch.host!r}")
        store = self.store(host)
        # Read as its plug-in's type before anything is stored: a state this server's plug-in cannot
        # read (an agent of another version) is not stored; its samples are, and the pages keep
        # the last good state.
        typed, odd = typed_states(batch)
        new_sets: list[tuple[tuple[str, str], ...]] = []  # label sets first seen in this batch
        with store.lock.shared(), self._write_lock:
            try:
                self._check_host_limits(host, batch)
                with self.engine.begin() as conn:
                    row = self._claim(conn, who, now)
                    taken = self._store_batch(conn, store, who.agent_id, row, batch, (typed, odd), new_sets, now)
                    conn.execute(DONE, {"b_id": who.agent_id, "b_instance": batch.instance, "b_seq": taken.new_seq,
                                         "b_version": batch.agent_version, "b_skew": round(now - batch.sent_at, 3),
                                         "b_remote": remote[:255], "b_stored": taken.stored,
                                         "b_statuses": dump_statuses(taken.statuses)})
            except AuthError:
                self._callers.pop(who.token_hash, None)  # the next request is refused before its body
                raise
            except SeriesLimit as exc:
                store.forget()
                self._forget_label_sets(new_sets)  # a refused batch leaves nothing behind in memory
                self.over_limit[host] = (now, str(exc))
                if host not in self._bad_state:
                    log.warning("agent %s: batch refused: %s", host, exc)
                raise BatchError(422, f"refused: {exc}") from None
            except BaseException:
                store.forget()  # its caches may name rows the rollback took away
                self._forget_label_sets(new_sets)
                raise
        self.over_limit.pop(host, None)
        self._update_snapshot(host, taken, typed, odd)
        self._applied[host] = (batch.instance, taken.new_seq)
        return Accepted(len(taken.applied), len(batch.records) - len(taken.applied), taken.stored, taken.new_seq)

    def _claim(self, conn: Connection, who: Caller, now: float) -> Row:
        """The agent's row, locked for this batch, if its token still stands (AuthError if not)."""
        row = conn.execute(CLAIM, {"b_id": who.agent_id, "b_hash": who.token_hash, "b_now": now}).first()
        if row is None:
            raise AuthError(401, "unknown agent token")  # replaced by `agents issue` since
        if row.revoked_at is not None:
            raise AuthError(401, f"the token of host {who.host!r} was revoked")
        return row

    def _store_batch(self, conn: Connection, store: Store, agent_id: int, row: Row, batch: Batch,
                     read: tuple[dict[int, State], dict[int, str]], new_sets: list[tuple[tuple[str, str], ...]],
                     now: float) -> Taken:
        """The records not stored before, each once; the collectors' statuses after them."""
        typed, odd = read
        host = store.host
        last_seq = row.last_seq if row.instance == batch.instance else 0
        fresh = [r for r in batch.records if r.seq > last_seq]
        new_seq = fresh[-1].seq if fresh else last_seq
        # Sequence numbers are per outbox instance: under another instance id, runs that
        # are stored already (a replay, or a copied outbox) are recognised by their time.
        replayed = (stored_runs(conn, host, fresh)
                    if row.instance is not None and row.instance != batch.instance else set())
        total = store.entities_with(conn, ((k, key) for r in fresh if isinstance(r, RunRecord) for k, key, _ in r.entities))
        if total > self.max_entities:
            raise SeriesLimit(f"host {host} would have {total} inventory entities, beyond its limit of "
                              f"{self.max_entities} (agents.max_entities_per_host)")
        taken = Taken([], load_statuses(row.statuses), {}, 0, new_seq)
        store.entity_changes = 0
        late = Late(store.watermarks(conn)[0])  # a spooled backlog is refolded once per batch
        for r in fresh:
            if isinstance(r, RunRecord):
                if (r.collector, r.started) in replayed:
                    continue
                taken.stored += self._write_run(conn, store, r, taken.built, late, typed.get(r.seq), r.seq in odd,
                                                new_sets)
                taken.statuses[r.collector] = status_after(taken.statuses.get(r.collector), r)
            else:
                if not first_time(conn, agent_id, r, now):
                    continue
                taken.stored += store.write_rollup_points(conn, r.res, [(m, labels_of(lab), pts)
                                                                        for m, lab, pts in r.series])
            taken.applied.append(r)
        self._spend_changes(host, store.entity_changes, now)  # refused: all of it rolls back
        store.refold(conn, late)
        return taken

    def _write_run(self, conn, store: Store, r: RunRecord, built: dict[int, list[Sample]], late: Late,
                   state: State | None, odd: bool, new_sets: list[tuple[tuple[str, str], ...]]) -> int:
        specs = self.specs(r.collector)
        skip = frozenset(m for m, s in specs.items() if not s.store)
        # Agents send the same label sets every run: sorting each one again was 8 % of ingest.
        known = self._label_sets
        if len(known) > 200_000:  # a host inventing label values must not grow this without end
            known.clear()
        out = []
        for m, lab, v in r.samples:
            items = tuple(lab.items())
            labels = known.get(items)
            if labels is None:
                labels = known[items] = tuple(sorted(items))
                new_sets.append(items)
            out.append(Sample(m, v, labels))
        built[r.seq] = out
        result = CollectResult(samples=built[r.seq],
                               entities=[Entity(k, key, attrs) for k, key, attrs in r.entities],
                               state=self._last_good(store.host, r.collector) if odd else state,
                               warnings=list(r.warnings))
        return store.write_run_in(conn, r.collector, r.started, r.duration, r.ok, r.error, result, skip, late)

    def _forget_label_sets(self, new_sets: list[tuple[tuple[str, str], ...]]) -> None:
        """The label sets a refused batch brought: kept, 25,000 invented ones held 5 MB for good."""
        for items in new_sets:
            self._label_sets.pop(items, None)
        if len(new_sets) > 1000:  # a dict keeps its grown table after pops: a fresh one is sized to fit
            self._label_sets = dict(self._label_sets)
        new_sets.clear()

    def _spend_changes(self, host: str, changes: int, now: float) -> None:
        """Take a batch's inventory changes from the host's hourly budget, or refuse the batch."""
        if not changes:
            return
        per_hour = float(self.max_entity_changes)
        left, at = self._change_budget.get(host, (per_hour, now))
        left = min(per_hour, left + (now - at) * per_hour / 3600)
        if changes > left:
            self._change_budget[host] = (left, now)
            raise SeriesLimit(f"host {host} sent {changes} inventory changes, beyond its limit of "
                              f"{self.max_entity_changes} an hour ({int(left)} left now; "
                              "agents.max_entity_changes_per_hour)")
        self._change_budget[host] = (left - changes, now)

    def _check_host_limits(self, host: str, batch: Batch) -> None:
        """Collector names and state sizes, before anything is stored (SeriesLimit: 422)."""
        runs = [r for r in batch.records if isinstance(r, RunRecord)]
        with self._lock:
            snap = self.snapshots.get(host)
            names = set(snap.statuses) | set(snap.states) if snap else set()
        names |= {r.collector for r in runs}
        if len(names) > self.max_collectors:
            raise SeriesLimit(f"host {host} would have {len(names)} collectors, beyond its limit of "
                              f"{self.max_collectors} (agents.max_collectors_per_host)")
        for r in runs:
            size = len(json.dumps(r.state, separators=(",", ":")))
            if size > self.max_state_bytes:
                raise SeriesLimit(f"the state of {r.collector} from {host} is {size} bytes, beyond the limit of "
                                  f"{self.max_state_bytes} (agents.max_state_bytes)")

    def _snapshot(self, host: str) -> Snapshot:
        if host not in self.snapshots:
            self.snapshots[host] = Snapshot(host=host, judge=Judge(host, self.thresholds))
        return self.snapshots[host]

    def _last_good(self, host: str, collector: str) -> State | None:
        with self._lock:
            snap = self.snapshots.get(host)
            return snap.states.get(collector) if snap else None

    def _update_snapshot(self, host: str, taken: Taken, typed: dict[int, State], odd: dict[int, str]) -> None:
        """The host's live view after a batch: its states, samples and statuses, judged once here
        (the pages and alerts of this host read the findings)."""
        fresh, built = taken.applied, taken.built
        with self._lock:
            snap = self._snapshot(host)
            for r in fresh:
                if isinstance(r, RunRecord):
                    if r.seq in typed:
                        snap.states[r.collector] = typed[r.seq]
                    elif r.seq not in odd and r.ok and r.no_data:  # its source went away there
                        snap.states.pop(r.collector, None)
                    snap.samples[r.collector] = built[r.seq]
            snap.statuses.update(taken.statuses)
            for name in {r.collector for r in fresh if isinstance(r, RunRecord)}:
                snap.findings_of(name)  # judged once, on ingest: the pages and alerts of this host read these
            for r in fresh:
                if isinstance(r, RunRecord) and r.seq in odd and r.collector in snap.statuses:
                    snap.statuses[r.collector].warnings = [f"state from agent not understood by this server "
                                                           f"({odd[r.seq]}); pages show the last good one"]
            if odd and host not in self._bad_state:
                self._bad_state.add(host)
                bad = sorted({r.collector for r in fresh if isinstance(r, RunRecord) and r.seq in odd})
                log.warning("agent %s: state of %s not understood (%s); is the agent another version?",
                            host, ", ".join(bad), next(iter(odd.values())))
            snap.version += 1
            self.generation += 1

    def metrics_groups(self) -> list[list[Families]]:
        """Every agent host's samples in the exposition format, re-rendered only when they changed,
        one group per host; first what the server knows of each agent (with the server's host)."""
        own = server_samples(list_agents(self.engine))
        out = [[render_families(own, SERVER_METRICS, self.local_host)] if own else []]  # first: the server's
        with self._lock:
            for host, snap in sorted(self.snapshots.items()):
                if host == self.local_host:
                    continue  # the server's own series: an agent may not stand in for it (duplicate series)
                group = []
                for coll, samples in sorted(snap.samples.items()):
                    key = (host, coll)
                    cached = self._blocks.get(key)
                    # a batch replaces the lists of the collectors it carries runs of: the others'
                    # parts are the same objects, and their text is the same
                    if cached is None or cached[0] is not samples:
                        cached = (samples, render_families(samples, self.specs(coll), host, only_declared=False))
                        self._blocks[key] = cached
                    group.append(cached[1])
                out.append(group)
        return out
