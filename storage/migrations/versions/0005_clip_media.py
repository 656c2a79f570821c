"""clip_media: thumbnails and sampled frames cached per clip

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op


revision = '0005'
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('clip_media',
    sa.Column('clip_sha256', sa.String(length=64), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('fps', sa.Float(), nullable=False),
    sa.Column('frames', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('clip_sha256', 'kind')
    )


def downgrade() -> None:
    op.drop_table('clip_media')
