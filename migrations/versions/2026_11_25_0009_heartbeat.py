"""Heartbeats: each job's secret URL token (hashed) and what it last said (success, failure with
its log, start), so a restart forgets no ping.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "heartbeat",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("token_hash", sa.String(80), nullable=False),
        sa.Column("created", sa.Float, nullable=False),
        sa.Column("last_success", sa.Float),
        sa.Column("last_fail", sa.Float),
        sa.Column("last_start", sa.Float),
        sa.Column("last_body", sa.Text),
        sa.UniqueConstraint("host", "name", name="uq_heartbeat_name"),
        sa.UniqueConstraint("token_hash", name="uq_heartbeat_token"),
    )


def downgrade() -> None:
    op.drop_table("heartbeat")
