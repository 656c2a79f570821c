"""Every part of a note is answered: a note is split into its requests, each answered with its edit or why none (the
embedded refiner and the LLM's, whose answers are validated); "louder" moves a level, measured on the render; the
creator's edits come first and ticked, the critics' after, and one that takes the idea's key thing out is flagged;
a long film is refined in parts against a server that enforces its context and output limits."""

from __future__ import annotations

import json
import re

import pytest

from agents.offline.notes import split_requests
from agents.refiner import LLMRefiner, TooLong
from app.services.refining import settle
from storage.files import dump_storyboard
from storage.run import RunContext
from storage.schema import (
    DIMENSIONS,
    Character,
    Critique,
    CritiqueIssue,
    Line,
    Note,
    Proposal,
    RemoveLine,
    Scene,
    SetShot,
    Shot,
    ShotNote,
    Storyboard,
)
from tests.agents.openai_server import FakeOpenAI, ok


def test_a_note_is_split_into_the_requests_each_clause_makes():
    assert split_requests("Mira should sound gruffer and the waves should be quieter in scene 2") == [
        "Mira should sound gruffer",
        "the waves should be quieter in scene 2",
    ]
    assert split_requests("make the sky darker and the sea rougher") == ["make the sky darker", "make the sea rougher"]
    assert split_requests("Keep the mine lit. Show the canary; cut the rope") == [
        "Keep the mine lit",
        "Show the canary",
        "cut the rope",
    ]
    # one request: a list of names or of things, or two qualities of one thing
    assert len(split_requests("Mira and Otto should run faster")) == 1
    assert len(split_requests("add bread and butter to the table")) == 1
    assert len(split_requests("make it louder and brighter")) == 1


def mine_board() -> Storyboard:
    def shot(i, **kw):
        return Shot(shot_id=f"m{i}", prompt=f"A flooded mine tunnel, view {i}", duration=4.0, seed=i, **kw)

    return Storyboard(
        title="Down the shaft",
        logline="A miner and her canary must find the lost lantern before the tunnel floods.",
        characters=[
            Character(name="Mira", description="a young miner with a soot-streaked face"),
            Character(name="Otto", description="a small yellow canary"),
        ],
        scenes=[
            Scene(
                scene_id="a",
                shots=[
                    shot(1, dialogue=[Line(character="Mira", line="Where did I leave it?")], characters=["Mira"]),
                    shot(2, dialogue=[Line(character="Otto", line="Follow the drip!")], characters=["Otto"]),
                ],
            ),
            Scene(
                scene_id="b",
                music="low organ drone with slow piano",
                shots=[shot(3, dialogue=[Line(character="Mira", line="There, the lantern!")]), shot(4)],
            ),
        ],
        fps=8,
        width=64,
        height=36,
    )


def test_embedded_a_two_part_note_gets_two_answers_and_louder_raises_the_measured_music(chief, tmp_path):
    """Through the CLI: one note asking two things (a voice, a scene's music level) makes two answered requests; the
    music one is a level on the last scene, not new cue words, and the render's music stem there measures louder."""
    from generation.audio.pcm import RATE, decode, rms_db
    from tests.app.test_sound import render, window

    p = tmp_path / "mine.yaml"
    p.write_text(dump_storyboard(mine_board()))
    pid = json.loads(chief("--json", "new", "--storyboard", str(p)).stdout)["project"]
    chief("film", pid, "--no-ducking")
    before = render(chief, pid)
    chief("note", pid, "Otto should sound younger and the piano music should be louder in the final scene")
    out = chief("--json", "refine", pid).stdout
    proposal = json.loads(out)["proposal"]
    answers = proposal["answers"]
    assert [a["request"] for a in answers] == [
        "Otto should sound younger",
        "the piano music should be louder in the final scene",
    ]
    assert [a["status"] for a in answers] == ["changed", "changed"]
    edits = proposal["edits"]
    voice, level = (edits[a["edits"][0] - 1] for a in answers)
    assert (voice["op"], voice["character"]) == ("set_voice", "Otto") and voice["pitch"] > 0
    assert (level["op"], level["scene_id"], level["field"], level["new"]) == ("set_level", "b", "music_level", 6.0)
    assert all(e["op"] != "set_music" for e in edits)  # the cue's words stay the cue's
    assert "Otto's voice: higher" in answers[0]["answer"] and "music +6 dB" in answers[1]["answer"]
    text = chief("refine", pid).stdout
    assert "“Otto should sound younger” → Otto's voice: higher" in text and "[x]" in text
    chief("accept", pid)  # the ticked edits: both of the note's
    after = render(chief, pid)
    was, now = (rms_db(window(decode(r["files"]["music"], RATE), 8.5, 15.5)) for r in (before, after))
    print(f"the final scene's music stem: {was:.1f} dBFS before, {now:.1f} dBFS after 'louder'")
    assert now - was == pytest.approx(6.0, abs=1.0)


