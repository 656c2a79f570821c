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
    extra = sa.Table(
        "projects",
        sa.MetaData(),
        *[c.copy() for c in Base.metadata.tables["projects"].columns],
        sa.Column("colour", sa.String(20)),
    )
    with db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), extra.metadata)
    db.close()
    assert [(d[0], d[2], d[3].name) for d in diff if d[0] == "add_column"] == [("add_column", "projects", "colour")]


def test_head_is_alembics_head_and_a_database_at_it_opens_without_alembic(tmp_path):
    """`storage.db.HEAD` names the newest migration (a migration added without moving HEAD fails here: databases
    would stop at the old head). A database at HEAD opens in a fresh process without importing Alembic; one a
    migration behind is upgraded on open; one that a newer CHIEF migrated further is still refused in one line."""
    import subprocess
    import sys
    from pathlib import Path

    import pytest
    from alembic import command
    from alembic.script import ScriptDirectory
    from sqlalchemy import create_engine, text

    import storage.db
    from storage.db import HEAD, DatabaseError, alembic_config

    cfg = alembic_config()
    assert ScriptDirectory.from_config(cfg).get_current_head() == HEAD

    Database(tmp_path / "head.db").close()
    opened = (
        "import sys; from storage.db import Database; Database(sys.argv[1]).close(); print('alembic' in sys.modules)"
    )
    root = Path(storage.db.__file__).parent.parent
    out = subprocess.run(
        [sys.executable, "-c", opened, str(tmp_path / "head.db")], cwd=root, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False", out.stderr

    behind = tmp_path / "behind.db"
    engine = create_engine(f"sqlite:///{behind}")
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, ScriptDirectory.from_config(cfg).get_revision(HEAD).down_revision)
    engine.dispose()
    Database(behind).close()  # upgraded on open
    engine = create_engine(f"sqlite:///{behind}")
    with engine.begin() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).fetchall() == [(HEAD,)]
        conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))  # as a newer CHIEF leaves it
    engine.dispose()
    with pytest.raises(DatabaseError, match="written by a newer CHIEF"):
        Database(behind)


def test_0004_keeps_the_existing_clip_cache_as_rendered_here(tmp_path):
    """A database at 0001 with a cached clip: after the upgrade the clip still serves every project."""
    from alembic import command
    from sqlalchemy import create_engine, text

    from storage.db import alembic_config
    from storage.repository import Repository

    path = tmp_path / "chief.db"
    engine = create_engine(f"sqlite:///{path}")
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0001")
        conn.execute(text("INSERT INTO media VALUES ('" + "a" * 64 + "', 'mp4', 1, '2024-01-01')"))
        conn.execute(
            text(
                "INSERT INTO clips VALUES ('" + "b" * 64 + "', '" + "a" * 64 + "', 'animatic', '', 8, 8, "
                "96, 64, 0.5, NULL, '2024-01-01')"
            )
        )
    engine.dispose()
    db = Database(path)  # upgrades to head
    with Repository(db).read() as u:
        assert u.clip("b" * 64, "p_any").sha256 == "a" * 64
    db.close()
