"""The refiner edits sound. Offline: a note about the music, the effects, a line's delivery or a character's voice
becomes the matching edit on the scene, shot or character it is about, and what it cannot do is said; critics'
notes about the music's level are evidence, cited. LLM: the answer schema names the sound edits and the scenes, and
a proposal the tests' server answers with them is read, checked and kept."""

from __future__ import annotations

import json

import pytest

from agents.offline.refiner import OfflineRefiner
from agents.refiner import LLMRefiner
from storage.edits import describe, sanitize
from storage.schema import (
    DIMENSIONS,
    SOUND_OPS,
    Character,
    Critique,
    CritiqueIssue,
    Line,
    Note,
    Scene,
    Shot,
    Storyboard,
)
from tests.agents.openai_server import ok
from tests.agents.test_refiner import edit


def harbour() -> Storyboard:
    def shot(i, **kw):
        return Shot(shot_id=f"s00{i}", prompt=f"view {i} of the harbour", duration=4, **kw)

    return Storyboard(
        title="Harbour",
        characters=[
            Character(name="Mara", description="a young girl in a red scarf"),
            Character(name="Tom", description="the old lighthouse keeper with a grey beard"),
        ],
        scenes=[
            Scene(scene_id="sc1", title="Arrival", music="gentle strings", shots=[shot(1, characters=["Mara"])]),
            Scene(
                scene_id="sc2",
                title="The storm",
                music="tense drums",
                shots=[
                    shot(2, sounds="heavy rain, wind"),
                    shot(3, characters=["Tom"], dialogue=[Line(character="Tom", line="Hold on.")]),
                ],
            ),
            Scene(
                scene_id="sc3",
                title="Morning",
                music="calm piano",
                shots=[shot(4, characters=["Mara"], dialogue=[Line(character="Mara", line="It is over.")])],
            ),
        ],
    )


def offline(board, notes, critiques=()):
    p = OfflineRefiner().refine(board, notes, list(critiques)).value
    known = {n.id for n in notes} | {c.persona_id for c in critiques}
    edits, dropped = sanitize(p.edits, board, known)
    assert dropped == []
    return edits, p.not_changed


@pytest.mark.parametrize(
    ("text", "shot_id", "expected"),
    [
        ("the music is too loud in the storm scene", None, [("set_level", "Scene 2 “The storm”: music −6 dB")]),
        ("The music drowns the lines in scene 3, turn it down by 10 dB", None, [("set_level", "Scene 3 “Morning”: music −10 dB")]),
        ("no music in the last scene", None, [("set_music", "Scene 3 “Morning”: no music")]),
        ("add thunder to s004", None, [("set", "Shot s004 sounds: thunder")]),
        ("the rain is too loud in the storm scene", None, [("set_level", "Scene 2 “The storm”: effects −6 dB")]),
        ("she should whisper that line", "s004", [("set_line", "Shot s004 line 1: whispered")]),
        ("make the keeper sound older", None, [("set_voice", "Tom's voice: lower (−2 semitones), slower (pace 1 → 0.85)")]),
        ("the music is too loud", None, [("set_level", "Film: music level −8 dB → −14 dB")]),
        ("the music should be a slow lonely cello in the storm scene", None, [("set_music", "Scene 2 “The storm”: music cue: a slow lonely cello")]),
    ],
)  # fmt: skip
def test_a_sound_note_becomes_the_matching_edit_on_what_it_is_about(text, shot_id, expected):
    b = harbour()
    note = Note(id="n_1", text=text, shot_id=shot_id)
    edits, _ = offline(b, [note])
    assert [(e.op, describe(e, b)) for e in edits] == expected
    assert all(e.sources == ["n_1"] for e in edits)
    assert not any(e.op == "set" and e.field in ("prompt", "duration", "negative_prompt") for e in edits)  # no picture


