"""PostgreSQL: older points in per-series chunks (arrays), with a view per tier over rows and chunks.

A row per point costs PostgreSQL about 96 bytes; a chunk of a few hundred points, compressed by
TOAST, a few bytes a point (app/storage/chunks.py says how they are filled and read). SQLite
keeps its rows: nothing changes there.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26
"""

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

# The chunk tables as they were written in 2026-11 (app/storage/chunks.py held the same as ddl()
# until issue 63 removed that unused copy): a migration does not follow later code.
STATEMENTS = (
    'CREATE TABLE sample_chunk (series_id integer NOT NULL, chunk integer NOT NULL, k smallint[] NOT NULL, value float8[] NOT NULL, CONSTRAINT pk_sample_chunk PRIMARY KEY (series_id, chunk))',
    'CREATE VIEW sample_all AS SELECT series_id, ts, value, (ts / 7200)::integer AS chunk FROM sample UNION ALL SELECT c.series_id, c.chunk::bigint * 7200 + u.k, u.value, c.chunk FROM sample_chunk c CROSS JOIN LATERAL unnest(c.k, c.value) AS u(k, value)',
    'CREATE TABLE rollup_5m_chunk (series_id integer NOT NULL, chunk integer NOT NULL, k smallint[] NOT NULL, vmin float8[] NOT NULL, vavg float8[] NOT NULL, vmax float8[] NOT NULL, n integer[] NOT NULL, CONSTRAINT pk_rollup_5m_chunk PRIMARY KEY (series_id, chunk))',
    'CREATE VIEW rollup_5m_all AS SELECT series_id, bucket, vmin, vavg, vmax, n, (bucket / 288)::integer AS chunk FROM rollup_5m UNION ALL SELECT c.series_id, c.chunk * 288 + u.k, u.vmin, u.vavg, u.vmax, u.n, c.chunk FROM rollup_5m_chunk c CROSS JOIN LATERAL unnest(c.k, c.vmin, c.vavg, c.vmax, c.n) AS u(k, vmin, vavg, vmax, n)',
    'CREATE TABLE rollup_1h_chunk (series_id integer NOT NULL, chunk integer NOT NULL, k smallint[] NOT NULL, vmin float8[] NOT NULL, vavg float8[] NOT NULL, vmax float8[] NOT NULL, n integer[] NOT NULL, CONSTRAINT pk_rollup_1h_chunk PRIMARY KEY (series_id, chunk))',
    'CREATE VIEW rollup_1h_all AS SELECT series_id, bucket, vmin, vavg, vmax, n, (bucket / 168)::integer AS chunk FROM rollup_1h UNION ALL SELECT c.series_id, c.chunk * 168 + u.k, u.vmin, u.vavg, u.vmax, u.n, c.chunk FROM rollup_1h_chunk c CROSS JOIN LATERAL unnest(c.k, c.vmin, c.vavg, c.vmax, c.n) AS u(k, vmin, vavg, vmax, n)',
)


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for statement in STATEMENTS:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    # Points in chunks go back into rows first (those already rows conflict and stay), so nothing is lost.
    op.execute("INSERT INTO sample SELECT series_id, ts, value FROM sample_all ON CONFLICT DO NOTHING")
    for table in ("rollup_5m", "rollup_1h"):
        op.execute(f"INSERT INTO {table} SELECT series_id, bucket, vmin, vavg, vmax, n FROM {table}_all "
                   "ON CONFLICT DO NOTHING")
    for table in ("sample", "rollup_5m", "rollup_1h"):
        op.execute(f"DROP VIEW {table}_all")
        op.execute(f"DROP TABLE {table}_chunk")
