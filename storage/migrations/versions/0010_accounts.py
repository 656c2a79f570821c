"""accounts: a `users` table (name, salted scrypt hash, teacher) and `projects.owner`; every project made before
belongs to the local owner ("local", storage.owners.LOCAL_OWNER)

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("password_hash", sa.String(200), nullable=False),
        sa.Column("teacher", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    # A plain ADD COLUMN, not a batch copy: dropping the old projects table would cascade to its versions.
    op.add_column("projects", sa.Column("owner", sa.String(32), nullable=False, server_default="local"))
    op.create_index("ix_projects_owner", "projects", ["owner"])


def downgrade() -> None:
    op.drop_index("ix_projects_owner", "projects")
    op.execute("ALTER TABLE projects DROP COLUMN owner")  # SQLite 3.35+; no table copy (see upgrade)
    op.drop_table("users")
