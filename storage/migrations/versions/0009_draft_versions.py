"""draft: whether a version is the creator's open working draft (small actions — a keyframe, a re-roll, a picked
take, a reference — fold into it instead of making a version each); every version made before is not a draft

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain ADD COLUMN, not a batch copy: dropping the old versions table would cascade to what hangs off it.
    op.add_column("versions", sa.Column("draft", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    # A draft becomes an ordinary version (what it was before drafts existed); its summary stays its message.
    op.execute("ALTER TABLE versions DROP COLUMN draft")  # SQLite 3.35+; no table copy (see upgrade)
