"""A 10-minute film through the Studio against a server with real endpoint limits (4,096 output tokens, 8 images per
request, a 32k context): planned scene by scene, watched shot by shot by every critic, refined within the context;
and a scene rendered, critiqued, noted and refined on its own."""

from __future__ import annotations

import json
import re

import pytest

from agents.story import scene_count
from storage.schema import DIMENSIONS, Scope
from tests.agents import longform
from tests.agents.openai_server import FakeOpenAI, ok
from tests.conftest import tiny_board

SMALL = {"width": 32, "height": 18, "fps": 2}  # the animatic at a size that renders 120 shots in seconds


def refiner_answer(body: dict) -> dict:
    """Edits a refiner proposes: one per scene it was shown in full, and one on a shot it was not shown."""
    text = longform.user_text(body)
    full = re.findall(r"- scene (sc\d+) .*\n  music: .*\n+  shots: (\[.*\])", text)
    notes = re.findall(r"\[(n_[0-9a-f]{8})\]", text)
    edits = [
        {
            "op": "set",
            "shot_id": json.loads(shots)[0]["shot_id"],
            "field": "prompt",
            "character": None,
            "old": None,
            "new": f"the storm over {sc}, darker",
            "rationale": "the note",
            "sources": notes[:1],
        }
        for sc, shots in full
    ]
    edits.append(
        {
            "op": "set",
            "shot_id": "sh01",
            "field": "duration",
            "character": None,
            "old": None,
            "new": "3",
            "rationale": "faster opening",
            "sources": [],
        }
    )
    return {"summary": "darker storms", "edits": edits, "not_changed": []}


def responder(body: dict):
    if longform.schema_name(body) == "ProposalOut":
        return ok(json.dumps(refiner_answer(body)))
    return longform.responder(body)


@pytest.fixture
def llm_studio(make_studio):
    with longform.limited(responder) as server:
        st = make_studio(
            llm_base_url=server.base_url,
            api_key="sk-test",
            critic_model="vision-model",
            refiner_model="refiner-model",
            planner_model="planner-model",
            llm_max_retries=1,
        )
        st.server = server
        yield st


def sent(server, name: str) -> list[dict]:
    return [b for b in server.requests if longform.schema_name(b) == name]


@pytest.mark.slow
def test_ten_minutes_planned_watched_and_refined_within_the_limits(llm_studio):
    st, server = llm_studio, llm_studio.server
    events = []
    v = st.create_project(
        "a keeper and a gull through a winter of storms", minutes=10, overrides=SMALL, progress=events.append
    )
    board = v.storyboard
    assert abs(board.duration() - 600) <= 6 and len(board.scenes) == scene_count(600, 4000)
    assert all(b["max_tokens"] <= 4000 for b in server.requests)
    assert [e.scene for e in events if e.status == "done"][-1].startswith("sc")
    pid = v.project_id

    st.render(pid)
    server.requests.clear()
    crits = st.critique(pid)
    assert len(crits) == len(v.panel) == len(st.builtin_personas()) == 8
    for c in crits:  # asserted from what the server received, critic by critic
        persona = st.personas_of(v)[c.persona_id]
        mine = [b for b in server.requests if f"You are {persona.name}" in b["messages"][0]["content"]]
        assert all(len(FakeOpenAI.image_parts_of(b)) <= 8 for b in mine)
        shown = [
            p["text"].split()[1]
            for b in mine
            for m in b["messages"]
            if isinstance(m["content"], list)
            for p in m["content"]
            if p.get("type") == "text" and p["text"].startswith("[shot ")
        ]
        assert shown == [s.shot_id for s in board.shots()]
        assert c.coverage.seen == c.coverage.shots == len(board.shots()) and c.coverage.min_frames == 3
        assert c.coverage.chunks == len(mine) and c.scope.whole
    stored = st.critiques(pid)
    assert stored[0].coverage == crits[0].coverage  # kept with the critique

    noted = [board.scenes[i].scene_id for i in (2, 7, 12)]
    for sc in noted:
        st.add_note(pid, f"make the storm in {sc} darker", scope=st.scope(pid, scene=sc))
    server.requests.clear()
    prop = st.refine(pid)
    body = sent(server, "ProposalOut")[0]
    assert FakeOpenAI.prompt_tokens(body) + body["max_tokens"] <= 32768  # the server would have refused otherwise
    text = longform.user_text(body)
    urgent = board.scenes[-1].scene_id  # every critic's most urgent issue is about the last shot
    in_scope = [*noted, urgent]
    assert re.findall(r"- scene (sc\d+) .*\n  music: .*\n+  shots:", text) == in_scope  # in full: these scenes only
    assert text.count("summary only, not in scope") == len(board.scenes) - 4
    assert prop.scope == Scope(scenes=in_scope)
    assert sorted(e.shot_id for e in prop.proposal.edits) == sorted(
        board.scenes[int(sc[2:]) - 1].shots[0].shot_id for sc in in_scope
    )
    assert any("sh01" in u.what and "outside this proposal's scope" in u.why for u in prop.proposal.not_changed)
    res = st.accept(pid)
    changed = {s.shot_id for s, t in zip(board.shots(), res.version.storyboard.shots()) if s != t}
    assert changed == {e.shot_id for e in prop.proposal.edits}


