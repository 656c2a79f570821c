"""Migration 0003 on a database that already holds critiques: they survive, as film screenings."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic import command

from storage.db import Database, alembic_config
from storage.repository import Repository
from tests.conftest import tiny_board


def test_critiques_written_before_0003_read_back_as_film_screenings(tmp_path):
    path = tmp_path / "chief.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    cfg = alembic_config()
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0001")
        conn.exec_driver_sql("INSERT INTO projects VALUES ('p_1', 'T', '', '2025-01-01', 'v_1', NULL)")
        conn.exec_driver_sql(
            "INSERT INTO versions VALUES ('v_1', 'p_1', NULL, 1, 'plan', '', '2025-01-01', ?, '[]', '[]')",
            (tiny_board(1).model_dump_json(),),
        )
        conn.exec_driver_sql("INSERT INTO media VALUES (?, 'mp4', 1, '2025-01-01')", ("a" * 64,))
        conn.exec_driver_sql(
            "INSERT INTO renders VALUES ('r_1', 'v_1', '2025-01-01', 'animatic', '', '', '[]', 0, 0, 0.0, ?, '{}')",
            ("a" * 64,),
        )
        critique = (
            '{"persona_id": "film_critic", "overall": 5, "scores": {"story_clarity": 5, "visual_quality": 5, '
            '"character_consistency": 5, "pacing": 5, "emotional_impact": 5, "intent_faithfulness": 5}, '
            '"keep_watching": true, "keep_watching_reason": "ok", "summary": "ok"}'
        )
        conn.exec_driver_sql(
            "INSERT INTO critiques VALUES ('c_1', 'v_1', 'r_1', 'film_critic', 'cb_1', 'offline', "
            "'2025-01-01', ?, '{}')",
            (critique,),
        )
    engine.dispose()
    db = Database(path)  # migrates to the head
    with Repository(db).read() as u:
        (c,) = u.critiques(u.version("p_1", 1))
        assert (c.id, c.render_id, c.screening) == ("c_1", "r_1", "film")
        assert u.keyframes("p_1") == [] and u.takes("p_1") == []
    db.close()
