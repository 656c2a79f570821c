"""stream_copied: whether a render's film copied the clips' video packets (no re-encode), as its own column;
it was kept in the render's media JSON as "yes"/"no"

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain ADD COLUMN, not a batch copy: dropping the old renders table would cascade to its critiques.
    op.add_column("renders", sa.Column("stream_copied", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.execute(
        "UPDATE renders SET stream_copied = (json_extract(media, '$.stream_copied') = 'yes'), "
        "media = json_remove(media, '$.stream_copied') WHERE json_type(media, '$.stream_copied') IS NOT NULL"
    )


def downgrade() -> None:
    op.execute(
        "UPDATE renders SET media = json_set(media, '$.stream_copied', CASE WHEN stream_copied THEN 'yes' ELSE 'no' END)"
    )
    op.execute("ALTER TABLE renders DROP COLUMN stream_copied")  # SQLite 3.35+; no table copy (see upgrade)