@pytest.mark.parametrize(
    ("text", "shot_id", "picture"),
    [
        ("add a piano in the corner", "s001", ("set", "s001 prompt")),
        ("the effects look cheap, show more waves", "s002", ("set", "s002 prompt")),
        ("make the storm scene darker", None, ("set", "s002 prompt")),
    ],
)
def test_a_picture_note_that_names_an_instrument_or_effects_stays_a_picture_note(text, shot_id, picture):
    edits, left = offline(harbour(), [Note(id="n_1", text=text, shot_id=shot_id)])
    assert picture in [(e.op, e.target) for e in edits] and not any(e.op in SOUND_OPS for e in edits)
    assert not any("sound" in u.why for u in left)


def test_loud_drums_are_the_music():
    edits, _ = offline(harbour(), [Note(id="n_1", text="the drums are too loud in the storm scene")])
    assert [describe(e, harbour()) for e in edits] == ["Scene 2 “The storm”: music −6 dB"]


@pytest.mark.parametrize(
    ("text", "shot_id", "why"),
    [
        ("the sound is off somehow", None, "a sound note no rule reads"),
        ("she should whisper that line", None, "which line"),
        ("the effects are too loud in the first scene", None, "scene sc1 has no sounds to make louder or quieter"),
        ("add thunder", None, "sounds need a shot or a scene"),
    ],
)
def test_what_a_sound_note_cannot_do_is_said(text, shot_id, why):
    edits, left = offline(harbour(), [Note(id="n_1", text=text, shot_id=shot_id)])
    assert edits == [] and any(why in u.why for u in left), left


def critique(pid, summary, shots, urgency=3):
    return Critique(
        persona_id=pid,
        overall=5,
        scores={d: 5 for d in DIMENSIONS},
        keep_watching=True,
        keep_watching_reason="ok",
        summary="s",
        top_issues=[CritiqueIssue(summary=summary, urgency=urgency, dimension="emotional_impact", shot_ids=shots)],
    )


def test_critics_notes_about_the_music_are_evidence_cited_and_a_note_outranks_them():
    b = harbour()
    drowned = [critique(p, "the music drowns the lines", ["s003"]) for p in ("teen_scroller", "film_critic")]
    edits, _ = offline(b, [], drowned)
    assert [(describe(e, b), e.sources) for e in edits] == [
        ("Scene 2 “The storm”: music −6 dB", ["teen_scroller", "film_critic"])
    ]
    edits, left = offline(b, [], [critique("teen_scroller", "the music is too loud", ["s004"])])
    assert edits == [] and [u.why for u in left] == ["only teen_scroller raised it"]  # not also "a question for you"
    note = Note(id="n_1", text="the music is too quiet in the storm scene")
    edits, left = offline(b, [note], drowned)
    assert [(describe(e, b), e.sources) for e in edits] == [("Scene 2 “The storm”: music +6 dB", ["n_1"])]
    assert any("your note already decides its level" in u.why for u in left)


