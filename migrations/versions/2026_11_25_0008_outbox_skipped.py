"""A notification a channel's policy decided not to send (acknowledged or resolved before the
channel's escalate_after_minutes, resolved during its quiet hours), and why.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(sa.Column("skipped", sa.Text()))


def downgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.drop_column("skipped")