def answer_for(body: dict):
    name = longform.schema_name(body)
    if name == "ProposalOut":
        return ok(json.dumps(refiner_answer(body)))
    return longform.responder(body)


@pytest.fixture
def scenes_studio(make_studio):
    with FakeOpenAI(answer_for, max_images=8) as server:
        st = make_studio(
            llm_base_url=server.base_url, api_key="sk-test", critic_model="vision-model", llm_max_retries=1
        )
        st.server = server
        yield st


def four_scenes():
    board = tiny_board(8)
    shots = board.shots()
    from storage.schema import Scene

    scenes = [
        Scene(
            scene_id=f"sc0{i + 1}",
            title=f"Part {i + 1}",
            description=f"what happens in part {i + 1}",
            shots=shots[2 * i : 2 * i + 2],
        )
        for i in range(4)
    ]
    return board.model_copy(update={"scenes": scenes})


def test_a_scene_renders_alone_and_the_film_takes_the_latest_clip_of_every_shot(studio):
    pid = studio.create_from_storyboard(four_scenes()).project_id
    first = studio.render(pid, scope=studio.scope(pid, scene="sc02"))
    assert [(r.shot_id, r.status) for r in first.shots] == [("s3", "rendered"), ("s4", "rendered")]
    whole = studio.render(pid)
    assert (whole.rendered, whole.reused) == (6, 2)
    board = studio.version(pid).storyboard
    board.scenes[0].shots[0].prompt = "A lighthouse at dusk, first lamp"
    board.scenes[2].shots[0].prompt = "Night storm, the worst of it"
    v2, _ = studio.save_storyboard(pid, type(board).model_validate(board.model_dump()), 1)
    part = studio.render(pid, v2.number, scope=studio.scope(pid, v2.number, scene="3"))
    status = {r.shot_id: r.status for r in part.shots}
    assert status["s5"] == "rendered" and status["s6"] == "reused"  # the scene
    assert status["s1"] == "earlier"  # changed outside the scene and not rendered: its clip from v1's render
    assert status["s2"] == status["s3"] == "reused" and len(part.shots) == 8
    assert next(r for r in part.shots if r.shot_id == "s1").sha256 == whole.shots[0].sha256
    with pytest.raises(Exception, match="only an earlier clip"):
        studio.critique(pid, v2.number, scope=studio.scope(pid, v2.number, scene="sc01"))


