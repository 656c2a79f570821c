"""The page's address is a link to what it shows (`?project=ID&version=N&screen=NAME`): `_restore` opens the link's
project, version and screen over what the browser kept, and a link to a project that is not there (or is another
account's) opens Projects and says so. Run without a browser; tests/ui/test_browser.py opens every project by link."""

from __future__ import annotations

import pytest

from app.ui import _restore
from storage.owners import Actor, acting
from tests.ui.conftest import TINY_BOARD


@pytest.fixture
def two(studio, tmp_path):
    from storage.files import load_storyboard

    path = tmp_path / "tiny.yaml"
    path.write_text(TINY_BOARD)
    with acting(Actor("ann")):
        kept = studio.create_from_storyboard(load_storyboard(path)).project_id
        linked = studio.create_from_storyboard(load_storyboard(path)).project_id
        board = studio.version(linked).storyboard
        studio.save_storyboard(linked, board, 1, "a second version")
    return kept, linked


@pytest.fixture
def warnings(monkeypatch):
    """What the page is told in toasts (app.ui.common.notice: gr.Info, its text escaped)."""
    import gradio as gr

    said: list[str] = []
    monkeypatch.setattr(gr, "Info", lambda message, *a, **k: said.append(message))
    return said


def test_the_link_wins_over_what_the_browser_kept(studio, two, warnings):
    kept, linked = two
    saved = {"pid": kept, "version": 1, "tab": "history"}
    with acting(Actor("ann")):
        assert _restore(studio, saved, {}) == (kept, 1, "history")
        assert _restore(studio, saved, {"project": linked, "screen": "storyboard"}) == (linked, 2, "storyboard")
        assert _restore(studio, saved, {"project": linked, "version": "1", "screen": "revise"}) == (linked, 1, "revise")
        assert _restore(studio, None, {"project": linked}) == (linked, 2, "projects")
        assert _restore(studio, saved, {"project": linked, "screen": "<no such screen>"}) == (linked, 2, "projects")
    assert warnings == []


@pytest.mark.parametrize(
    "link, says",
    [
        ({"project": "p_00000000", "screen": "storyboard"}, "project p_00000000, which is not here"),
        ({"project": "<b>x</b>", "version": "1"}, "v1 of project &lt;b&gt;x&lt;/b&gt;, which is not here"),
        ({"project": "LINKED", "version": "9"}, "v9 of project LINKED, which is not here"),
        ({"project": "LINKED", "version": "two"}, "vtwo of project LINKED"),
    ],
)
def test_a_link_to_what_is_not_there_opens_projects_and_says_so(studio, two, warnings, link, says):
    linked = two[1]
    link = {k: v.replace("LINKED", linked) for k, v in link.items()}
    with acting(Actor("ann")):
        assert _restore(studio, {"pid": two[0], "version": 1, "tab": "history"}, link) == ("", None, "projects")
    assert len(warnings) == 1 and says.replace("LINKED", linked) in warnings[0], warnings
    assert "<" not in warnings[0]  # a toast renders HTML: the link's words are text


def test_another_accounts_project_is_not_opened_by_its_link(studio, two, warnings):
    with acting(Actor("bob")):
        assert _restore(studio, None, {"project": two[1], "screen": "storyboard"}) == ("", None, "projects")
    assert "not here (or not yours)" in warnings[0]
    with acting(Actor("teach", teacher=True)):  # a teacher reads every student's project
        assert _restore(studio, None, {"project": two[1], "screen": "history"}) == (two[1], 2, "history")
