"""LLMRefiner: notes and critiques reach the model; malformed edits are dropped at parsing, and edits on
locked/unknown shots by the one check every refiner's edits pass (storage.edits.sanitize), each explained."""

from __future__ import annotations

import pytest

from agents.base import AnswerTooLong
from agents.refiner import LLMRefiner
from storage.edits import sanitize
from storage.run import RunContext
from storage.schema import DIMENSIONS, Critique, CritiqueIssue, Note, Proposal
from tests.agents.openai_server import ok


def edit(**kw):
    e = {
        "op": "set",
        "shot_id": None,
        "field": None,
        "character": None,
        "old": None,
        "new": None,
        "rationale": "r",
        "sources": [],
        "scene_id": None,
        "line": None,
        "delivery": None,
        "pitch": None,
        "pace": None,
        "speaker": None,
    }
    e.update(kw)
    return e


def critique(pid, shot_ids):
    return Critique(
        persona_id=pid,
        overall=5,
        scores={d: 5 for d in DIMENSIONS},
        keep_watching=True,
        keep_watching_reason="ok",
        summary=f"{pid} says hi",
        top_issues=[CritiqueIssue(summary="too dark", urgency=4, dimension="visual_quality", shot_ids=shot_ids)],
    )


def test_refine_request_and_postcheck(server, client, storyboard):
    notes = [Note(id="n_1", text="Make the bird a gull, not a crow", shot_id="sh03")]
    critiques = [critique("teen_scroller", ["sh01"]), critique("film_critic", ["sh01"])]
    server.script(
        ok(
            {
                "summary": "brighten the opening, gull",
                "edits": [
                    edit(
                        shot_id="sh01",
                        field="prompt",
                        old="wrong quote",
                        new="a lighthouse on a cliff in a storm, lamp blazing",
                        sources=["teen_scroller", "film_critic", "made_up_persona"],
                    ),
                    edit(shot_id="sh02", field="prompt", new="Ada runs", rationale="faster"),  # locked
                    edit(shot_id="sh77", field="prompt", new="ghost shot"),  # unknown
                    edit(shot_id="sh03", field="camera", new="spin"),  # invalid value
                    edit(shot_id="sh03", field="duration", new="4.5", sources=["n_1"]),
                    edit(op="remove_shot", shot_id="sh02"),  # locked
                    edit(op="add_shot", shot_id="sh01", new="close-up of the gull's eye", sources=["n_1"]),
                    edit(op="set_character", character="Ada", old=None, new="an old woman in a red raincoat"),
                    edit(op="set", shot_id="sh01", field="locked", new="true"),  # not editable
                ],
                "not_changed": [{"what": "the ending", "why": "only one persona minded"}],
            }
        )
    )
    result = LLMRefiner(client).refine(storyboard, notes, critiques)
    p = result.value
    assert isinstance(p, Proposal) and result.model == "refiner-model"
    assert "set sh01" in p.not_changed[-1].what  # field "locked" is not an editable field: dropped at parsing
    edits, dropped = sanitize(p.edits, storyboard, {n.id for n in notes} | {c.persona_id for c in critiques})
    assert [(e.op, e.target) for e in edits] == [
        ("set", "sh01 prompt"),
        ("set", "sh03 duration"),
        ("add_shot", "new shot after sh01"),
        ("set_character", "Ada"),
    ]
    assert edits[0].old == "a lighthouse on a cliff in a storm"  # the real old value, not the model's quote
    assert edits[0].sources == ["teen_scroller", "film_critic"]
    assert edits[3].old == "an old woman in a yellow raincoat, grey braid"
    whys = " | ".join(f"{u.what}: {u.why}" for u in [*p.not_changed, *dropped])
    assert "only one persona minded" in whys
    assert whys.count("sh02 is locked") == 2 and "no shot 'sh77'" in whys and "camera must be one of" in whys
    assert "Input should be 'prompt'" in whys and len(p.not_changed) + len(dropped) == 6

    text = server.texts()
    assert "[n_1] on shot sh03: Make the bird a gull" in text
    assert "persona teen_scroller" in text and "too dark" in text
    assert "sh01: film_critic, teen_scroller" in text  # agreement across personas
    assert "Locked shots (never touch): sh02" in text
    assert "the note wins" in text
    assert server.requests[0]["response_format"]["json_schema"]["name"] == "ProposalOut"


