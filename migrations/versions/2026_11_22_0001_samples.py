"""Time series: series, raw samples, rollups, collector runs.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "series",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("metric", sa.String(255), nullable=False),
        sa.Column("labels", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_series"),
        sa.UniqueConstraint("host", "metric", "labels", name="uq_series_host_metric_labels"),
    )
    op.create_table(
        "sample",
        sa.Column("series_id", sa.Integer(), nullable=False, autoincrement=False),
        sa.Column("ts", sa.BigInteger(), nullable=False, autoincrement=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("series_id", "ts", name="pk_sample"),
        sqlite_with_rowid=False,
    )
    for name in ("rollup_5m", "rollup_1h"):
        op.create_table(
            name,
            sa.Column("series_id", sa.Integer(), nullable=False, autoincrement=False),
            sa.Column("bucket", sa.Integer(), nullable=False, autoincrement=False),
            sa.Column("vmin", sa.Float(), nullable=False),
            sa.Column("vavg", sa.Float(), nullable=False),
            sa.Column("vmax", sa.Float(), nullable=False),
            sa.Column("n", sa.Integer(), nullable=False),
            sa.PrimaryKeyConstraint("series_id", "bucket", name=f"pk_{name}"),
            sqlite_with_rowid=False,
        )
    op.create_table(
        "collector_run",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("collector", sa.String(64), nullable=False),
        sa.Column("started", sa.Float(), nullable=False),
        sa.Column("duration", sa.Float(), nullable=False),
        sa.Column("ok", sa.Boolean(), nullable=False),
        sa.Column("error", sa.Text()),
        sa.PrimaryKeyConstraint("id", name="pk_collector_run"),
    )
    op.create_index("ix_collector_run_host_collector_started", "collector_run", ["host", "collector", "started"])
    op.create_table(
        "meta",
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_meta"),
    )


def downgrade() -> None:
    op.drop_table("meta")
    op.drop_index("ix_collector_run_host_collector_started", "collector_run")
    op.drop_table("collector_run")
    op.drop_table("rollup_1h")
    op.drop_table("rollup_5m")
    op.drop_table("sample")
    op.drop_table("series")
