"""Migration 0007 on a database whose renders kept `stream_copied` as "yes"/"no" in their media JSON: the flag
becomes its own column, the media JSON loses the key, and nothing attached to the renders is lost."""

from __future__ import annotations

import json
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config

from storage.db import Database, alembic_config
from storage.repository import Repository
from tests.conftest import tiny_board

CRITIQUE = {
    "persona_id": "film_critic",
    "overall": 5,
    "scores": dict.fromkeys(
        (
            "story_clarity",
            "visual_quality",
            "character_consistency",
            "pacing",
            "emotional_impact",
            "intent_faithfulness",
        ),
        5,
    ),
    "keep_watching": True,
    "keep_watching_reason": "ok",
    "summary": "ok",
}


def alembic(conn) -> Config:
    cfg = alembic_config()
    cfg.attributes["connection"] = conn
    return cfg


def test_stream_copied_moves_from_the_media_json_to_its_column_and_back(tmp_path):
    path = tmp_path / "chief.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    srt = "b" * 64
    with engine.begin() as conn:
        command.upgrade(alembic(conn), "0006")
        conn.exec_driver_sql("INSERT INTO projects VALUES ('p_1', 'T', '', '2025-01-01', 'v_1', NULL)")
        conn.exec_driver_sql(
            "INSERT INTO versions VALUES ('v_1', 'p_1', NULL, 1, 'plan', '', '2025-01-01', ?, '[]', '[]')",
            (tiny_board(1).model_dump_json(),),
        )
        for sha in ("a" * 64, srt):
            conn.exec_driver_sql("INSERT INTO media VALUES (?, 'mp4', 1, '2025-01-01')", (sha,))
        for rid, when, media in (
            ("r_1", "2025-01-01", {"srt": srt, "stream_copied": "yes"}),
            ("r_2", "2025-01-02", {"stream_copied": "no"}),
            ("r_3", "2025-01-03", {}),
        ):
            conn.exec_driver_sql(
                "INSERT INTO renders (id, version_id, created_at, backend, model, label, shots, rendered, reused, "
                "seconds, film_sha256, media) VALUES (?, 'v_1', ?, 'animatic', '', '', '[]', 0, 0, 0.0, ?, ?)",
                (rid, when, "a" * 64, json.dumps(media)),
            )
        conn.exec_driver_sql(
            "INSERT INTO critiques (id, version_id, render_id, persona_id, batch, mode, created_at, data, usage) "
            "VALUES ('c_1', 'v_1', 'r_1', 'film_critic', 'cb_1', 'offline', '2025-01-01', ?, '{}')",
            (json.dumps(CRITIQUE),),
        )
    engine.dispose()
    db = Database(path)  # migrates to the head
    with Repository(db).read() as u:
        v = u.version("p_1", 1)
        renders = u.renders(v)
        assert [(r.id, r.stream_copied, r.media) for r in renders] == [
            ("r_1", True, {"srt": srt}),
            ("r_2", False, {}),
            ("r_3", False, {}),
        ]
        assert [c.render_id for c in u.critiques(v)] == ["r_1"]  # the critique of the render survived
    db.close()
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        command.downgrade(alembic(conn), "0006")
        media = dict(conn.exec_driver_sql("SELECT id, media FROM renders ORDER BY id").all())
        assert [json.loads(media[r]).get("stream_copied") for r in ("r_1", "r_2", "r_3")] == ["yes", "no", "no"]
        assert conn.exec_driver_sql("SELECT count(*) FROM critiques").scalar() == 1
    engine.dispose()


def test_a_render_keeps_stream_copied_in_its_column(tmp_path):
    from storage.records import MediaRecord, RenderRecord
    from storage.schema import utcnow

    db = Database(tmp_path / "chief.db")
    repo = Repository(db)
    with repo.write() as u:
        v = u.add_project(tiny_board(1), idea="", kind="plan", message="", panel=[])
        u.add_media([MediaRecord(sha256="a" * 64, ext="mp4", size=1)])
        for rid, copied in (("r_1", True), ("r_2", False)):
            record = RenderRecord(
                id=rid, version=1, created_at=utcnow(), backend="animatic", shots=[], rendered=0, reused=0, seconds=0,
                film_sha256="a" * 64, stream_copied=copied,
            )  # fmt: skip
            u.add_render(v, record)
    with repo.read() as u:
        assert sorted((r.id, r.stream_copied) for r in u.renders(v)) == [("r_1", True), ("r_2", False)]
    with db.reader() as s:
        rows = s.execute(sa.text("SELECT id, stream_copied, media FROM renders ORDER BY id")).all()
    assert [(r[0], bool(r[1]), json.loads(r[2])) for r in rows] == [("r_1", True, {}), ("r_2", False, {})]
    db.close()
