"""A note with an acknowledgement ("replacing the disk on Saturday"), on the alert and in its history.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # batch mode: SQLite cannot add a column to a table with constraints in place otherwise
    with op.batch_alter_table("alert") as batch:
        batch.add_column(sa.Column("ack_note", sa.Text()))
    with op.batch_alter_table("alert_event") as batch:
        batch.add_column(sa.Column("note", sa.Text()))


def downgrade() -> None:
    with op.batch_alter_table("alert_event") as batch:
        batch.drop_column("note")
    with op.batch_alter_table("alert") as batch:
        batch.drop_column("ack_note")
