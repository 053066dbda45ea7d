"""People and automation: users with roles and two-factor, API tokens, the audit log.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "web_user",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("password_hash", sa.String(200), nullable=False),
        sa.Column("epoch", sa.Integer, nullable=False),
        sa.Column("totp_secret", sa.String(64)),
        sa.Column("totp_pending", sa.String(64)),
        sa.Column("totp_last_step", sa.BigInteger),
        sa.Column("recovery", sa.Text),
        sa.Column("created", sa.Float, nullable=False),
        sa.UniqueConstraint("name", name="uq_web_user_name"),
    )
    op.create_table(
        "api_token",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("owner", sa.String(100)),
        sa.Column("scope", sa.String(8), nullable=False),
        sa.Column("token_hash", sa.String(80), nullable=False),
        sa.Column("created", sa.Float, nullable=False),
        sa.Column("expires", sa.Float),
        sa.Column("last_used", sa.Float),
        sa.Column("last_address", sa.String(64)),
        sa.Column("revoked", sa.Float),
        sa.UniqueConstraint("name", name="uq_api_token_name"),
        sa.UniqueConstraint("token_hash", name="uq_api_token_hash"),
    )
    op.create_table(
        "audit",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("ts", sa.Float, nullable=False),
        sa.Column("actor", sa.String(120), nullable=False),
        sa.Column("action", sa.String(200), nullable=False),
        sa.Column("detail", sa.Text),
        sa.Column("address", sa.String(64)),
        sa.Column("status", sa.Integer),
    )
    op.create_index("ix_audit_ts", "audit", ["ts"])


def downgrade() -> None:
    op.drop_index("ix_audit_ts", "audit")
    op.drop_table("audit")
    op.drop_table("api_token")
    op.drop_table("web_user")
