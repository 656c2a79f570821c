"""clip cache entries carry a scope: "" (rendered here, any project) or the id of the project they were imported with

Revision ID: 0004
Revises: 0003

Entries already in the cache cannot be told apart (an import before this revision wrote them like a
render), so they keep scope "" as if rendered here.
"""

import sqlalchemy as sa
from alembic import op


revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None

COLUMNS = ("key", "sha256", "backend", "model", "num_frames", "fps", "width", "height", "seconds",
           "last_frame_sha256", "created_at")


def _clips(name: str, scoped: bool) -> None:
    op.create_table(name,
    sa.Column('key', sa.String(length=64), nullable=False),
    *([sa.Column('scope', sa.String(length=40), nullable=False)] if scoped else []),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('backend', sa.String(length=40), nullable=False),
    sa.Column('model', sa.Text(), nullable=False),
    sa.Column('num_frames', sa.Integer(), nullable=False),
    sa.Column('fps', sa.Integer(), nullable=False),
    sa.Column('width', sa.Integer(), nullable=False),
    sa.Column('height', sa.Integer(), nullable=False),
    sa.Column('seconds', sa.Float(), nullable=False),
    sa.Column('last_frame_sha256', sa.String(length=64), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['sha256'], ['media.sha256'], ),
    sa.PrimaryKeyConstraint('key', *(['scope'] if scoped else []))
    )


def upgrade() -> None:
    cols = ", ".join(COLUMNS)
    _clips('clips_new', scoped=True)
    op.execute(f"INSERT INTO clips_new ({cols}, scope) SELECT {cols}, '' FROM clips")
    op.drop_table('clips')
    op.rename_table('clips_new', 'clips')


def downgrade() -> None:
    """Imported entries are dropped (the old table has no room for a second entry per key)."""
    cols = ", ".join(COLUMNS)
    _clips('clips_old', scoped=False)
    op.execute(f"INSERT INTO clips_old ({cols}) SELECT {cols} FROM clips WHERE scope = ''")
    op.drop_table('clips')
    op.rename_table('clips_old', 'clips')
