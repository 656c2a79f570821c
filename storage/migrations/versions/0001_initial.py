"""initial schema

Revision ID: 0001
Revises: 
"""

import sqlalchemy as sa
from alembic import op


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('media',
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('ext', sa.String(length=10), nullable=False),
    sa.Column('size', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('sha256')
    )
    op.create_table('projects',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('title', sa.String(length=200), nullable=False),
    sa.Column('idea', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('current_version_id', sa.String(length=40), nullable=True),
    sa.Column('trashed_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('clips',
    sa.Column('key', sa.String(length=64), nullable=False),
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
    sa.PrimaryKeyConstraint('key')
    )
    op.create_table('versions',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('project_id', sa.String(length=40), nullable=False),
    sa.Column('parent_id', sa.String(length=40), nullable=True),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('message', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('storyboard', sa.JSON(), nullable=False),
    sa.Column('panel', sa.JSON(), nullable=False),
    sa.Column('personas', sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(['parent_id'], ['versions.id'], ),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('project_id', 'number')
    )
    with op.batch_alter_table('versions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_versions_project_id'), ['project_id'], unique=False)

    op.create_table('agent_calls',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('version_id', sa.String(length=40), nullable=False),
    sa.Column('role', sa.String(length=20), nullable=False),
    sa.Column('mode', sa.String(length=200), nullable=False),
    sa.Column('calls', sa.Integer(), nullable=False),
    sa.Column('prompt_tokens', sa.Integer(), nullable=False),
    sa.Column('completion_tokens', sa.Integer(), nullable=False),
    sa.Column('seconds', sa.Float(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['version_id'], ['versions.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('agent_calls', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_agent_calls_version_id'), ['version_id'], unique=False)

    op.create_table('notes',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('version_id', sa.String(length=40), nullable=False),
    sa.Column('shot_id', sa.String(length=40), nullable=True),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['version_id'], ['versions.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('notes', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_notes_version_id'), ['version_id'], unique=False)

    op.create_table('proposals',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('version_id', sa.String(length=40), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('mode', sa.String(length=200), nullable=False),
    sa.Column('data', sa.JSON(), nullable=False),
    sa.Column('usage', sa.JSON(), nullable=False),
    sa.Column('accepted_version_id', sa.String(length=40), nullable=True),
    sa.ForeignKeyConstraint(['accepted_version_id'], ['versions.id'], ),
    sa.ForeignKeyConstraint(['version_id'], ['versions.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('proposals', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_proposals_version_id'), ['version_id'], unique=False)

    op.create_table('renders',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('version_id', sa.String(length=40), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('backend', sa.String(length=40), nullable=False),
    sa.Column('model', sa.Text(), nullable=False),
    sa.Column('label', sa.Text(), nullable=False),
    sa.Column('shots', sa.JSON(), nullable=False),
    sa.Column('rendered', sa.Integer(), nullable=False),
    sa.Column('reused', sa.Integer(), nullable=False),
    sa.Column('seconds', sa.Float(), nullable=False),
    sa.Column('film_sha256', sa.String(length=64), nullable=False),
    sa.Column('media', sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(['film_sha256'], ['media.sha256'], ),
    sa.ForeignKeyConstraint(['version_id'], ['versions.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('renders', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_renders_version_id'), ['version_id'], unique=False)

    op.create_table('critiques',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('version_id', sa.String(length=40), nullable=False),
    sa.Column('render_id', sa.String(length=40), nullable=False),
    sa.Column('persona_id', sa.String(length=40), nullable=False),
    sa.Column('batch', sa.String(length=40), nullable=False),
    sa.Column('mode', sa.String(length=200), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('data', sa.JSON(), nullable=False),
    sa.Column('usage', sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(['render_id'], ['renders.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['version_id'], ['versions.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('critiques', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_critiques_version_id'), ['version_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('critiques', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_critiques_version_id'))

    op.drop_table('critiques')
    with op.batch_alter_table('renders', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_renders_version_id'))

    op.drop_table('renders')
    with op.batch_alter_table('proposals', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_proposals_version_id'))

    op.drop_table('proposals')
    with op.batch_alter_table('notes', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_notes_version_id'))

    op.drop_table('notes')
    with op.batch_alter_table('agent_calls', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_agent_calls_version_id'))

    op.drop_table('agent_calls')
    with op.batch_alter_table('versions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_versions_project_id'))

    op.drop_table('versions')
    op.drop_table('clips')
    op.drop_table('projects')
    op.drop_table('media')
