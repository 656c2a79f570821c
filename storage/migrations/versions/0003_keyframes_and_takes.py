"""keyframes, takes and take screenings; critiques of keyframe screenings

Revision ID: 0003
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op


revision = '0003'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('keyframes',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('version_id', sa.String(length=40), nullable=False),
    sa.Column('shot_id', sa.String(length=40), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('source', sa.String(length=20), nullable=False),
    sa.Column('seed', sa.Integer(), nullable=True),
    sa.Column('backend', sa.String(length=40), nullable=False),
    sa.Column('model', sa.Text(), nullable=False),
    sa.Column('label', sa.Text(), nullable=False),
    sa.Column('key', sa.String(length=64), nullable=True),
    sa.Column('width', sa.Integer(), nullable=False),
    sa.Column('height', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['sha256'], ['media.sha256'], ),
    sa.ForeignKeyConstraint(['version_id'], ['versions.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('keyframes', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_keyframes_key'), ['key'], unique=False)
        batch_op.create_index(batch_op.f('ix_keyframes_version_id'), ['version_id'], unique=False)

    op.create_table('take_screenings',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('version_id', sa.String(length=40), nullable=False),
    sa.Column('shot_id', sa.String(length=40), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('mode', sa.String(length=200), nullable=False),
    sa.Column('takes', sa.JSON(), nullable=False),
    sa.Column('votes', sa.JSON(), nullable=False),
    sa.Column('usage', sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(['version_id'], ['versions.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('take_screenings', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_take_screenings_version_id'), ['version_id'], unique=False)

    op.create_table('takes',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('version_id', sa.String(length=40), nullable=False),
    sa.Column('shot_id', sa.String(length=40), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('seed', sa.Integer(), nullable=False),
    sa.Column('keyframe_sha256', sa.String(length=64), nullable=True),
    sa.Column('key', sa.String(length=64), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('backend', sa.String(length=40), nullable=False),
    sa.Column('model', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['sha256'], ['media.sha256'], ),
    sa.ForeignKeyConstraint(['version_id'], ['versions.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('takes', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_takes_version_id'), ['version_id'], unique=False)

    with op.batch_alter_table('critiques', schema=None) as batch_op:
        batch_op.add_column(sa.Column('screening', sa.String(length=20), server_default='film', nullable=False))
        batch_op.alter_column('render_id',
               existing_type=sa.VARCHAR(length=40),
               nullable=True)



def downgrade() -> None:
    with op.batch_alter_table('critiques', schema=None) as batch_op:
        batch_op.alter_column('render_id',
               existing_type=sa.VARCHAR(length=40),
               nullable=False)
        batch_op.drop_column('screening')

    with op.batch_alter_table('takes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_takes_version_id'))

    op.drop_table('takes')
    with op.batch_alter_table('take_screenings', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_take_screenings_version_id'))

    op.drop_table('take_screenings')
    with op.batch_alter_table('keyframes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_keyframes_version_id'))
        batch_op.drop_index(batch_op.f('ix_keyframes_key'))

    op.drop_table('keyframes')
