"""A render the server lost (it stopped before the render ended) is said so on the Render screen, with what Render
does now: the shots it finished are reused (issue 53, item 5)."""

from __future__ import annotations

from app.server.jobs import Jobs, in_process
from app.ui.screens.render.handlers import RenderHandlers
from storage.records import JobRecord
from storage.schema import new_id, utcnow
from tests.conftest import tiny_board


def test_a_lost_render_says_so_and_render_again_reuses_what_it_finished(studio):
    pid = studio.create_from_storyboard(tiny_board(3)).project_id
    board = studio.version(pid, 1).storyboard
    studio.render_shot(board, board.shots()[1].shot_id)  # what the lost render had finished: one shot of three
    h = RenderHandlers(studio, Jobs(runner=in_process(studio)))
    assert next(h.load(pid, 1))[0] == ""  # nothing was lost yet: nothing said
    with studio.ctx.repo.write() as u:
        u.put_job(
            JobRecord(
                id=new_id("job"), owner="", kind="render", project=pid, version=1, label="draft render v1",
                state="lost", message="the server stopped before this job ended", queued_at=utcnow(),
            )
        )  # fmt: skip
    said = next(h.load(pid, 1))[0]
    assert "data-state='lost'" in said and "draft render v1" in said
    assert "the 1 of 3 shots it finished are reused" in said and "Press Render" in said
    *_, last = h.do_render(pid, 1, "", None)  # the version's own tier: no new version
    info = studio.render_info(pid, 1)
    assert info is not None and (info.rendered, info.reused) == (2, 1)
    assert next(h.load(pid, 1))[0] == ""  # rendered since: the lost one is history
