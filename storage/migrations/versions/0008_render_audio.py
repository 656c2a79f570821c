"""audio: a render's film sound (what was voiced or reused, the mix's measured loudness) as a JSON column; NULL for
films rendered before the sound was wired (they have the narration only) and for silent films

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain ADD COLUMN, not a batch copy: dropping the old renders table would cascade to its critiques.
    op.add_column("renders", sa.Column("audio", sa.JSON(), nullable=True))


def downgrade() -> None:
    op.execute("ALTER TABLE renders DROP COLUMN audio")  # SQLite 3.35+; no table copy (see upgrade)
