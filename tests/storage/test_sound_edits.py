"""Sound edits (a line's words and delivery, a line added or removed, a character's voice, a scene's cue, a scene's or
the film's level): checked by the one sanitize every refiner's edits pass (bounds, caps, unknown targets, locked
shots, text made one line), applied, diffed, said in words, and carried by an archive with every kind."""

from __future__ import annotations

import pytest

from app.config import load_config
from app.studio import Studio
from storage.edits import EditError, apply_edits, describe, diff_storyboards, sanitize
from storage.records import ProposalRecord
from storage.schema import (
    EDIT,
    SOUND_OPS,
    Character,
    CharacterVoice,
    Limits,
    Line,
    Proposal,
    Scene,
    Shot,
    Storyboard,
    new_id,
    utcnow,
)


def board() -> Storyboard:
    return Storyboard(
        title="Harbour",
        characters=[
            Character(name="Mara", description="a girl in a red scarf"),
            Character(name="Keeper", description="an old man", voice=CharacterVoice(pitch=4.0, pace=1.05)),
        ],
        scenes=[
            Scene(
                scene_id="a",
                title="The harbour",
                music="gentle strings",
                shots=[Shot(shot_id="s1", prompt="a harbour", dialogue=[Line(character="Mara", line="Look.")])],
            ),
            Scene(
                scene_id="b",
                title="The storm",
                music="tense drums",
                shots=[
                    Shot(shot_id="s2", prompt="waves", sounds="rain, wind"),
                    Shot(shot_id="s3", prompt="stairs", locked=True, dialogue=[Line(line="Hurry.")]),
                ],
            ),
        ],
    )


def every_kind() -> list[dict]:
    return [
        {"op": "set_line", "shot_id": "s1", "line": 1, "delivery": "whis\x00pered\n softly", "rationale": "r"},
        {"op": "add_line", "shot_id": "s1", "character": "Keeper", "new": "Get   inside.", "rationale": "r"},
        {"op": "remove_line", "shot_id": "s1", "line": 1, "rationale": "r"},
        {"op": "set_voice", "character": "Keeper", "pitch": 1.0, "pace": 0.9, "rationale": "r"},
        {"op": "set_music", "scene_id": "a", "new": "", "rationale": "r"},
        {"op": "set_level", "scene_id": "b", "field": "music_level", "new": -6, "rationale": "r"},
        {"op": "set_level", "field": "effects_level", "new": -20, "rationale": "r"},
    ]


def test_every_kind_is_checked_applied_diffed_and_said_in_words():
    b = board()
    edits, dropped = sanitize(every_kind(), b, limits=Limits())
    assert dropped == [] and [e.op for e in edits] == [e["op"] for e in every_kind()]
    assert edits[0].delivery == "whis pered softly" and edits[0].old == "Mara: Look."  # one line; old from the board
    assert edits[1].new == "Get inside."
    assert edits[3].old == CharacterVoice(pitch=4.0, pace=1.05)
    assert (edits[4].old, edits[5].old, edits[6].old) == ("gentle strings", 0.0, -14.0)
    words = [describe(e, b) for e in edits]
    assert words == [
        "Shot s1 line 1: whis pered softly",
        "Shot s1: new line at the end, Keeper: “Get inside.”",
        "Shot s1: line 1 removed (Mara: Look.)",
        "Keeper's voice: lower (−3 semitones), slower (pace 1.05 → 0.9)",
        "Scene 1 “The harbour”: no music",
        "Scene 2 “The storm”: music −6 dB",
        "Film: effects level −14 dB → −20 dB",
    ]
    after = apply_edits(b, edits)
    assert [ln.line for ln in after.shot("s1").dialogue] == ["Get inside."]  # whispered, then a line added, line 1 out
    assert after.characters[1].voice == CharacterVoice(pitch=1.0, pace=0.9)
    assert (after.scenes[0].music, after.scenes[1].music_level, after.film.effects_level) == ("", -6.0, -20.0)
    d = diff_storyboards(b, after)
    assert d.story["music a"] == ("gentle strings", "") and d.story["music level b"] == (0.0, -6.0)
    assert d.story["voice Keeper"][1] == "piper, pitch +1 semitones, pace 0.9"
    assert [c.fields["dialogue"] for c in d.shots if c.shot_id == "s1"] == [("Mara: Look.", "Keeper: Get inside.")]


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        ({"op": "set_line", "shot_id": "s1", "line": 2, "new": "x"}, "shot s1 has 1 line(s)"),
        ({"op": "set_line", "shot_id": "s3", "line": 1, "delivery": "loud"}, "shot s3 is locked"),
        ({"op": "set_line", "shot_id": "s1", "line": 1}, "a line edit needs new words or a delivery"),
        ({"op": "add_line", "shot_id": "s1", "line": 3, "new": "x"}, "a new line is at most line 2"),
        ({"op": "add_line", "shot_id": "s1", "character": "Nobody", "new": "x"}, "no character 'Nobody'"),
        ({"op": "remove_line", "shot_id": "s2", "line": 1}, "shot s2 has 0 line(s)"),
        ({"op": "set_voice", "character": "Nobody", "pitch": 1}, "no character 'Nobody'"),
        ({"op": "set_voice", "character": "Mara", "pitch": 13}, "less than or equal to 12"),
        ({"op": "set_voice", "character": "Mara", "pace": 0.2}, "greater than or equal to 0.5"),
        ({"op": "set_voice", "character": "Mara", "speaker": "a b"}, "should match pattern"),
        ({"op": "set_voice", "character": "Mara", "speaker": "alloy"}, "a Piper voice's speaker is a speaker id"),
        ({"op": "set_music", "scene_id": "zz", "new": "x"}, "there is no scene 'zz'"),
        ({"op": "set_music", "scene_id": "a", "new": "x" * 1001}, "at most 1000 characters"),
        ({"op": "set_level", "scene_id": "a", "field": "music_level", "new": -50}, "within -40..12 dB"),
        ({"op": "set_level", "field": "music_level", "new": 20}, "less than or equal to 12"),
        ({"op": "set_level", "scene_id": "a", "field": "loudness", "new": 1}, "'music_level' or 'effects_level'"),
    ],
)
def test_a_bad_sound_edit_is_dropped_and_explained(edit, why):
    edits, dropped = sanitize([{**edit, "rationale": "r"}], board())
    assert edits == [] and len(dropped) == 1 and why in dropped[0].why, dropped