def test_the_llm_refiners_schema_names_the_sound_edits_and_its_proposal_is_kept(server, client):
    import jsonschema

    b = harbour()
    sound = [
        edit(op="set_level", scene_id="sc2", field="music_level", new="-6", sources=["n_1"]),
        edit(op="set_music", scene_id="sc3", new="", sources=["n_1"]),
        edit(op="set_line", shot_id="s003", line=1, delivery="shouted", sources=["n_1"]),
        edit(op="add_line", shot_id="s004", character="Mara", new="Look, the sun.", sources=["n_1"]),
        edit(op="remove_line", shot_id="s003", line=1, sources=["n_1"]),
        edit(op="set_voice", character="Tom", old="whatever the model wrote", pitch=-3, pace=0.85, sources=["n_1"]),
        edit(op="set_level", scene_id="sc9", field="music_level", new="-6"),  # no such scene
        edit(op="set_level", field="music_level", new="loud"),  # not a number: dropped when read
    ]
    answer = {"summary": "quieter storm", "edits": sound, "not_changed": [], "answers": []}
    server.script(ok(answer))
    notes = [Note(id="n_1", text="the music is too loud in the storm scene")]
    p = LLMRefiner(client).refine(b, notes, []).value
    body = server.requests[0]
    schema = body["response_format"]["json_schema"]["schema"]
    props = schema["$defs"]["EditOut"]["properties"]
    assert {"set_level", "set_voice", "set_music", "set_line", "add_line", "remove_line"} <= set(props["op"]["enum"])
    assert props["scene_id"]["anyOf"][0]["enum"] == ["sc1", "sc2", "sc3"]
    assert schema["$defs"]["EditOut"]["required"] == list(props)  # strict: every property required
    jsonschema.validate({**answer, "edits": sound[:6]}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**answer, "edits": [sound[6]]}, schema)
    user = body["messages"][1]["content"]
    assert 'music: "tense drums", music level +0 dB' in user and "THE FILM'S SOUND: music level -8 dB" in user
    assert [u.what for u in p.not_changed] == ["set_level music_level"]
    edits, dropped = sanitize(p.edits, b, {"n_1"})
    assert [describe(e, b) for e in edits] == [
        "Scene 2 “The storm”: music −6 dB",
        "Scene 3 “Morning”: no music",
        "Shot s003 line 1: shouted",
        "Shot s004: new line at the end, Mara: “Look, the sun.”",
        "Shot s003: line 1 removed (Tom: Hold on.)",
        "Tom's voice: lower (−3 semitones), slower (pace 1 → 0.85)",
    ]
    assert [d.what for d in dropped] == ["set_level sc9"] and all(e.sources == ["n_1"] for e in edits)


def test_through_the_studio_the_llm_sees_the_cast_voices_and_its_sound_edits_are_accepted(make_studio):
    """The whole service: the refiner's request carries each scene's cue and levels and each character's voice as
    cast (none is stored), its sound edits are checked, kept within the scope, cited, and accepting stores them."""
    import re

    from storage.schema import Scope
    from tests.agents.openai_server import FakeOpenAI

    def responder(body: dict):
        text = body["messages"][1]["content"]
        note_id = re.findall(r"\bn_[0-9a-f]{8}\b", text)[0]
        tom = next(
            c
            for c in json.loads(text.split("THE STORY (current version): ")[1].split("\n")[0])["characters"]
            if c["name"] == "Tom"
        )
        return ok(
            {
                "summary": "quieter storm, an older keeper",
                "not_changed": [],
                "edits": [
                    edit(op="set_level", scene_id="sc2", field="music_level", new="-6", sources=[note_id]),
                    edit(op="set_voice", character="Tom", pitch=tom["voice"]["pitch"] - 2, sources=[note_id]),
                ],
            }
        )

    with FakeOpenAI(responder) as server:
        st = make_studio(llm_base_url=server.base_url, api_key="sk-test", refiner_model="refiner-model")
        pid = st.create_from_storyboard(harbour(), ["film_critic"]).project_id
        cast = st.voices(pid)["Tom"]
        assert not cast.stored
        note = st.add_note(pid, "the music is too loud in the storm scene, and make the keeper sound older")
        record = st.refine(pid)
        sent = server.requests[-1]["messages"][1]["content"]
        assert 'scene sc2 "The storm"' in sent and 'music: "tense drums", music level +0 dB' in sent
        assert [(e.op, e.sources) for e in record.proposal.edits] == [
            ("set_level", [note.id]),
            ("set_voice", [note.id]),
        ]
        assert record.proposal.edits[1].old == cast.voice  # the voice it has now, as cast
        v = st.accept(pid).version
        assert v.storyboard.scenes[1].music_level == -6.0
        assert v.storyboard.characters[1].voice == cast.voice.model_copy(update={"pitch": cast.voice.pitch - 2})
        assert [(n.note.id, n.addressed) for n in st.earlier_notes(pid)] == [(note.id, True)]

        scoped = st.refine(pid, 1, Scope(scenes=["sc1"]))  # the same answer, for another scene
        assert [e.op for e in scoped.proposal.edits] == ["set_voice"]  # a character's voice is the whole film's
        assert any(
            u.what == "set_level sc2 music_level" and "outside this proposal's scope" in u.why
            for u in scoped.proposal.not_changed
        )


