"""Database schema (SQLAlchemy Core). Alembic migrations in migrations/ must match it."""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(column_0_label)s",
        "uq": "uq_%(table_name)s_%(column_0_name)s",
        "pk": "pk_%(table_name)s",
    }
)

# One row per (host, metric, label set); samples refer to it by id.
series = Table(
    "series",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("host", String(255), nullable=False),
    Column("metric", String(255), nullable=False),
    Column("labels", Text, nullable=False),  # canonical JSON of sorted [key, value] pairs
    UniqueConstraint("host", "metric", "labels", name="uq_series_host_metric_labels"),
)

# Raw samples, kept for storage.raw_days. WITHOUT ROWID on SQLite: the primary key is the
# table, which halves the file and makes one series' time range a single b-tree scan.
sample = Table(
    "sample",
    metadata,
    Column("series_id", Integer, primary_key=True, autoincrement=False),
    Column("ts", BigInteger, primary_key=True, autoincrement=False),
    Column("value", Float, nullable=False),
    sqlite_with_rowid=False,
)

# Closed 2-hour spans of raw samples, one Gorilla block a series and span (app/storage/blocks.py):
# about 0.4 bytes a sample where a row costs 14 (SQLite) or a chunk array 8 (PostgreSQL).
sample_block = Table(
    "sample_block",
    metadata,
    Column("series_id", Integer, primary_key=True, autoincrement=False),
    Column("chunk", Integer, primary_key=True, autoincrement=False),  # ts // 7200
    Column("data", LargeBinary, nullable=False),
    sqlite_with_rowid=False,
)


def _rollup_table(name: str) -> Table:
    # One table per resolution, keyed by bucket number (ts // resolution): on a year of a
    # 16-disk host that is 3 bytes a row less than a (resolution, ts) key, ~90 MB of 500.
    return Table(
        name,
        metadata,
        Column("series_id", Integer, primary_key=True, autoincrement=False),
        Column("bucket", Integer, primary_key=True, autoincrement=False),
        Column("vmin", Float, nullable=False),
        Column("vavg", Float, nullable=False),
        Column("vmax", Float, nullable=False),
        Column("n", Integer, nullable=False),
        sqlite_with_rowid=False,
    )


# min/avg/max per bucket: 5-minute buckets (kept a year) and hourly ones (kept beyond).
rollup_5m = _rollup_table("rollup_5m")
rollup_1h = _rollup_table("rollup_1h")

collector_run = Table(
    "collector_run",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("host", String(255), nullable=False),
    Column("collector", String(64), nullable=False),
    Column("started", Float, nullable=False),
    Column("duration", Float, nullable=False),
    Column("ok", Boolean, nullable=False),
    Column("error", Text),
    Index("ix_collector_run_host_collector_started", "host", "collector", "started"),
)

# The latest domain state of each collector, so pages and "which bay was that disk in"
# survive a restart.
collector_state = Table(
    "collector_state",
    metadata,
    Column("host", String(255), primary_key=True),
    Column("collector", String(64), primary_key=True),
    Column("updated", Float, nullable=False),
    Column("state", Text, nullable=False),
)

