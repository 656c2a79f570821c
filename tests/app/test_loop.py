"""The co-creation loop through the Studio: plan, render, critique, note, refine, accept, render again."""

from __future__ import annotations

import pytest

from app.studio import StudioError
from generation.video_io import read_frames
from tests.conftest import tiny_board


def test_full_loop_offline(studio):
    v1 = studio.create_project("A lighthouse keeper befriends a lost whale", minutes=0.25)
    pid = v1.project_id
    assert v1.number == 1 and v1.kind == "plan"
    assert abs(v1.storyboard.duration() - 15) < 0.01  # durations add up to the target

    r1 = studio.render(pid)
    assert (r1.rendered, r1.reused) == (len(v1.storyboard.shots()), 0)
    frames, fps = read_frames(studio.film_path(r1))
    assert len(frames) == sum(s.num_frames for s in r1.shots)
    assert "animatic" in r1.label and "previz" in r1.label  # the embedded default says what it is

    crits = studio.critique(pid)
    assert {c.persona_id for c in crits} == set(v1.panel)
    assert all(c.mode == "offline" for c in crits)

    storm = v1.storyboard.shots()[-2]
    note = studio.add_note(pid, "Make it scarier", shot_id=storm.shot_id)
    info = studio.refine(pid)
    edits = info.proposal.edits
    note_edit = next(e for e in edits if note.id in e.sources)
    assert note_edit.shot_id == storm.shot_id and note_edit.field == "prompt"
    assert "menacing" in note_edit.new and "scarier" not in note_edit.new  # merged as prompt words, not pasted

    res = studio.accept(pid, only=[edits.index(note_edit) + 1])
    assert res.version.number == 2 and res.version.parent_number == 1 and not res.branched
    r2 = studio.render(pid)
    shots = v1.storyboard.shots()
    k = [s.shot_id for s in shots].index(storm.shot_id)
    chained = 1 + next((j for j, s in enumerate(shots[k + 1 :]) if not s.continuity), len(shots) - k - 1)
    assert r2.rendered == chained  # the edited shot and the continuity shots that follow it
    assert r2.reused == len(shots) - chained


def test_render_reuses_every_unchanged_clip(studio):
    v = studio.create_from_storyboard(tiny_board(4))
    pid = v.project_id
    first = studio.render(pid)
    assert (first.rendered, first.reused) == (4, 0)
    again = studio.render(pid)
    assert (again.rendered, again.reused) == (0, 4)
    assert again.film_sha256 == first.film_sha256  # same clips, same film bytes

    board = v.storyboard.model_copy(deep=True)
    board.scenes[0].shots[1].prompt = "The keeper runs down the stairs"
    v2, branched = studio.save_storyboard(pid, board, base=1)
    assert not branched
    third = studio.render(pid, v2.number)
    assert (third.rendered, third.reused) == (1, 3)
    assert [s.status for s in third.shots] == ["reused", "rendered", "reused", "reused"]


def test_continuity_chain_rerenders_downstream_only(studio):
    board = tiny_board(5, shot_overrides={2: {"continuity": True}, 3: {"continuity": True}})
    pid = studio.create_from_storyboard(board).project_id
    studio.render(pid)
    edited = board.model_copy(deep=True)
    edited.scenes[0].shots[1].prompt = "A different second shot"  # s2: s3 and s4 continue from it
    studio.save_storyboard(pid, edited, base=1)
    r = studio.render(pid)
    assert [s.status for s in r.shots] == ["reused", "rendered", "rendered", "rendered", "reused"]


def test_critique_needs_a_film(studio):  # said in words that fit the web app as well as the CLI
    pid = studio.create_from_storyboard(tiny_board(2)).project_id
    with pytest.raises(StudioError, match="^v1 has no film yet: render this version first$"):
        studio.critique(pid)


def test_refine_needs_notes_or_critiques(studio):
    pid = studio.create_from_storyboard(tiny_board(2)).project_id
    with pytest.raises(
        StudioError, match=r"^v1 has no notes and no critiques: add a note or screen it first \(critique\)$"
    ):
        studio.refine(pid)


def test_note_on_unknown_shot_is_refused(studio):
    pid = studio.create_from_storyboard(tiny_board(2)).project_id
    with pytest.raises(StudioError, match="no shot 'nope'"):
        studio.add_note(pid, "hello", shot_id="nope")
    assert studio.notes(pid) == []


def test_refiner_never_touches_locked_shots(studio):
    board = tiny_board(3, shot_overrides={1: {"locked": True}})
    pid = studio.create_from_storyboard(board).project_id
    studio.add_note(pid, "Make it scarier", shot_id="s2")
    studio.add_note(pid, "More fog on the keeper", shot_id="s1")
    info = studio.refine(pid)
    p = info.proposal
    assert all(e.shot_id != "s2" for e in p.edits)
    assert any("s2" in u.what and "locked" in u.why for u in p.not_changed)
    assert any(e.shot_id == "s1" for e in p.edits)


def test_failed_critique_saves_nothing(studio, monkeypatch):
    pid = studio.create_from_storyboard(tiny_board(2)).project_id
    studio.render(pid)
    critic = studio.agents.critic
    real = critic.critique
    calls = []

    def flaky(persona, film, ctx=None):
        calls.append(persona.id)
        if len(calls) == 3:
            raise StudioError("critic exploded")
        return real(persona, film, ctx)

    monkeypatch.setattr(critic, "critique", flaky)
    with pytest.raises(StudioError, match="critic exploded"):
        studio.critique(pid)
    assert studio.critiques(pid) == []


def test_usage_is_zero_for_offline_agents_and_status_labels_them(studio):
    pid = studio.create_from_storyboard(tiny_board(2)).project_id
    assert studio.usage(pid).total.calls == 0
    st = studio.status()
    assert "offline" in st.agents and "animatic" in st.backend_label


class ParallelAnimatic:
    """The animatic, declaring that it can render several shots at once (as a worker pool would)."""

    def __init__(self):
        from generation.animatic import AnimaticBackend

        self.inner = AnimaticBackend()
        self.name, self.model, self.label = self.inner.name, self.inner.model, self.inner.label
        self.supports_continuity, self.max_parallel = True, 3
        self.resolve = self.inner.resolve
        self.render = self.inner.render


def test_parallel_chains_give_the_same_clips_as_sequential(make_studio, tmp_path):
    board = tiny_board(6, shot_overrides={2: {"continuity": True}, 3: {"continuity": True}})
    seq = make_studio()
    a = seq.render(seq.create_from_storyboard(board).project_id)
    from app.config import load_config
    from app.studio import Studio

    par = Studio(load_config({"home": tmp_path / "other", "narration": False}, environ={}), backend=ParallelAnimatic())
    b = par.render(par.create_from_storyboard(board).project_id)
    assert [s.key for s in a.shots] == [s.key for s in b.shots]
    assert [s.sha256 for s in a.shots] == [s.sha256 for s in b.shots]
    assert b.rendered == 6
    par.db.close()
