"""Agents: one row per remote host, its hashed token, and what the server knows of it.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agent",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("token_hash", sa.String(80), nullable=False),
        sa.Column("created", sa.Float(), nullable=False),
        sa.Column("revoked_at", sa.Float()),
        sa.Column("instance", sa.String(64)),
        sa.Column("last_seq", sa.BigInteger(), nullable=False),
        sa.Column("version", sa.String(64)),
        sa.Column("last_contact", sa.Float()),
        sa.Column("clock_skew", sa.Float()),
        sa.Column("remote", sa.String(255)),
        sa.Column("batches", sa.BigInteger(), nullable=False),
        sa.Column("samples", sa.BigInteger(), nullable=False),
        sa.Column("statuses", sa.Text()),
        sa.PrimaryKeyConstraint("id", name="pk_agent"),
        sa.UniqueConstraint("host", name="uq_agent_host"),
        sa.UniqueConstraint("token_hash", name="uq_agent_token_hash"),
    )


def downgrade() -> None:
    op.drop_table("agent")
