"""The review shows sound edits like the others, in words ("Scene 2 “The storm”: music −6 dB", "Keeper's voice:
lower …"), with their diff; a level is edited in place as text ("−4 dB") and committed as that level."""

from __future__ import annotations

import json
import re

import pytest

from storage.schema import Character, CharacterVoice, Line, Scene, Shot, Storyboard
from tests.ui.test_browser import LONG, open_project, server, st  # noqa: F401  (the browser test's fixtures)


def board() -> Storyboard:
    return Storyboard(
        title="Harbour",
        characters=[Character(name="Keeper", description="an old man", voice=CharacterVoice(pitch=3.0))],
        scenes=[
            Scene(scene_id="a", title="<b>Arrival</b>", shots=[Shot(shot_id="s1", prompt="a harbour")]),
            Scene(
                scene_id="b",
                title="The storm",
                music="tense drums",
                shots=[Shot(shot_id="s2", prompt="waves", dialogue=[Line(character="Keeper", line="Hold on.")])],
            ),
        ],
        width=96,
        height=64,
        fps=8,
    )


def proposal(st, pid: str):
    from storage.edits import sanitize
    from storage.records import ProposalRecord
    from storage.schema import Proposal, new_id, utcnow

    v = st.version(pid)
    raw = [
        {"op": "set_level", "scene_id": "b", "field": "music_level", "new": -6, "rationale": "too loud"},
        {"op": "set_voice", "character": "Keeper", "pitch": 1.0, "pace": 0.85, "rationale": "older"},
        {"op": "set_line", "shot_id": "s2", "line": 1, "delivery": "shouted", "rationale": "storm"},
        {"op": "set_music", "scene_id": "a", "new": "soft <i>harp</i>", "rationale": "calm"},
    ]
    edits, dropped = sanitize(raw, v.storyboard)
    assert not dropped
    record = ProposalRecord(
        id=new_id("pr"), version=v.number, created_at=utcnow(), mode="offline", proposal=Proposal(edits=edits)
    )
    with st.ctx.repo.write() as u:
        u.add_proposal(v, record)
    return record


def test_the_review_json_says_sound_edits_in_words_and_a_level_edited_as_text_is_accepted(studio):
    from app.ui.screens.revise import decisions, review_json

    pid = studio.create_from_storyboard(board()).project_id
    record = proposal(studio, pid)
    data = json.loads(review_json(record, {}, {}, {}, studio.version(pid).storyboard))
    assert [e["target"] for e in data["edits"]] == [
        "Scene 2 “The storm”: music −6 dB",
        "Keeper's voice: lower (−2 semitones), slower (pace 1 → 0.85)",
        "Shot s2 line 1: shouted",
        "Scene 1 “<b>Arrival</b>”: music: soft <i>harp</i>",  # text: revise.js sets it with textContent
    ]
    assert data["edits"][0]["diff"] == [["-", "0 dB"], ["+", "−6 dB"]] and data["edits"][0]["new"] == "-6"
    assert data["edits"][2]["diff"] == [["-", "Keeper:"], ["+", "Keeper (shouted):"], ["=", "Hold on."]]
    assert [e["editable"] for e in data["edits"]] == [True, False, False, True]
    data["edits"][0]["text"] = "−4 dB"
    for e in data["edits"][1:]:
        e["accept"] = False
    pr, only, texts = decisions(json.dumps(data))
    v = studio.accept(pid, pr, only=only, edits=texts).version
    assert v.storyboard.scenes[1].music_level == -4.0 and v.storyboard.characters[0].voice.pitch == 3.0


@pytest.mark.browser
@pytest.mark.slow
def test_the_review_screen_shows_and_commits_a_sound_edit(server, st, page, errors):  # noqa: F811
    from playwright.sync_api import expect

    pid = st.create_from_storyboard(board().model_copy(update={"title": "Sound review"})).project_id
    proposal(st, pid)
    open_project(page, server, pid, "Revise")
    rows = page.locator("#review .edit-row")
    expect(rows).to_have_count(4, timeout=LONG)
    expect(rows.nth(0)).to_contain_text("Scene 2 “The storm”: music −6 dB")
    expect(rows.nth(1)).to_contain_text("Keeper's voice: lower")
    expect(rows.nth(3)).to_contain_text("“<b>Arrival</b>”")  # shown as text, never markup
    assert page.locator("#review b:not(.target)", has_text="Arrival").count() == 0  # no <b> made from the title
    page.locator("#reject_all_btn").click()
    rows.nth(0).locator("input.accept").check()
    page.locator("#commit_btn").click()
    expect(page.locator("#revise_message")).to_contain_text("Committed v2", timeout=LONG)
    v2 = st.version(pid, 2)
    assert v2.storyboard.scenes[1].music_level == -6.0 and v2.storyboard.characters[0].voice.pitch == 3.0
    assert not re.search(r"\bpr_[0-9a-f]{8}\b", page.locator("#review").inner_text())