def test_edits_that_change_nothing_vanish_and_caps_hold():
    b = board()
    same = [
        {"op": "set_line", "shot_id": "s1", "line": 1, "new": "Look.", "rationale": "r"},
        {"op": "set_voice", "character": "Keeper", "pitch": 4.0, "rationale": "r"},
        {"op": "set_music", "scene_id": "b", "new": "tense drums", "rationale": "r"},
        {"op": "set_level", "scene_id": "a", "field": "effects_level", "new": 0, "rationale": "r"},
    ]
    assert sanitize(same, b) == ([], [])
    many = [{"op": "add_line", "shot_id": "s1", "new": f"line {i}", "rationale": "r"} for i in range(3)]
    edits, dropped = sanitize(many, b, limits=Limits(max_shot_lines=3))
    assert len(edits) == 2 and "over the storyboard cap max_shot_lines (3)" in dropped[0].why
    with pytest.raises(EditError, match="the shot is locked"):
        apply_edits(b, [EDIT.validate_python({"op": "remove_line", "shot_id": "s3", "line": 1, "rationale": "r"})])


def test_a_voice_edit_is_made_over_the_voice_the_refiner_saw():
    """A character with no stored voice is cast from the names: the refiner sees that voice (`old`), and accepting
    makes the change over it, not over the default voice."""
    b = board()
    cast = CharacterVoice(pitch=5.0, pace=1.05)
    seen = b.model_copy(update={"characters": [b.characters[0].model_copy(update={"voice": cast}), b.characters[1]]})
    (e,), _ = sanitize([{"op": "set_voice", "character": "Mara", "pitch": 3.0, "rationale": "r"}], seen)
    assert e.old == cast and b.characters[0].voice is None
    assert apply_edits(b, [e]).characters[0].voice == CharacterVoice(pitch=3.0, pace=1.05)


def test_an_archive_carries_every_sound_edit_and_what_accepting_made(tmp_path):
    st = Studio(load_config({"home": tmp_path / "home", "narration": False, "agents": "offline"}))
    try:
        pid = st.create_from_storyboard(board(), ["film_critic"]).project_id
        v = st.version(pid)
        note = st.add_note(pid, "the music is too loud in the storm scene")
        edits, _ = sanitize([{**e, "sources": [note.id]} for e in every_kind()], v.storyboard, {note.id})
        assert {e.op for e in edits} == set(SOUND_OPS) and all(e.sources == [note.id] for e in edits)
        record = ProposalRecord(
            id=new_id("pr"), version=v.number, created_at=utcnow(), mode="offline", proposal=Proposal(edits=edits)
        )
        with st.ctx.repo.write() as u:
            u.add_proposal(v, record)
        accepted = st.accept(pid, record.id).version
        out = st.export_project(pid, tmp_path / "p.chief.zip")
        other = st.import_project(out)
        new_pid = other.project_id
        back = st.proposal(new_pid, ref=1)
        (new_note,) = st.notes(new_pid, 1)
        assert new_note.id != note.id and new_note.text == note.text  # ids are renamed on import, with the sources
        assert back.proposal.edits == [e.model_copy(update={"sources": [new_note.id]}) for e in edits]
        assert back.accepted_as == accepted.number
        assert [(n.note.id, n.addressed) for n in st.earlier_notes(new_pid)] == [(new_note.id, True)]
        assert st.version(new_pid, accepted.number).storyboard == accepted.storyboard
        assert accepted.storyboard.scenes[1].music_level == -6.0
    finally:
        st.db.close()
