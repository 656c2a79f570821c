"""The Render and History screens' handlers without a browser, over a real Studio and the server's real jobs: a
render refused and accepted, the shot's clip, the hand-off; two versions compared, one opened, one forked."""

from __future__ import annotations

from pathlib import Path

import gradio as gr
import pytest

from app.server.jobs import Jobs, in_process
from app.ui.screens.history import HistoryHandlers
from app.ui.screens.render import RenderHandlers
from app.ui.screens.render.values import NOT_RENDERED
from tests.conftest import tiny_board


@pytest.fixture
def project(studio):
    return studio.create_from_storyboard(tiny_board(2)).project_id


def test_a_render_is_refused_with_an_unknown_tier_and_made_with_a_known_one(studio, project):
    h = RenderHandlers(studio, Jobs(runner=in_process(studio)))
    progress, film, summary, *_ = next(h.load(project, 1))
    assert summary == NOT_RENDERED and progress == ""
    with pytest.raises(ValueError, match="unknown tier 'best'"):
        next(h.do_render(project, 1, "", "best"))
    progress, film, summary, strip, rows, picks = list(h.do_render(project, 1, "", "draft"))[-1]
    # switched to draft: the project's tier from now on, kept in v2's film options, and v2 rendered (issue 57.7)
    assert progress == "" and summary.startswith("**v2**: rendered **2**, reused **0** of 2 shots")
    assert [r[1:4] for r in rows] == [["s1", "rendered", "draft"], ["s2", "rendered", "draft"]]
    assert Path(h.show_clip(project, 2, "s2")).is_file()
    with pytest.raises(gr.Error, match="no clip for shot s9"):
        h.show_clip(project, 2, "s9")
    (zipped,) = h.hand_off(project, 2)
    assert zipped.endswith("-for-an-editor.zip") and Path(zipped).is_file()
    switch, note = h.default_tier(project, 2)
    assert switch.value == studio.version(project, 2).storyboard.film.tier == "draft" and "unless switched" in note


def test_history_compares_opens_and_forks_versions(studio, project):
    h = HistoryHandlers(studio)
    board = studio.version(project, 1).storyboard
    edited = board.model_copy(update={"title": "Tiny, again"})
    studio.save_storyboard(project, edited, 1, "story edit")
    graph, target, a, b, _ = h.load(project, 2, "overall")
    assert (target, a, b) == (2, 1, 2) and "data-version='1'" in graph and "data-version='2'" in graph
    film_a, film_b, diff, scores = h.compare(project, 1, 2)
    assert "<del>Tiny</del> <ins>Tiny, again</ins>" in diff and scores == []
    picked = h.pick(project, gr.EventData(None, {"version": 2}))
    assert picked[:3] == (2, 1, 2) and picked[-1].startswith("v2 selected: compared with v1")
    number, message, _ = h.checkout(project, 1)
    assert number == 1 and message == "v1 is now current." and studio.version(project, None).number == 1
    number, message, _ = h.fork(project, 2)
    assert number == 3 and message.startswith("v3 forked from v2")
    with pytest.raises(gr.Error, match="choose two versions"):
        h.compare(project, 1, None)
