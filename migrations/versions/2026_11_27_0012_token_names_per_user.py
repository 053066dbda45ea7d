"""API token names are per person: unique per owner, not across the server (a viewer choosing a
name learned another user's token names from "a token named 'rw' exists already"). Tokens made
on the command line have no owner; their names stay unique among themselves (app/api_tokens.py).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27
"""

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("api_token") as batch:
        batch.drop_constraint("uq_api_token_name", type_="unique")
        batch.create_unique_constraint("uq_api_token_owner_name", ["owner", "name"])


def downgrade() -> None:
    with op.batch_alter_table("api_token") as batch:
        batch.drop_constraint("uq_api_token_owner_name", type_="unique")
        batch.create_unique_constraint("uq_api_token_name", ["name"])
