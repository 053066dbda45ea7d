"""Raw samples older than the folds read go into Gorilla blocks (app/storage/blocks.py), on SQLite
and PostgreSQL alike; PostgreSQL's raw chunk arrays (0011) give their points back to rows, which
the next compaction packs into blocks. The rollup tiers keep their chunks.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sample_block",
        sa.Column("series_id", sa.Integer(), nullable=False, autoincrement=False),
        sa.Column("chunk", sa.Integer(), nullable=False, autoincrement=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("series_id", "chunk", name="pk_sample_block"),
        sqlite_with_rowid=False,
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute("INSERT INTO sample SELECT series_id, ts, value FROM sample_all WHERE chunk IS NOT NULL "
                   "ON CONFLICT DO NOTHING")
        op.execute("DROP VIEW sample_all")
        op.execute("DROP TABLE sample_chunk")
        op.execute("DELETE FROM meta WHERE key = 'chunked_sample'")


def downgrade() -> None:
    # Every block's samples back into rows first (the older schema has no blocks), so nothing is
    # lost; a row already there stays (it is the newer write).
    from app.storage import gorilla  # the block format is fixed: this reads what upgrade's code wrote

    bind = op.get_bind()
    insert = ("INSERT INTO sample (series_id, ts, value) VALUES (:s, :t, :v) ON CONFLICT DO NOTHING")
    for sid, data in bind.execute(sa.text("SELECT series_id, data FROM sample_block")).all():
        times, values = gorilla.decode(bytes(data))
        bind.execute(sa.text(insert), [{"s": sid, "t": t, "v": v} for t, v in zip(times, values, strict=True)])
    if bind.dialect.name == "postgresql":
        op.execute("CREATE TABLE sample_chunk (series_id integer NOT NULL, chunk integer NOT NULL, k smallint[] NOT NULL, "
                   "value float8[] NOT NULL, CONSTRAINT pk_sample_chunk PRIMARY KEY (series_id, chunk))")
        op.execute("CREATE VIEW sample_all AS SELECT series_id, ts, value, (ts / 7200)::integer AS chunk FROM sample "
                   "UNION ALL SELECT c.series_id, c.chunk::bigint * 7200 + u.k, u.value, c.chunk FROM sample_chunk c "
                   "CROSS JOIN LATERAL unnest(c.k, c.value) AS u(k, value)")
    op.drop_table("sample_block")
