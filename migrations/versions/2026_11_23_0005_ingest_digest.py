"""Digests of agents' rollup records, so a batch replayed under another instance id is stored once.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ingest_digest",
        sa.Column("agent_id", sa.Integer(), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("ts", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("agent_id", "digest", name="pk_ingest_digest"),
    )


def downgrade() -> None:
    op.drop_table("ingest_digest")