def _sound_cases(board: Storyboard) -> list[tuple[Note, set[tuple[str, str]]]]:
    """(a note, the (op, target) edits it must make, and only those) on a planned storyboard."""
    k = min(5, len(board.scenes))
    scene, last = board.scenes[k - 1], board.scenes[-1]
    who = board.characters[0]
    talky = next((s for s in board.shots() if s.dialogue), None)
    cases = [
        (Note(text=f"the music is too loud in scene {k}"), {("set_level", f"{scene.scene_id} music_level")}),
        (Note(text="no music in the last scene"), {("set_music", f"{last.scene_id} music")}),
        (Note(text=f"make the {who.name.split()[-1]} sound older"), {("set_voice", f"{who.name} voice")}),
        (Note(text="add thunder", shot_id=board.shots()[2].shot_id), {("set", f"{board.shots()[2].shot_id} sounds")}),
    ]
    if talky:
        lines = {("set_line", f"{talky.shot_id} line {n}") for n in range(1, len(talky.dialogue) + 1)}
        cases.append((Note(text="they should whisper that line", shot_id=talky.shot_id), lines))
    return cases


@pytest.mark.parametrize("idea", range(4))
def test_sound_notes_on_planned_storyboards_edit_what_they_are_about_and_nothing_else(idea):
    """Held-out ideas planned offline at 3 minutes: each sound note makes exactly its sound edits (the right scene,
    shot or character), no picture edit, and nothing left unsaid."""
    from agents.offline import OfflinePlanner
    from tests.agents.fidelity import HELD_OUT

    board = OfflinePlanner().plan(HELD_OUT[idea].idea, 3).value
    for note, expected in _sound_cases(board):
        p = OfflineRefiner().refine(board, [note], []).value
        got = {(e.op, e.target) for e in p.edits}
        assert got == expected, (note.text, got, p.not_changed)
        assert p.not_changed == [], (note.text, p.not_changed)


def test_the_schema_stays_within_strict_modes_limits_at_the_largest_storyboard():
    """OpenAI's strict mode refuses a schema past 100 object properties in all, 5 levels of nesting or 500 enum values
    in all (the limits first documented; later models allow more): the refiner's schema for a storyboard at the
    shot cap (300 shots in 30 scenes) stays within them, and no keyword strict mode refuses is left in it."""
    from agents.refiner import proposal_schema
    from storage.schema import Limits

    cap = Limits().max_shots
    scenes = [
        Scene(scene_id=f"sc{k:02d}", shots=[Shot(shot_id=f"s{k:02d}{i:02d}", prompt="x") for i in range(cap // 30)])
        for k in range(30)
    ]
    schema = proposal_schema(Storyboard(title="Big", scenes=scenes))
    text = json.dumps(schema)
    assert not any(f'"{k}"' in text for k in ("default", "minimum", "maximum", "pattern", "minLength", "maxLength"))
    defs = schema["$defs"]
    properties = len(schema["properties"]) + sum(len(d.get("properties", {})) for d in defs.values())
    enums = sum(len(v["enum"]) for v in _nodes(schema) if isinstance(v, dict) and "enum" in v)

    def depth(node) -> int:  # objects nested in objects, through arrays and $refs
        if isinstance(node, dict):
            if "$ref" in node:
                return depth(defs[node["$ref"].rsplit("/", 1)[1]])
            inner = max([depth(v) for k, v in node.items() if k != "$defs"] or [0])
            return inner + (1 if "properties" in node else 0)
        if isinstance(node, list):
            return max([depth(v) for v in node] or [0])
        return 0

    levels = depth(schema)
    print(f"schema: {properties} properties, {enums} enum values, {levels} levels")
    assert properties <= 100 and enums <= 500 and levels <= 5
    assert enums >= cap + 30  # every shot and every scene is named


def _nodes(node):
    yield node
    for v in node.values() if isinstance(node, dict) else node if isinstance(node, list) else []:
        yield from _nodes(v)