def test_a_scene_is_critiqued_noted_and_refined_on_its_own(scenes_studio):
    st, server = scenes_studio, scenes_studio.server
    pid = st.create_from_storyboard(four_scenes(), panel=["film_critic", "teen_scroller"]).project_id
    st.render(pid)
    scope = st.scope(pid, scene="sc03")
    crits = st.critique(pid, scope=scope)
    assert all(c.scope == scope and c.coverage.shots == 2 for c in crits)
    text = longform.user_text(server.requests[0])
    assert "The story so far, before what you watch:" in text and "what happens in part 2" in text
    assert set(longform.watched(server.requests[0])) == {"s5", "s6"}
    assert [n.shot_id for n in crits[0].critique.shot_notes] == ["s5", "s6"]
    assert st.critiques(pid)[0].scope == scope

    elsewhere = st.add_note(pid, "the opening is too slow", shot_id="s1")
    here = st.add_note(pid, "darker storm", scope=scope)
    assert st.notes(pid)[1].scope == scope and here.about() == "scene sc03"
    server.requests.clear()
    prop = st.refine(pid, scope=scope)
    text = longform.user_text(sent(server, "ProposalOut")[0])
    assert here.id in text and elsewhere.id not in text  # a note about another scene is left aside, and said so
    assert any(
        elsewhere.id in u.what and "outside this proposal's scope (scene sc03)" in u.why
        for u in prop.proposal.not_changed
    )
    assert [e.shot_id for e in prop.proposal.edits] == ["s5"] and prop.scope == scope
    assert "on s1" not in text and "on s5" in text  # the critiques' evidence about the scene only


def test_scopes_the_creator_typed(studio):
    pid = studio.create_from_storyboard(four_scenes()).project_id
    assert studio.scope(pid, scene="2") == Scope(scenes=["sc02"])
    assert studio.scope(pid, shots="s3-s6").shots == ["s3", "s4", "s5", "s6"]
    assert studio.scope(pid, shots="s6..s3").shots == ["s3", "s4", "s5", "s6"]
    assert studio.scope(pid, shots="s7,s2").shots == ["s2", "s7"]
    assert studio.scope(pid, shots="s3-s6").label() == "shots s3–s6"
    for bad, why in (
        ({"scene": "sc09"}, "no scene 'sc09'"),
        ({"shots": "s3-s99"}, "no shot 's3-s99'"),
        ({"shots": "s2,x"}, "no shot 'x'"),
    ):
        with pytest.raises(Exception, match=why):
            studio.scope(pid, **bad)


def test_an_unscoped_refine_works_on_the_scenes_notes_name(studio):
    """A note on one scene, and one whose words name a shot of another: both scenes, nothing else."""
    from app.services.refining import touched

    board = four_scenes()
    pid = studio.create_from_storyboard(board).project_id
    a = studio.add_note(pid, "calmer", scope=Scope(scenes=["sc02"]))
    b = studio.add_note(pid, "s7 should echo the first shot")
    assert touched(board, [a, b], []) == Scope(scenes=["sc02", "sc04"])
    film_wide = studio.add_note(pid, "more gulls everywhere")
    assert touched(board, [a, b, film_wide], []).whole
    from storage.schema import Critique, CritiqueIssue

    critique = Critique(
        persona_id="x",
        overall=5,
        scores={d: 5 for d in DIMENSIONS},
        keep_watching=True,
        keep_watching_reason="",
        summary="",
        top_issues=[
            CritiqueIssue(summary="boring", urgency=5, dimension="pacing", shot_ids=["s1"]),
            CritiqueIssue(summary="meh", urgency=2, dimension="pacing", shot_ids=["s5"]),
        ],
    )
    assert touched(board, [a], [critique]) == Scope(scenes=["sc01", "sc02"])  # urgent issues only


