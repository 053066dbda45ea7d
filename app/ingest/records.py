"""What an agent's batch becomes on the server, apart from the Agents that hold it: its states read
as their plug-ins' types, each collector's status after a run, the runs and rollups stored before
(a replay under another outbox), and what the server's own /metrics says of each agent."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields, replace

from sqlalchemy import Connection, bindparam, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from app.batch import Batch, RollupRecord, RunRecord
from app.ingest.tokens import AgentRow
from app.snapshot import CollectorStatus
from app.storage.models import agent, collector_run, ingest_digest
from collectors import plugins
from collectors.base import MetricSpec, Sample
from collectors.state import State, StateError

# What the server's own /metrics says about each agent (label ``agent``; ``host`` is the server).
SERVER_METRICS = {
    "rackpulse_agent_last_contact_timestamp_seconds": MetricSpec("Unix time of the agent's last accepted batch."),
    "rackpulse_agent_clock_skew_seconds": MetricSpec("Server clock minus the agent's at its last batch."),
    "rackpulse_agent_batches_total": MetricSpec("Batches accepted from the agent.", "counter"),
    "rackpulse_agent_samples_total": MetricSpec("Samples accepted from the agent.", "counter"),
    "rackpulse_agent_token_revoked": MetricSpec("1 if the agent's token is revoked.", states=("live", "revoked")),
    "rackpulse_agent_info": MetricSpec("1, with the agent's version.", store=False),
}


# Built once: ingest runs these for every batch, and a statement built per call costs more
# Python time (construction, cache key) than PostgreSQL takes to run it.
# The UPDATE first: it takes the agent's row lock (PostgreSQL) or the write lock (SQLite), so two
# copies of one batch arriving together are serialised here; RETURNING reads the row in the same trip.
# It also checks the token again: the one the request was let in with may have been revoked or
# replaced since (callers are remembered, see Agents.caller).
CLAIM = (update(agent).where(agent.c.id == bindparam("b_id"), agent.c.token_hash == bindparam("b_hash"))
          .values(last_contact=bindparam("b_now"))
          .returning(agent.c.instance, agent.c.last_seq, agent.c.revoked_at, agent.c.statuses))
DONE = update(agent).where(agent.c.id == bindparam("b_id")).values(
    instance=bindparam("b_instance"), last_seq=bindparam("b_seq"), version=bindparam("b_version"),
    clock_skew=bindparam("b_skew"), remote=bindparam("b_remote"), batches=agent.c.batches + 1,
    samples=agent.c.samples + bindparam("b_stored"), statuses=bindparam("b_statuses"))


@dataclass
class Accepted:
    records: int
    duplicates: int
    samples: int
    last_seq: int

    def as_dict(self) -> dict[str, int]:
        return self.__dict__.copy()


@dataclass
class Taken:
    """What one batch stored, for the host's live view."""

    applied: list[RunRecord | RollupRecord]  # the records new to the server
    statuses: dict[str, CollectorStatus]  # every collector's, after them
    built: dict[int, list[Sample]]  # seq -> its samples, built once for store and snapshot
    stored: int  # samples
    new_seq: int



def server_samples(rows: list[AgentRow]) -> list[Sample]:
    """SERVER_METRICS, for each agent the server knows."""
    out = []
    for a in rows:
        lab = {"agent": a["host"]}
        out.append(Sample.of("rackpulse_agent_token_revoked", 1 if a["revoked_at"] else 0, **lab))
        out.append(Sample.of("rackpulse_agent_batches_total", a["batches"], **lab))
        out.append(Sample.of("rackpulse_agent_samples_total", a["samples"], **lab))
        out.append(Sample.of("rackpulse_agent_info", 1, version=a["version"] or "", **lab))
        if a["last_contact"]:
            out.append(Sample.of("rackpulse_agent_last_contact_timestamp_seconds", round(a["last_contact"], 3), **lab))
            out.append(Sample.of("rackpulse_agent_clock_skew_seconds", a["clock_skew"] or 0.0, **lab))
    return out


def typed_states(batch: Batch) -> tuple[dict[int, State], dict[int, str]]:
    """The batch's states as their plug-ins' types, by record, and why those that cannot be read
    could not. An empty state is none (the source is absent there); a plug-in this server does not
    have is left out: nothing here would read its state."""
    typed: dict[int, State] = {}
    odd: dict[int, str] = {}
    for r in batch.records:
        if not isinstance(r, RunRecord) or not r.state or (plugin := plugins().get(r.collector)) is None:
            continue
        try:
            typed[r.seq] = plugin.load(r.state)
        except StateError as exc:
            odd[r.seq] = str(exc)
    return typed, odd


def labels_of(d: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(d.items()))


def status_after(old: CollectorStatus | None, r: RunRecord) -> CollectorStatus:
    """A collector's status once the agent's run `r` is taken."""
    st = old or CollectorStatus(r.collector, r.interval, r.interval)
    last_success: float | None = r.started if r.ok else st.last_success
    last_error = (None if not r.no_data else r.error) if r.ok else r.error
    last_data = r.started if r.ok and not r.no_data else st.last_data
    return replace(st, interval=r.interval, up=r.ok, no_data=r.no_data, last_run=r.started, duration=r.duration,
                   warnings=list(r.warnings), runs=st.runs + 1, last_success=last_success, last_error=last_error,
                   last_data=last_data)


def load_statuses(text: str | None) -> dict[str, CollectorStatus]:
    """The agent row's statuses column (JSON: each collector's last run as the agent reported it)."""
    known = {f.name for f in fields(CollectorStatus)}  # a newer agent's extra keys are left out
    return {name: CollectorStatus(**{k: v for k, v in st.items() if k in known})
            for name, st in json.loads(text or "{}").items()}


def dump_statuses(statuses: dict[str, CollectorStatus]) -> str:
    return json.dumps({name: asdict(st) for name, st in statuses.items()})


def stored_runs(conn: Connection, host: str, records: list[RunRecord | RollupRecord]) -> set[tuple[str, float]]:
    """The (collector, started) of the runs among `records` stored already (a replay, or a copied
    outbox, under another instance id)."""
    runs = [r for r in records if isinstance(r, RunRecord)]
    if not runs:
        return set()
    rows = conn.execute(select(collector_run.c.collector, collector_run.c.started).where(
        collector_run.c.host == host, collector_run.c.started >= min(r.started for r in runs),
        collector_run.c.started <= max(r.started for r in runs)))
    return {(c, float(s)) for c, s in rows}


def first_time(conn: Connection, agent_id: int, r: RollupRecord, now: float) -> bool:
    """Whether this rollup record is new from this agent (its content digest was never stored)."""
    digest = hashlib.sha256(json.dumps([r.res, r.series], separators=(",", ":")).encode()).hexdigest()
    ins = (sqlite_insert if conn.dialect.name == "sqlite" else pg_insert)(ingest_digest)
    # RETURNING, not rowcount: psycopg reports no row count for a skipped ON CONFLICT insert.
    res = conn.execute(ins.values(agent_id=agent_id, digest=digest, ts=now).on_conflict_do_nothing()
                       .returning(ingest_digest.c.digest))
    return res.first() is not None
