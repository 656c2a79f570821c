"""Takes through the Studio (animatic, offline critics): kept, picked into a child version that re-renders
nothing, voted on by the panel."""

from __future__ import annotations

import numpy as np
import pytest

from app.errors import StudioError
from app.services.takes import NO_PREFERENCE_SPREAD, preferred
from generation.video_io import read_frames
from tests.conftest import tiny_board


@pytest.fixture
def project(studio):
    pid = studio.create_from_storyboard(tiny_board(4)).project_id
    studio.render(pid)
    return pid


def test_takes_are_kept_and_the_shots_own_clip_is_take_one(studio, project):
    state = studio.render_takes(project, "s2", 2)
    assert [t.number for t in state.takes] == [1, 2, 3]
    assert state.takes[0].seed == 2 and state.picked == state.takes[0].id  # the shot's own seed, reused
    assert state.takes[0].sha256 == studio.render_info(project).shot("s2").sha256
    assert set(state.current) == {t.id for t in state.takes} and len({t.seed for t in state.takes}) == 3
    clips = [np.stack(read_frames(studio.clip_path(t.sha256))[0]).astype(np.int16) for t in state.takes]
    assert np.abs(clips[1] - clips[2]).mean() > 1  # each take is its own clip
    more = studio.render_takes(project, "s2", 1)  # one more take: the others stay
    assert [t.number for t in more.takes] == [1, 2, 3, 4] and more.takes[:3] == state.takes
    assert len(studio.versions(project)) == 1  # rendering takes changes no version


def test_picking_a_take_makes_a_child_version_that_re_renders_nothing(studio, project):
    third = studio.render_takes(project, "s2", 2).takes[2]
    res = studio.pick_take(project, "s2", "3")
    v = res.version
    assert (v.number, v.parent_number, v.kind) == (2, 1, "pick") and not res.rerenders and res.downstream == []
    assert v.storyboard.shot("s2").seed == third.seed and studio.version(project, 1).storyboard.shot("s2").seed == 2
    r = studio.render(project)
    assert (r.rendered, r.reused) == (0, 4) and r.shot("s2").sha256 == third.sha256
    state = studio.shot_takes(project, "s2")
    assert state.picked == third.id and len(state.takes) == 3  # the takes are still there
    with pytest.raises(StudioError, match="already the one s2 uses"):
        studio.pick_take(project, "s2", third.id)
    with pytest.raises(StudioError, match="shot s2 has no take '9'"):
        studio.pick_take(project, "s2", "9")


def test_a_take_made_stale_by_an_edit_says_picking_it_re_renders(studio, project):
    studio.render_takes(project, "s1", 1)
    board = studio.version(project).storyboard.model_copy(deep=True)
    board.scenes[0].shots[0].prompt = "A different lighthouse"
    studio.save_storyboard(project, board, base=1)
    state = studio.shot_takes(project, "s1")
    assert state.current == [] and state.picked is None
    assert studio.pick_take(project, "s1", "2").rerenders


def test_picking_a_take_of_a_chained_shot_names_the_shots_that_follow(studio):
    board = tiny_board(3, shot_overrides={1: {"continuity": True}, 2: {"continuity": True}})
    pid = studio.create_from_storyboard(board).project_id
    with pytest.raises(StudioError, match="shot s2 continues from s1: render v1 first"):
        studio.render_takes(pid, "s2", 1)
    studio.render(pid)
    studio.render_takes(pid, "s2", 1)
    res = studio.pick_take(pid, "s2", "2")
    assert not res.rerenders and res.downstream == ["s3"]
    assert [s.status for s in studio.render(pid).shots] == ["reused", "reused", "rendered"]
    studio.render_keyframes(pid, shots=["s3"])  # s3 starts from its keyframe now: no longer chained to s2
    back = studio.pick_take(pid, "s2", "1")
    assert back.downstream == [] and not back.rerenders
    assert [s.status for s in studio.render(pid).shots] == ["reused", "reused", "rendered"]
    studio.pick_take(pid, "s2", "2")
    assert [s.status for s in studio.render(pid).shots] == ["reused", "reused", "reused"]


def test_the_panel_votes_on_a_shots_takes(studio, project):
    with pytest.raises(StudioError, match=r"has 0 take\(s\) matching v1: render at least 2 takes of it first$"):
        studio.vote_takes(project, "s3")
    state = studio.render_takes(project, "s3", 2)
    screening = studio.vote_takes(project, "s3")
    v = studio.version(project)
    assert {vote.persona_id for vote in screening.votes} == set(v.panel)
    assert screening.takes == [t.id for t in state.takes] and screening.mode == "offline"
    for vote in screening.votes:  # the offline critics score seeds of one shot alike: no one has a preference
        assert set(vote.scores) == set(screening.takes)
        assert max(vote.scores.values()) - min(vote.scores.values()) < NO_PREFERENCE_SPREAD
        assert vote.take_id is None and vote.reason == ""
    stored = studio.shot_takes(project, "s3").votes
    assert (stored.id, stored.votes, stored.takes) == (screening.id, screening.votes, screening.takes)


def test_a_vote_goes_to_the_take_scored_highest_unless_the_scores_barely_differ():
    assert preferred([6.0, 7.5, 7.0]) == 1
    assert preferred([7.5, 6.0, 7.5]) == 0  # a tie goes to the earlier take
    assert preferred([6.0, 6.0 + NO_PREFERENCE_SPREAD]) == 1  # a gap of the threshold is a preference
    assert preferred([6.0, 6.05, 6.01]) is None  # a gap below it is none
    assert preferred([5.0, 5.0]) is None


def test_replace_is_one_more_take_picked(studio, project, tmp_path):
    from click.testing import CliRunner

    from app.cli import main

    runner = CliRunner()
    home = str(studio.config.home)
    studio.db.close()
    out = runner.invoke(main, ["--home", home, "--json", "takes", project, "s4", "--replace"])
    assert out.exit_code == 0, out.output
    import json

    data = json.loads(out.stdout)
    assert len(data["takes"]) == 2 and data["picked"] == data["takes"][1]["id"]
    log = runner.invoke(main, ["--home", home, "log", project])
    assert "pick take 2 of s4" in log.output


def test_a_takes_job_stopped_while_another_render_holds_the_device_stops_without_waiting(studio, project):
    import threading

    from generation.base import Cancelled, CancelToken

    cancel, outcome, asked = CancelToken(), [], threading.Event()

    def takes():
        try:
            studio.render_takes(project, "s2", 2, progress=lambda e: asked.set(), cancel=cancel)
        except BaseException as e:  # noqa: BLE001 - the outcome is what is checked
            outcome.append(e)

    with studio._clips.turn():  # another render holds the device, and keeps it until this block ends
        job = threading.Thread(target=takes, daemon=True)
        job.start()
        cancel.cancel()
        job.join(120)  # a liveness bound, not a timing claim: the job must end while the device is still held
        assert not job.is_alive(), "a stopped job kept waiting for the render before it"
    assert len(outcome) == 1 and isinstance(outcome[0], Cancelled)
    assert not asked.is_set()  # it never started a take
    assert studio.shot_takes(project, "s2").takes == []  # nothing was made
