"""Control characters in what people and LLMs write (a note, a critique, a title, narration) reach the hand-off
files intact as text but never as characters the formats cannot hold: `chief export --timeline` writes an FCPXML
that parses, an EDL and an OTIO that OpenTimelineIO reads; the film's SRT and WebVTT stay well formed."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import opentimelineio as otio

from app.config import load_config
from app.studio import Studio
from storage.schema import DIMENSIONS, Scene, Shot, Storyboard
from tests.agents.openai_server import ok
from tests.security.conftest import chief

BAD = "\x01\x0b\x1f\x7f\ufffe"  # C0 controls, DEL and a noncharacter: none of them may stand in XML 1.0


def critique_answer() -> dict:
    return {
        "overall": 6.0,
        "scores": {d: 6.0 for d in DIMENSIONS},
        "shot_notes": [{"shot_id": "s0", "note": f"the cut{BAD} is late"}],
        "top_issues": [
            {"summary": f"slow{BAD}", "urgency": 3, "dimension": "pacing", "shot_ids": ["s1"], "suggestion": "cut"}
        ],
        "keep_watching": True,
        "keep_watching_reason": "curious",
        "summary": f"fine{BAD}",
    }


def test_control_characters_in_notes_and_critiques_leave_the_hand_off_files_readable(tmp_path, server):
    home = tmp_path / "home"
    shots = [
        Shot(
            shot_id=f"s{i}",
            prompt=f"shot {i}: a lighthouse at dawn",
            duration=1.0,
            seed=i,
            narration=f"the keeper{BAD} waits --> <b>dawn</b> & {i}",
        )
        for i in range(2)
    ]
    board = Storyboard(
        title=f"Night{BAD} Watch", logline="x", scenes=[Scene(scene_id="a", shots=shots)], width=128, height=72, fps=8
    )
    settings = {
        "home": home,
        "narration": False,
        "agents": "llm",
        "llm_base_url": server.base_url,
        "critic_model": "critic-x",
        "llm_backoff": 0.01,
    }
    studio = Studio(load_config(settings, environ={}))
    pid = studio.create_from_storyboard(board, panel=["film_critic"]).project_id
    studio.render(pid)
    server.responder = lambda body: ok(critique_answer())
    studio.critique(pid)
    studio.db.close()
    res = chief(home, "note", pid, f"open{BAD} on the lamp", "--shot", "s0")
    assert res.returncode == 0, res.stderr

    out = tmp_path / "cut"
    res = chief(home, "export", pid, "--timeline", "-o", str(out))
    assert res.returncode == 0, res.stderr
    root = ET.parse(out / "cut.fcpxml").getroot()  # ExpatError before: "not well-formed (invalid token)"
    texts = [el.get("value") or el.get("name") or "" for el in root.iter() if el.tag in ("marker", "project")]
    assert any("the cut is late" in t for t in texts), texts
    assert any("open on the lamp" in t for t in texts), texts
    for suffix in ("otio", "edl", "fcpxml"):
        timeline = otio.adapters.read_from_file(str(out / f"cut.{suffix}"))
        names = [m.name for c in timeline.find_clips() for m in c.markers]
        assert names and not any(ch in n for n in names for ch in BAD), (suffix, names)
    assert any("the cut is late" in n for n in names) and any("open on the lamp" in n for n in names), names

    srt = next(home.glob("media/**/*.srt")).read_text(encoding="utf-8")
    vtt = next(home.glob("media/**/*.vtt")).read_text(encoding="utf-8")
    for text in (srt, vtt):
        assert not any(ch in text for ch in BAD), repr(text)
        assert text.count("-->") == 2, text  # the two cue timings, none from the narration
    # (one line or two: the SDH captions name the NARRATOR, and the cue wraps)
    assert "the keeper waits → &lt;b&gt;dawn&lt;/b&gt; &amp; 0" in " ".join(vtt.split()), vtt
    assert "the keeper waits → <b>dawn</b> & 0" in " ".join(srt.split()), srt
