"""shares: a project shared read-only with an account or with the class (reader "@class", storage.owners.CLASS)

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "shares",
        sa.Column("project_id", sa.String(40), sa.ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("reader", sa.String(32), primary_key=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_shares_reader", "shares", ["reader"])


def downgrade() -> None:
    op.drop_index("ix_shares_reader", "shares")
    op.drop_table("shares")
