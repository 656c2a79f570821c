"""The offline critics listen, by measurement (issue 24's spec, end to end through the Studio with the animatic): the
`sound` score of a film whose music is raised over the lines with ducking off is lower than with the default mix,
and the critique says why with the level measured; each sound check on a film view whose hearing says so; old
critiques, stored rows and archives without `sound` still load."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import zipfile
from dataclasses import replace

import pytest

from agents.base import FilmView, HeardLine, Hearing, SampledFrame, ShotSound, SoundFacts
from agents.offline.checks import ALIKE_SEMITONES, FAST_WPS, LOUDNESS_TOLERANCE, MASKED_DB, sound
from agents.offline.critic import OfflineCritic
from agents.personas import builtin_personas
from app.ui.screens.history import plot_svg, score_series
from app.ui.screens.screening import cards_html
from storage.schema import Critique, Scores
from tests.agents.test_hearing import Listener, sound_board
from tests.conftest import tiny_board

PANEL = ["listener", "parent_with_kids", "teen_scroller"]


def test_music_over_the_lines_lowers_the_sound_score_and_the_critique_says_by_how_much(studio):
    heard = Listener(studio.agents.critic)
    studio.ctx._agents = replace(studio.agents, critic=heard)
    v = studio.create_from_storyboard(sound_board(), panel=PANEL)
    pid = v.project_id
    studio.render(pid)
    default = {c.persona_id: c.critique for c in studio.critique(pid)}
    under = heard.films[-1].hearing
    assert under is not None and under.shots[0].facts is not None

    v2, _ = studio.set_film_options(pid, {"music_level": 12.0, "ducking": False})
    studio.render(pid)
    loud = {c.persona_id: c.critique for c in studio.critique(pid)}
    over = heard.films[-1].hearing
    assert over is not None and over.shots[0].facts is not None
    before = [s.facts.speech_to_music_db for s in under.shots[:2] if s.facts]
    after = [s.facts.speech_to_music_db for s in over.shots[:2] if s.facts]
    print(f"speech over music: default mix {before} dB, music +12 dB without ducking {after} dB")
    assert all(b is not None and b >= MASKED_DB for b in before)
    assert all(a is not None and a < MASKED_DB for a in after)

    for pid_ in PANEL:
        a, b = default[pid_].scores.sound, loud[pid_].scores.sound
        print(f"{pid_}: sound {a} -> {b}; {loud[pid_].summary}")
        assert a is not None and b is not None and b < a
        assert not any(i.dimension == "sound" and "music" in i.summary for i in default[pid_].top_issues)
    # the listener says why, with the level measured under the worst line
    worst = min((s for s in over.shots if s.facts and s.facts.speech_to_music_db is not None),
                key=lambda s: s.facts.speech_to_music_db)  # fmt: skip
    db = worst.facts.speech_to_music_db
    said = f"{abs(db):.0f} dB {'over' if db < 0 else 'under'} {worst.lines[0].character}'s line in {worst.shot_id}"
    issue = next(i for i in loud["listener"].top_issues if i.dimension == "sound" and "music" in i.summary)
    assert said in issue.summary and worst.shot_id in issue.shot_ids
    assert said in loud["listener"].summary  # in her own words too
    assert "ducking" in issue.suggestion
    assert loud["listener"].overall < default["listener"].overall
    scores = studio.panel_scores(pid)
    assert "sound" in scores and scores["sound"] == pytest.approx(
        sum(c.scores.sound or 0 for c in loud.values()) / len(loud), abs=0.01
    )


def heard(*shots: ShotSound, pitch: dict[str, float] | None = None, lufs: float = -14.3) -> Hearing:
    return Hearing(shots=shots, loudness_lufs=lufs, true_peak_dbtp=-3.0, target_lufs=-14.0, voice_pitch_hz=pitch or {})


def facts(lufs=-14.0, stm=25.0, silence=0.0, clipped=False, wps=2.5) -> SoundFacts:
    return SoundFacts(lufs, stm, silence, clipped, wps)


def line(who: str, t0: float) -> tuple[HeardLine, ...]:
    return (HeardLine(who, "We sail at dawn tomorrow.", "", t0, t0 + 1.0, False),)


def shot(sid: str, t0: float, f: SoundFacts | None, who: str = "Keeper") -> ShotSound:
    return ShotSound(sid, t0, t0 + 1.0, line(who, t0) if f and f.words_per_s else (), facts=f)


def kinds(board, hearing) -> dict[str, str]:
    return {f.kind: f.what for f in sound(board, hearing)}


def test_each_sound_check_on_what_was_measured():
    board = tiny_board(4)  # scenes a (s1, s2) and b (s3, s4)
    clean = heard(*(shot(f"s{i}", i - 1.0, facts()) for i in range(1, 5)), pitch={"Keeper": 98.0, "Whale": 131.0})
    assert kinds(board, clean) == {}
    assert kinds(board, None) == {} and kinds(board, replace(clean, shots=tuple(replace(s, facts=None) for s in clean.shots))) == {}  # fmt: skip

    masked = replace(clean, shots=(shot("s1", 0, facts(stm=MASKED_DB - 7)), *clean.shots[1:]))
    assert kinds(board, masked) == {"masked": "the music is only 3 dB under Keeper's line in s1"}
    drowned = replace(clean, shots=(shot("s1", 0, facts(stm=-4.2)), *clean.shots[1:]))
    assert kinds(board, drowned)["masked"] == "the music is 4 dB over Keeper's line in s1"

    silent = replace(clean, shots=(*clean.shots[:2], shot("s3", 2, facts(lufs=None, stm=None, silence=1.0, wps=None)),
                                   shot("s4", 3, facts(lufs=None, stm=None, silence=1.0, wps=None))))  # fmt: skip
    assert kinds(board, silent) == {"no_sound": "the scene from s3 has no sound at all for 2 s"}
    half = replace(silent, shots=(*silent.shots[:3], clean.shots[3]))  # s4 is heard: the scene is not silent
    assert "no_sound" not in kinds(board, half)

    clip = replace(clean, shots=(clean.shots[0], shot("s2", 1, facts(clipped=True)), *clean.shots[2:]))
    assert kinds(board, clip) == {"clipping": "the sound clips (samples at full scale) in 1 shot(s), first in s2"}

    assert kinds(board, replace(clean, loudness_lufs=-14.0 - LOUDNESS_TOLERANCE + 0.1)) == {}
    assert kinds(board, replace(clean, loudness_lufs=-18.2)) == {
        "loudness_off": "the film plays at -18.2 LUFS, 4.2 LU under its -14 LUFS target"
    }

    fast = replace(
        clean, shots=(clean.shots[0], shot("s2", 1, facts(wps=FAST_WPS + 0.6), who="Whale"), *clean.shots[2:])
    )
    assert kinds(board, fast) == {"fast_lines": "Whale speaks at 5.6 words a second in s2, too fast to follow"}

    alike = replace(clean, voice_pitch_hz={"Keeper": 98.0, "Whale": 98.0 * 2 ** ((ALIKE_SEMITONES - 0.5) / 12)})
    assert kinds(board, alike) == {"voices_alike": "Keeper and Whale sound alike: their voices are 1.5 semitones apart (98 and 107 Hz)"}  # fmt: skip
    apart = replace(clean, voice_pitch_hz={"Keeper": 98.0, "Whale": 98.0 * 2 ** ((ALIKE_SEMITONES + 0.5) / 12)})
    assert kinds(board, apart) == {}


def test_who_minds_what_they_hear(tmp_path):
    """The listener raises a drowned line; the commuter, who watches muted, barely weighs it; a viewer who loves
    quiet pauses is not bothered by a silent scene that bores the teen."""
    from PIL import Image

    board = tiny_board(4)
    ps = builtin_personas()
    critic = OfflineCritic()
    frames = []
    for i, s in enumerate(board.shots()):
        for k in range(2):
            path = tmp_path / f"{s.shot_id}-{k}.png"
            Image.new("RGB", (64, 36), (40 * i + 60 * k, 90, 120)).save(path)
            frames.append(SampledFrame(s.shot_id, k, float(i) + 0.5 * k, str(path)))
    base = FilmView(board, frames, intent=board.logline)
    drowned = heard(shot("s1", 0, facts(stm=-6.0)), *(shot(f"s{i}", i - 1.0, facts()) for i in range(2, 5)))
    silent = heard(*(shot(f"s{i}", i - 1.0, facts()) for i in (1, 2)),
                   *(shot(f"s{i}", i - 1.0, facts(lufs=None, stm=None, silence=1.0, wps=None)) for i in (3, 4)))  # fmt: skip
    from agents.offline.critic import judge

    def salience(pid: str, hearing: Hearing, kind: str) -> float:
        found = critic.findings(ps[pid], replace(base, hearing=hearing))
        return next((j.salience for j in judge(ps[pid], found, True) if j.finding.kind == kind), 0.0)

    assert salience("listener", drowned, "masked") > 3 * salience("phone_commuter", drowned, "masked")
    assert (
        salience("teen_scroller", silent, "no_sound") > 0.18
        and salience("anime_arthouse_tokyo", silent, "no_sound") == 0
    )
    got = critic.critique(ps["listener"], replace(base, hearing=drowned)).value
    assert got.scores.sound is not None and got.scores.sound < 7.5
    assert critic.critique(ps["listener"], base).value.scores.sound is None  # nothing heard: not scored


def test_critiques_without_sound_still_load(studio, tmp_path):
    old = {"story_clarity": 6, "visual_quality": 5, "character_consistency": 7, "pacing": 4, "emotional_impact": 5,
           "intent_faithfulness": 6}  # fmt: skip
    assert Scores.model_validate(old).sound is None and Scores.model_validate(old).scored() == old
    Critique.model_validate({"persona_id": "p", "overall": 5, "scores": old, "keep_watching": True,
                             "keep_watching_reason": "", "summary": ""})  # fmt: skip

    v = studio.create_from_storyboard(sound_board(), panel=["listener", "teen_scroller"])
    pid = v.project_id
    studio.render(pid)
    studio.critique(pid)
    assert "sound" in studio.panel_scores(pid)
    shown = cards_html(studio.critiques(pid), {})  # the Screening room's cards name the score in words
    assert len(re.findall(r"<span>sound: <b>\d+\.\d</b></span>", shown)) == 2
    # a stored row from before `sound`: the key removed from the critiques' JSON in the database itself
    db = sqlite3.connect(studio.config.home / "chief.db")
    rows = db.execute("select id, data from critiques").fetchall()
    assert rows and all('"sound"' in data for _, data in rows)
    for cid, data in rows:
        d = json.loads(data)
        _drop_sound(d)
        assert "sound" not in d["scores"]
        db.execute("update critiques set data = ? where id = ?", (json.dumps(d), cid))
    db.commit()
    db.close()
    loaded = studio.critiques(pid)
    assert len(loaded) == 2 and all(c.critique.scores.sound is None for c in loaded)
    assert "sound" not in studio.panel_scores(pid) and studio.panel_scores(pid)["pacing"] >= 0
    shown = cards_html(loaded, {})
    assert "<span>pacing: <b>" in shown and "<span>sound:" not in shown  # not scored: not shown as a number
    versions, series = score_series(studio, pid, studio.versions(pid), "sound")  # the History plot of `sound`
    assert versions == [1] and series == {}
    assert "<polyline class='mean' points=''" in plot_svg(versions, series, "sound")  # no mean of nothing (not 0)

    # an archive written before `sound`: no such key anywhere in its critiques
    archive = studio.export_project(pid, tmp_path / "p.chief.zip", include_media=False)
    older = tmp_path / "older.chief.zip"
    with zipfile.ZipFile(archive) as src, zipfile.ZipFile(older, "w") as out:
        manifest = json.loads(src.read("manifest.json"))
        project = src.read("project.json").decode()
        data = json.loads(project)
        _drop_sound(data)
        blob = json.dumps(data).encode()

        manifest["members"]["project.json"] = {"sha256": hashlib.sha256(blob).hexdigest(), "size": len(blob)}
        for name in src.namelist():
            if name not in ("manifest.json", "project.json"):
                out.writestr(name, src.read(name))
        out.writestr("project.json", blob)
        out.writestr("manifest.json", json.dumps(manifest))
    back = studio.import_project(older)
    crits = studio.critiques(back.project_id)
    assert len(crits) == 2 and all(c.critique.scores.sound is None for c in crits)


def _drop_sound(node) -> None:
    """Remove `sound` from every scores object (what an archive from before the dimension holds)."""
    if isinstance(node, dict):
        if "story_clarity" in node:
            node.pop("sound", None)
        for v in node.values():
            _drop_sound(v)
    elif isinstance(node, list):
        for v in node:
            _drop_sound(v)
