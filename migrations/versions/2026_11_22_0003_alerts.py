"""Alerts: current state per (rule, subject), transitions, the notification outbox, silences.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "alert",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("rule", sa.String(64), nullable=False),
        sa.Column("subject", sa.String(255), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("severity", sa.String(16), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("labels", sa.Text(), nullable=False),
        sa.Column("since", sa.Float(), nullable=False),
        sa.Column("fired_at", sa.Float()),
        sa.Column("resolved_at", sa.Float()),
        sa.Column("last_notified", sa.Float()),
        sa.Column("acked_at", sa.Float()),
        sa.PrimaryKeyConstraint("id", name="pk_alert"),
        sa.UniqueConstraint("host", "rule", "subject", name="uq_alert_host_rule_subject"),
    )
    op.create_table(
        "alert_event",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("rule", sa.String(64), nullable=False),
        sa.Column("subject", sa.String(255), nullable=False),
        sa.Column("ts", sa.Float(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("severity", sa.String(16), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("labels", sa.Text(), nullable=False),
        sa.Column("duration", sa.Float()),
        sa.PrimaryKeyConstraint("id", name="pk_alert_event"),
    )
    op.create_index("ix_alert_event_ts", "alert_event", ["ts"])
    op.create_table(
        "outbox",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("event_id", sa.Integer(), nullable=False),
        sa.Column("channel", sa.String(64), nullable=False),
        sa.Column("created", sa.Float(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt", sa.Float(), nullable=False),
        sa.Column("delivered_at", sa.Float()),
        sa.Column("gave_up_at", sa.Float()),
        sa.Column("last_error", sa.Text()),
        sa.PrimaryKeyConstraint("id", name="pk_outbox"),
    )
    op.create_index("ix_outbox_pending", "outbox", ["delivered_at", "gave_up_at", "next_attempt"])
    op.create_table(
        "silence",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("rule", sa.String(64)),
        sa.Column("subject", sa.String(255)),
        sa.Column("until", sa.Float(), nullable=False),
        sa.Column("reason", sa.Text()),
        sa.Column("created", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_silence"),
    )


def downgrade() -> None:
    op.drop_table("silence")
    op.drop_index("ix_outbox_pending", "outbox")
    op.drop_table("outbox")
    op.drop_index("ix_alert_event_ts", "alert_event")
    op.drop_table("alert_event")
    op.drop_table("alert")
