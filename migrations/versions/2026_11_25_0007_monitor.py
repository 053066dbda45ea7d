"""Monitors made in the browser (probes today): kept beside the TOML ones, which stay read-only.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "monitor",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("section", sa.String(64), nullable=False),  # the plug-in's config section: probes
        sa.Column("kind", sa.String(32), nullable=False),  # its list in that section: ping, http, tcp
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("spec", sa.Text, nullable=False),  # JSON: the entry as the TOML would say it
        sa.Column("created", sa.Float, nullable=False),
        sa.Column("updated", sa.Float, nullable=False),
        sa.UniqueConstraint("host", "section", "name", name="uq_monitor_name"),
    )


def downgrade() -> None:
    op.drop_table("monitor")
