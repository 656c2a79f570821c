"""scopes: what critiques, proposals and notes cover (whole film, scenes, shots); how each critic watched

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op


revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("critiques") as t:
        t.add_column(sa.Column("scope", sa.JSON(), nullable=True))
        t.add_column(sa.Column("coverage", sa.JSON(), nullable=True))
    with op.batch_alter_table("notes") as t:
        t.add_column(sa.Column("scope", sa.JSON(), nullable=True))
    with op.batch_alter_table("proposals") as t:
        t.add_column(sa.Column("scope", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("proposals") as t:
        t.drop_column("scope")
    with op.batch_alter_table("notes") as t:
        t.drop_column("scope")
    with op.batch_alter_table("critiques") as t:
        t.drop_column("coverage")
        t.drop_column("scope")
