"""sessions: signed-in web sessions kept server-side (app/server/sessions.py), each bound to its account's credentials

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("account", sa.String(32), nullable=False),
        sa.Column("stamp", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("seen_at", sa.Float(), nullable=False),
    )
    op.create_index("ix_sessions_account", "sessions", ["account"])


def downgrade() -> None:
    op.drop_index("ix_sessions_account", "sessions")
    op.drop_table("sessions")
