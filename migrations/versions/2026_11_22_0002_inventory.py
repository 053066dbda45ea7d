"""Inventory: entities (arrays, members, disks, bays) with change history, collector state.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "collector_state",
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("collector", sa.String(64), nullable=False),
        sa.Column("updated", sa.Float(), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("host", "collector", name="pk_collector_state"),
    )
    op.create_table(
        "entity",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("collector", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("key", sa.String(255), nullable=False),
        sa.Column("attrs", sa.Text(), nullable=False),
        sa.Column("first_seen", sa.Float(), nullable=False),
        sa.Column("last_seen", sa.Float(), nullable=False),
        sa.Column("present", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_entity"),
        sa.UniqueConstraint("host", "kind", "key", name="uq_entity_host_kind_key"),
    )
    op.create_table(
        "entity_event",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("key", sa.String(255), nullable=False),
        sa.Column("ts", sa.Float(), nullable=False),
        sa.Column("field", sa.String(64), nullable=False),
        sa.Column("old", sa.Text()),
        sa.Column("new", sa.Text()),
        sa.PrimaryKeyConstraint("id", name="pk_entity_event"),
    )
    op.create_index("ix_entity_event_host_kind_key_ts", "entity_event", ["host", "kind", "key", "ts"])
    op.create_index("ix_entity_event_ts", "entity_event", ["ts"])


def downgrade() -> None:
    op.drop_index("ix_entity_event_ts", "entity_event")
    op.drop_index("ix_entity_event_host_kind_key_ts", "entity_event")
    op.drop_table("entity_event")
    op.drop_table("entity")
    op.drop_table("collector_state")