def test_embedded_a_request_no_rule_reads_is_answered_with_why():
    from agents.offline.refiner import OfflineRefiner

    note = Note(id="n_1", text="Mira should sound wiser; cut the rope")
    p = OfflineRefiner().refine(mine_board(), [note], []).value
    assert [a.request for a in p.answers] == ["Mira should sound wiser", "cut the rope"]
    assert all(a.status == "not changed" and a.answer for a in p.answers)


def critique(pid: str, issues: list[CritiqueIssue], notes: list[ShotNote] | None = None) -> Critique:
    return Critique(
        persona_id=pid,
        overall=6,
        scores={d: 6 for d in DIMENSIONS},
        keep_watching=True,
        keep_watching_reason="ok",
        summary=f"{pid}: fine",
        top_issues=issues,
        shot_notes=notes or [],
    )


def test_the_creators_edits_come_first_ticked_and_a_critics_removal_of_the_key_line_is_flagged():
    board = mine_board()
    note = Note(id="n_7", text="a wider view of the tunnel in m4")
    critic_cut = RemoveLine(shot_id="m3", line=1, rationale="cut the chatter", sources=["critic_a"])
    critic_cam = SetShot(shot_id="m1", field="camera", new="pan_left", rationale="move", sources=["critic_b"])
    mine = SetShot(shot_id="m4", field="prompt", new="wide: a flooded mine tunnel", rationale="r", sources=["n_7"])
    proposal = Proposal(summary="s", edits=[critic_cut, critic_cam, mine])
    settled = settle(proposal, proposal.edits, board, [note], Proposal(summary="s"))
    assert [e.sources for e in settled.edits] == [["n_7"], ["critic_a"], ["critic_b"]]
    assert settled.ticked == [1]
    assert [(f.edit, "lantern" in f.why) for f in settled.flags] == [(2, True)]  # the only line naming it
    assert [a.status for a in settled.answers] == ["not answered"]  # the proposal carried no answer for the note


def answer_with(edits, answers):
    return {"summary": "s", "edits": edits, "not_changed": [], "answers": answers}


def llm_edit(**kw):
    e = dict.fromkeys(("shot_id", "field", "character", "old", "new", "scene_id", "line", "delivery", "pitch"))
    e.update({"pace": None, "speaker": None, "op": "set", "rationale": "r", "sources": ["n_3"]})
    e.update(kw)
    return e


def test_llm_each_request_is_asked_for_and_answered_and_a_skipped_one_is_said(server, client):
    board = mine_board()
    note = Note(id="n_3", text="Mira should sound older and the organ music should be quieter in the final scene")
    voice = llm_edit(op="set_voice", character="Mira", pitch=-2, pace=0.9)
    level = llm_edit(op="set_level", scene_id="b", field="music_level", new="-6")
    server.script(
        ok(answer_with([voice, level], [{"request": "r1", "edits": [1], "reason": "older"},
                                        {"request": "r2", "edits": [2], "reason": "organ down 6 dB"}])),
        ok(answer_with([voice], [{"request": "r1", "edits": [1], "reason": "older"}])),
    )  # fmt: skip
    p = LLMRefiner(client).refine(board, [note], []).value
    text = server.texts(0)
    assert "[r1] (note n_3): Mira should sound older" in text
    assert "[r2] (note n_3): the organ music should be quieter in the final scene" in text
    assert [(a.status, a.edits) for a in p.answers] == [("changed", [1]), ("changed", [2])]
    schema = server.requests[0]["response_format"]["json_schema"]["schema"]
    assert "answers" in schema["required"]
    skipped = LLMRefiner(client).refine(board, [note], []).value
    assert [a.status for a in skipped.answers] == ["changed", "not answered"]


IDS = re.compile(r'"shot_id": "(sh\d+)"')


