"""jobs: the web server's queue as records (app/server/jobs.py): who asked for what, when it was queued, started and ended

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("owner", sa.String(32), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("project", sa.String(40), nullable=False, server_default=""),
        sa.Column("version", sa.Integer(), nullable=True),
        sa.Column("label", sa.Text(), nullable=False, server_default=""),
        sa.Column("state", sa.String(12), nullable=False),
        sa.Column("message", sa.Text(), nullable=False, server_default=""),
        sa.Column("server", sa.String(80), nullable=False, server_default=""),
        sa.Column("queued_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_jobs_owner", "jobs", ["owner"])
    op.create_index("ix_jobs_state", "jobs", ["state"])


def downgrade() -> None:
    op.drop_index("ix_jobs_state", "jobs")
    op.drop_index("ix_jobs_owner", "jobs")
    op.drop_table("jobs")
