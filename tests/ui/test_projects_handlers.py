"""The start screen's handlers without a browser: `ProjectsHandlers` over a real Studio and the server's real jobs,
called with the values the page would send (a storyboard file's path, a poster's event data, the trash's pick)."""

from __future__ import annotations

import gradio as gr
import pytest

from app.server.jobs import Jobs, in_process
from app.ui import private_temp_dir
from app.ui.screens.projects import ProjectsHandlers
from tests.ui.conftest import TINY_BOARD


@pytest.fixture
def start(studio, tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY_BOARD)
    private_temp_dir(studio.config.home)  # as create_app makes it: exports are written under it
    return ProjectsHandlers(studio, Jobs(runner=in_process(studio))), path


def test_a_file_creates_a_film_that_lands_on_the_storyboard_and_is_listed(start, studio):
    h, path = start
    pid, number, message, tabs, posters, finder, trash = h.create_from_file(str(path))
    assert number == 1 and studio.project(pid).title in message and "from tiny.yaml" in message
    assert tabs.selected == "storyboard"
    assert f"data-pid='{pid}'" in posters and finder.value == pid and [v for _, v in finder.choices] == [pid]
    assert h.open_project(pid)[:3] == (pid, 1, f"Opened “{studio.project(pid).title}” at v1.")
    assert h.open_poster(gr.EventData(None, {"pid": pid}))[0] == pid
    with pytest.raises(gr.Error, match="unreadable"):
        h.open_poster(gr.EventData(None, {"pid": 7}))
    with pytest.raises(gr.Error, match="choose a storyboard file first"):
        h.create_from_file(None)


def test_fork_trash_restore_export_and_import(start, studio):
    h, path = start
    pid = h.create_from_file(str(path))[0]
    number, message = h.fork_current(pid, 1)
    assert number == 2 and message.startswith("v2 forked from v1")
    pid_out, version, message, posters, finder, trash = h.trash(pid)
    assert (pid_out, version) == ("", None) and "to the trash" in message
    assert f"data-pid='{pid}'" not in posters and [v for _, v in trash.choices] == [pid]
    back = h.restore(pid)
    assert back[:2] == (pid, 2) and f"data-pid='{pid}'" in back[3]
    archive, message = h.export(pid, 2)
    assert archive.endswith(".chief.zip") and str(studio.config.home / "exports" / pid) in archive  # in the quota
    new_pid, number, message, tabs, *_ = h.import_archive(archive)
    assert new_pid != pid and studio.version(new_pid).storyboard == studio.version(pid).storyboard
    assert message.startswith("Imported") and tabs.selected == "storyboard"


def test_an_idea_is_needed_and_a_plan_with_none_running_follows_nothing(start):
    h, _ = start
    with pytest.raises(gr.Error, match="write an idea first"):
        next(h.create_from_idea("  ", 1, ""))
    assert len(next(h.follow_plan())) == 8  # every output skipped: no plan runs