def test_refine_with_nothing_to_go_on(server, client, storyboard):
    server.script(ok({"summary": "nothing to do", "edits": [], "not_changed": []}))
    p = LLMRefiner(client).refine(storyboard, [], []).value
    assert p.edits == [] and "(none)" in server.texts()


def test_a_cut_off_proposal_is_not_repaired_and_says_how_to_ask_for_less(server, client, storyboard):
    server.max_output_tokens = 20  # the server cuts every answer at 20 tokens (finish_reason "length")
    server.script(ok({"summary": "a long proposal " * 40, "edits": []}))
    with pytest.raises(AnswerTooLong) as e:
        LLMRefiner(client, "m").refine(storyboard, [Note(id="n_1", text="brighter", shot_id="sh01")], [])
    assert len(server.requests) == 1  # no repair prompt: it would be cut off too
    assert "cut off at" in str(e.value) and "--scene" in str(e.value) and "CHIEF_REFINER_MAX_TOKENS" in str(e.value)
    assert "\n" not in str(e.value)


def test_edits_past_a_cap_are_dropped_in_order_and_said(storyboard):
    from storage.schema import Limits

    n = len(storyboard.shots())
    adds = [edit(op="add_shot", shot_id="sh01", new=f"insert {i}") for i in range(3)]
    kept, dropped = sanitize(adds, storyboard, limits=Limits(max_shots=n + 2))
    assert [e.new for e in kept] == ["insert 0", "insert 1"]  # the third would make n + 3 shots
    assert [(d.what, d.why) for d in dropped] == [
        ("add_shot sh01", f"proposed but dropped: {n + 3} shots, over the storyboard cap max_shots ({n + 2})")
    ]
    assert sanitize(adds, storyboard)[0] == sanitize(adds, storyboard, limits=Limits())[0]  # within the caps: all kept


def test_the_schema_sent_names_the_storyboards_shots_and_the_editable_fields(server, client, storyboard):
    """A server's constrained decoding follows the schema it is sent: `shot_id` and `field` are enums of this
    storyboard's ids and the editable fields, so it cannot write an edit on a shot or field that does not exist."""
    import jsonschema

    from storage.schema import EDITABLE_SHOT_FIELDS, LEVEL_FIELDS, STORY_FIELDS

    good = {
        "summary": "s",
        "edits": [edit(shot_id="sh03", field="duration", new="4.5")],
        "not_changed": [],
        "answers": [{"request": "r1", "edits": [1], "reason": "shorter"}],
    }
    server.script(ok(good))
    LLMRefiner(client).refine(storyboard, [Note(id="n_1", text="shorter", shot_id="sh03")], [])
    schema = server.requests[0]["response_format"]["json_schema"]["schema"]
    props = schema["$defs"]["EditOut"]["properties"]
    assert props["shot_id"]["anyOf"][0]["enum"] == ["sh01", "sh02", "sh03"]
    assert props["field"]["anyOf"][0]["enum"] == [*EDITABLE_SHOT_FIELDS, *STORY_FIELDS, *LEVEL_FIELDS]
    assert props["scene_id"]["anyOf"][0]["enum"] == ["sc01", "sc02"]
    jsonschema.validate(good, schema)
    for bad in (edit(shot_id="sh77", field="prompt", new="x"), edit(shot_id="sh01", field="colour", new="x")):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**good, "edits": [bad]}, schema)


def test_a_range_of_shots_bounds_the_refiners_input(server, client):
    """`refine --shots sh010-sh012` on a 120-shot scene sends those three shots, not the scene: the request stays
    small enough for an 8k context however long the scene is."""
    from storage.schema import Scope
    from tests.agents.test_critic_watch import long_board

    board = long_board(scenes=1, per_scene=120)
    refiner = LLMRefiner(client)
    scope = Scope(shots=["sh010", "sh011", "sh012"])
    text = refiner.messages(board, [], [], scope)[1]["content"]
    assert all(f"shot {n}: the keeper" in text for n in (10, 11, 12))
    assert "shot 9: the keeper" not in text and "shot 13: the keeper" not in text
    assert "its other 117 shots (sh001–sh120, 585 s) are not in scope" in text
    ranged = client.estimate_tokens(refiner.messages(board, [], [], scope))
    whole_scene = client.estimate_tokens(refiner.messages(board, [], [], Scope(scenes=["sc01"])))
    assert ranged < 2000 < whole_scene
    server.script(ok({"summary": "s", "edits": [], "not_changed": []}))
    refiner.refine(board, [], [], RunContext(scope=scope))
    assert len(server.texts(0)) < 8000
