"""The Alembic migrations build exactly the tables the models describe (a model change needs a migration)."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from storage.db import Base, Database


def test_migrations_match_the_models(tmp_path):
    db = Database(tmp_path / "chief.db")  # applies every migration
    with db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata)
    db.close()
    assert diff == [], f"the models and the migrations disagree: {diff}"


def test_a_model_change_without_a_migration_is_caught(tmp_path):
    """The check above can fail: a column only the model has is reported."""
    import sqlalchemy as sa

    db = Database(tmp_path / "chief.db")
    extra = sa.Table("projects", sa.MetaData(), *[c.copy() for c in Base.metadata.tables["projects"].columns],
                     sa.Column("colour", sa.String(20)))
    with db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), extra.metadata)
    db.close()
    assert [(d[0], d[2], d[3].name) for d in diff if d[0] == "add_column"] == [("add_column", "projects", "colour")]