# Inventory: arrays, member slots, disks, bays. Attribute changes go to entity_event.
entity = Table(
    "entity",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("host", String(255), nullable=False),
    Column("collector", String(64), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("key", String(255), nullable=False),
    Column("attrs", Text, nullable=False),
    Column("first_seen", Float, nullable=False),
    Column("last_seen", Float, nullable=False),
    Column("present", Boolean, nullable=False),
    UniqueConstraint("host", "kind", "key", name="uq_entity_host_kind_key"),
)

entity_event = Table(
    "entity_event",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("host", String(255), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("key", String(255), nullable=False),
    Column("ts", Float, nullable=False),
    Column("field", String(64), nullable=False),
    Column("old", Text),
    Column("new", Text),
    Index("ix_entity_event_host_kind_key_ts", "host", "kind", "key", "ts"),
    Index("ix_entity_event_ts", "ts"),
)

meta = Table(
    "meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

# Alerts: one row per (rule, subject) with its current state; every transition is an
# alert_event; notifications wait in the outbox until a channel accepted them.
alert = Table(
    "alert",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("host", String(255), nullable=False),
    Column("rule", String(64), nullable=False),
    Column("subject", String(255), nullable=False),
    Column("state", String(16), nullable=False),  # pending | firing | resolved
    Column("severity", String(16), nullable=False),
    Column("summary", Text, nullable=False),
    Column("labels", Text, nullable=False),
    Column("since", Float, nullable=False),
    Column("fired_at", Float),
    Column("resolved_at", Float),
    Column("last_notified", Float),
    Column("acked_at", Float),
    Column("ack_note", Text),  # what the person who acknowledged it wrote
    UniqueConstraint("host", "rule", "subject", name="uq_alert_host_rule_subject"),
)

alert_event = Table(
    "alert_event",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("host", String(255), nullable=False),
    Column("rule", String(64), nullable=False),
    Column("subject", String(255), nullable=False),
    Column("ts", Float, nullable=False),
    Column("kind", String(16), nullable=False),  # firing | resolved | reminder | ack | silence
    Column("severity", String(16), nullable=False),
    Column("summary", Text, nullable=False),
    Column("labels", Text, nullable=False),
    Column("duration", Float),
    Column("note", Text),  # an acknowledgement's note
    Index("ix_alert_event_ts", "ts"),
)

outbox = Table(
    "outbox",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("event_id", Integer, nullable=False),
    Column("channel", String(64), nullable=False),
    Column("created", Float, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("next_attempt", Float, nullable=False),
    Column("delivered_at", Float),
    Column("gave_up_at", Float),
    Column("last_error", Text),
    # Not sent by the channel's own choice (see app/alerting/policy.py): why; delivered_at is then
    # the moment it was decided, so the queue goes on.
    Column("skipped", Text),
    Index("ix_outbox_pending", "delivered_at", "gave_up_at", "next_attempt"),
)

silence = Table(
    "silence",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("host", String(255), nullable=False),
    Column("rule", String(64)),  # None: any rule
    Column("subject", String(255)),  # None: any subject
    Column("until", Float, nullable=False),
    Column("reason", Text),
    Column("created", Float, nullable=False),
)

# Remote agents: one per host. The token is stored as its sha256 hash only. ``last_seq``
# is the highest outbox record accepted from ``instance``: records at or below it are
# duplicates (a re-sent batch), which makes ingest idempotent.
agent = Table(
    "agent",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("host", String(255), nullable=False),
    Column("token_hash", String(80), nullable=False),
    Column("created", Float, nullable=False),
    Column("revoked_at", Float),
    Column("instance", String(64)),
    Column("last_seq", BigInteger, nullable=False),
    Column("version", String(64)),
    Column("last_contact", Float),
    Column("clock_skew", Float),
    Column("remote", String(255)),
    Column("batches", BigInteger, nullable=False),
    Column("samples", BigInteger, nullable=False),
    Column("statuses", Text),  # JSON: each collector's last run as the agent reported it
    UniqueConstraint("host", name="uq_agent_host"),
    UniqueConstraint("token_hash", name="uq_agent_token_hash"),
)

# Rollup records an agent sent, by digest of their content: the outbox sequence number says
# which records are new only within one outbox instance, so a replay under another instance id
# is recognised here (runs are recognised by their collector and start time).
ingest_digest = Table(
    "ingest_digest",
    metadata,
    Column("agent_id", Integer, primary_key=True, autoincrement=False),
    Column("digest", String(64), primary_key=True),
    Column("ts", Float, nullable=False),
)

# Monitors made in the browser (a probe added on /monitors): each an entry of a plug-in's config
# section as JSON, beside the TOML ones (which the browser never changes). Names are unique per
# host and section, across kinds (one probe name is one series).
monitor = Table(
    "monitor",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("host", String(255), nullable=False),
    Column("section", String(64), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("name", String(100), nullable=False),
    Column("spec", Text, nullable=False),
    Column("created", Float, nullable=False),
    Column("updated", Float, nullable=False),
    UniqueConstraint("host", "section", "name", name="uq_monitor_name"),
)


# Heartbeats (collectors/probes/heartbeats): a job's URL token, stored as its sha256 only, and
# its last pings of each kind, so a restart forgets none.
heartbeat = Table(
    "heartbeat",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("host", String(255), nullable=False),
    Column("name", String(100), nullable=False),
    Column("token_hash", String(80), nullable=False),
    Column("created", Float, nullable=False),
    Column("last_success", Float),
    Column("last_fail", Float),
    Column("last_start", Float),
    Column("last_body", Text),
    UniqueConstraint("host", "name", name="uq_heartbeat_name"),
    UniqueConstraint("token_hash", name="uq_heartbeat_token"),
)


# People (app/people/users.py): a name, a role (admin | viewer), the scrypt hash of their password, and
# two-factor: the TOTP secret (it must be readable to check a code), the last time step a code
# was accepted at (a code is refused when used again), recovery codes as sha256 hashes. `epoch`
# rises when the password, the role or two-factor changes: every session made before ends.
web_user = Table(
    "web_user",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(100), nullable=False),
    Column("role", String(16), nullable=False),
    Column("password_hash", String(200), nullable=False),
    Column("epoch", Integer, nullable=False, default=0),
    Column("totp_secret", String(64)),
    Column("totp_pending", String(64)),
    Column("totp_last_step", BigInteger),
    Column("recovery", Text),  # JSON list of sha256 hex of the unused recovery codes
    Column("created", Float, nullable=False),
    UniqueConstraint("name", name="uq_web_user_name"),
)

# API tokens for scripts (app/people/api_tokens.py): stored as sha256 only; read or write scope; an
# optional expiry; revoked ones stay listed (with when) until removed.
api_token = Table(
    "api_token",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(100), nullable=False),
    Column("owner", String(100)),  # the user who made it on the account page; None: the CLI
    Column("scope", String(8), nullable=False),  # read | write
    Column("token_hash", String(80), nullable=False),
    Column("created", Float, nullable=False),
    Column("expires", Float),
    Column("last_used", Float),
    Column("last_address", String(64)),
    Column("revoked", Float),
    UniqueConstraint("owner", "name", name="uq_api_token_owner_name"),  # names are per person (0012)
    UniqueConstraint("token_hash", name="uq_api_token_hash"),
)

# Who changed what, when and from where (app/people/audit.py): every acknowledgement, silence, label,
# note, user and token change, login and failed login.
audit = Table(
    "audit",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("ts", Float, nullable=False, index=True),
    Column("actor", String(120), nullable=False),  # "alice", "token:ansible", "proxy:bob"
    Column("action", String(200), nullable=False),  # "POST /alerts/ack", "login", "login refused"
    Column("detail", Text),
    Column("address", String(64)),
    Column("status", Integer),
)