def test_progress_reads_as_words_and_a_fraction():
    from app.server.jobs import describe
    from app.server.progress import StageProgress
    from storage.run import PanelProgress, PlanProgress, RefineProgress

    plan = PlanProgress(done=5, total=20, scene="sc07", status="writing", tokens=312, tokens_per_s=41.2)
    assert describe(plan) == (0.25, "planning: 5/20 written · sc07 writing · 312 tokens · 41 tok/s")
    watch = PanelProgress(done=1, total=7, persona="film_critic", chunk=3, chunks=15, fraction=0.3, tokens=90)
    assert describe(watch) == (0.3, "1/7 critics finished (film_critic, part 3/15) · 90 tokens")
    assert describe(RefineProgress(tokens=1200)) == (None, "the refiner is writing · 1,200 tokens")
    with StageProgress("planning") as bar:
        for e in (plan, watch, RefineProgress(tokens=5)):
            bar.update(e)
        assert "sc07 writing · 312 tokens" not in bar.p.tasks[0].description  # the last event wins
        assert bar.p.tasks[0].description == "planning · 5 tokens"


def test_a_panel_on_a_model_without_eyes_runs_text_only_and_says_so(make_studio):
    from app.ui.screens.screening import cards_html

    with FakeOpenAI(longform.responder, images_refused="llama-cpp-python") as server:
        st = make_studio(llm_base_url=server.base_url, api_key="sk-test", critic_model="text-model", llm_max_retries=1)
        pid = st.create_from_storyboard(four_scenes(), panel=["film_critic", "teen_scroller"]).project_id
        st.render(pid)
        crits = st.critique(pid)
    assert all("text-only" in c.mode and c.coverage.input == "text" and c.coverage.seen == 8 for c in crits)
    assert (st.config.home / "llm-endpoints.json").read_text().count('"images": false') == 1  # kept for next time
    html = cards_html(st.critiques(pid), {})
    assert "text only: the critic model takes no images" in html and "read 8/8 shots · TEXT ONLY" in html


def test_critics_that_take_video_get_each_part_as_one_clip(make_studio, tmp_path):
    import base64

    from generation.video_io import inspect

    with FakeOpenAI(longform.responder) as server:
        st = make_studio(
            llm_base_url=server.base_url,
            api_key="sk-test",
            critic_model="video-model",
            llm_max_retries=1,
            llm_critic_video=True,
            llm_video_seconds=4,
        )
        pid = st.create_from_storyboard(four_scenes(), panel=["film_critic"]).project_id
        st.render(pid)
        crit = st.critique(pid)[0]
    assert crit.coverage.input == "video" and crit.coverage.chunks == 2 and crit.mode == "llm:video-model (video)"
    clips = [FakeOpenAI.image_parts_of(b, "video_url") for b in server.requests]
    assert [len(c) for c in clips] == [1, 1] and not any(FakeOpenAI.image_parts_of(b) for b in server.requests)
    first = tmp_path / "part1.mp4"
    first.write_bytes(base64.b64decode(clips[0][0]["video_url"]["url"].split(",", 1)[1]))
    assert inspect(first)["frames"] == 4 * 8  # shots s1-s4, one second each at 8 fps: the part, joined
    assert longform.watched(server.requests[0]) == ["s1", "s2", "s3", "s4"]


def test_scopes_and_coverage_travel_in_an_archive(studio, tmp_path):
    pid = studio.create_from_storyboard(four_scenes(), panel=["film_critic"]).project_id
    studio.render(pid)
    scope = studio.scope(pid, scene="sc02")
    studio.critique(pid, scope=scope)
    studio.add_note(pid, "brighter", scope=studio.scope(pid, shots="s3-s4"))
    studio.refine(pid, scope=scope)
    v = studio.import_project(studio.export_project(pid, tmp_path / "p.chief.zip"))
    crit, note, prop = studio.critiques(v.project_id)[0], studio.notes(v.project_id)[0], studio.proposal(v.project_id)
    assert crit.scope == prop.scope == scope and note.scope.shots == ["s3", "s4"]
    assert crit.coverage == studio.critiques(pid)[0].coverage and crit.coverage.input == "offline"
