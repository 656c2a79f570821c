"""Alembic environment: runs on the connection storage.db.migrate hands in."""

from alembic import context

from storage.db import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