def part_answer(body: dict):
    """A model refining one part: a line of narration on the first shot it sees in full, the same style edit every
    part (merged once), and the film-wide request answered with both."""
    from tests.agents import longform

    if longform.schema_name(body) == "SceneShotsOut":  # shots described at length, as real plans grew to
        return ok(json.dumps(longform.shots(body, prompt_words=100)))
    if longform.schema_name(body) != "ProposalOut":
        return longform.responder(body)
    ids = IDS.findall(longform.user_text(body))
    edits = [
        llm_edit(shot_id=ids[0], field="narration", new=f"The tide turns at {ids[0]}."),
        llm_edit(op="set_story", field="style_guide", new="painterly, teal and amber, 35mm, heavier grain"),
    ]
    return ok(
        json.dumps(answer_with(edits, [{"request": "r1", "edits": [1, 2], "reason": "a quieter, grainier film"}]))
    )


def test_a_ten_minute_film_is_refined_in_parts_at_32k(config):
    from agents.llm import LLMClient
    from agents.planner import LLMPlanner
    from tests.agents import longform

    with FakeOpenAI(part_answer, max_output_tokens=4096, context_tokens=32768) as server:
        client = LLMClient(config.model_copy(update={"base_url": server.base_url, "max_concurrency": 8}))
        board = LLMPlanner(client).plan("a keeper and a gull through a winter of storms", 10).value
        shots = [s.shot_id for s in board.shots()]
        crits = [
            critique(p, [CritiqueIssue(summary="slow", urgency=4, dimension="pacing", shot_ids=shots[:1])],
                     [ShotNote(shot_id=s, note=f"{s} holds my eye but the light is flat") for s in shots])
            for p in ("critic_a", "critic_b")
        ]  # fmt: skip
        notes = [Note(id="n_3", text="grainier all through, and give the sea its say")]
        events = []
        refiner = LLMRefiner(client)
        with pytest.raises(TooLong) as whole:
            refiner.fitting(board, notes, crits, None)  # the whole does not fit: it is done in parts
        print(f"the whole film: about {whole.value.size:,} tokens; {whole.value.room:,} beside the answer")
        result = refiner.refine(board, notes, crits, RunContext(progress=events.append))
    asked = [b for b in server.requests if longform.schema_name(b) == "ProposalOut"]
    assert len(asked) >= 2 and server.refusals == []  # every part fitted the context, no answer was cut
    p = result.value
    assert p.summary.startswith(f"Refined in {len(asked)} parts")
    parts = {e.shot_id for e in p.edits if e.op == "set"}
    assert len(parts) == len(asked)  # one edit from every part, each on a different scene group
    assert sum(e.op == "set_story" for e in p.edits) == 1  # proposed by every part, kept once
    assert len(p.answers) == 2 and p.answers[0].status == "changed" and len(p.answers[0].edits) == len(parts) + 1
    notes_seen = [e.note for e in events if getattr(e, "note", "")]
    assert f"part {len(asked)} of {len(asked)}" in " ".join(notes_seen)
    ids = [e.shot_id for e in p.edits if e.op == "set"]
    assert len(set(ids)) == len(ids)


def test_the_review_lists_the_answers_first_and_leaves_the_critics_edits_unticked():
    from datetime import UTC, datetime

    from app.ui.screens.revise import review_json
    from storage.records import ProposalRecord
    from storage.schema import Answer, EditFlag

    board = mine_board()
    mine = SetShot(shot_id="m4", field="camera", new="pan_left", rationale="r", sources=["n_7"])
    theirs = RemoveLine(shot_id="m3", line=1, rationale="cut", sources=["critic_a"])
    said = "<img src=x onerror=alert(1)> shouted"  # an LLM's words: the client sets them as text only
    proposal = Proposal(
        summary="s",
        edits=[mine, theirs],
        ticked=[1],
        flags=[EditFlag(edit=2, why="takes 'lantern' out of the film")],
        answers=[Answer(note_id="n_7", request="pan across m4", edits=[1], answer=said, status="changed")],
    )
    record = ProposalRecord(id="pr_1", version=1, created_at=datetime.now(UTC), mode="offline", proposal=proposal)
    data = json.loads(review_json(record, {"n_7": "pan across m4"}, {"critic_a": "Ana"}, {}, board))
    assert [e["accept"] for e in data["edits"]] == [True, False]
    assert data["edits"][1]["flag"] == "takes 'lantern' out of the film"
    assert data["answers"] == [{"request": "pan across m4", "status": "changed", "answer": said, "edits": [1]}]
    from app.ui.screens.revise import HERE

    assert "innerHTML" not in (HERE / "revise.js").read_text()
