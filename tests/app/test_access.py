"""A film everyone can follow (issue 24, items 5 and 6): SDH captions name the off-screen speaker and carry what is
heard (the SRT and the WebVTT parsed back), and the described film carries a second audio track whose descriptions
are said between the lines: measured by decoding both tracks of the mp4 — the difference (described − main) has its
energy outside the spoken windows of the dialogue stem only. A description too long for its gap is flagged before
the render and in its summary, and is left out; `chief edit description=` renders no picture again; storyboards
written before descriptions load."""

from __future__ import annotations

import json
import re
import subprocess

import numpy as np
import pytest

from generation.audio.pcm import RATE, decode, rms_db
from generation.video_io import ffmpeg_exe, read_frames
from storage.files import dump_storyboard, load_storyboard
from storage.schema import Character, FilmOptions, Line, Scene, Shot, Storyboard
from tests.subtitle_streams import soft_subtitles, srt_cues

KEEPER = "The lamp is lit tonight."  # 5 words: about 2 s said
WHALE = "I hear you, old man."  # said by the whale, who is not in the shot: off screen
LONG = (  # 32 words: about 13 s, in a 6-s shot
    "The keeper climbs the spiral stairs one slow step at a time, his lantern swinging against the curved stone wall "
    "while the storm throws rain at every narrow window of the tower"
)


def access_board(long_description: bool = False) -> Storyboard:
    return Storyboard(
        title="Access",
        characters=[
            Character(name="Keeper", description="old man in a yellow coat"),
            Character(name="Whale", description="a grey whale"),
        ],
        scenes=[
            Scene(
                scene_id="a",
                music="low cello, slow and sad",
                shots=[
                    Shot(
                        shot_id="s1",
                        prompt="A lighthouse on a cliff at night",
                        duration=10.0,
                        seed=1,
                        characters=["Keeper"],
                        dialogue=[Line(character="Keeper", line=KEEPER), Line(character="Whale", line=WHALE)],
                        sounds="rain lashing, thunder, room tone",
                        description="The keeper stands in the doorway.",
                    ),
                    Shot(
                        shot_id="s2",
                        prompt="The sea under the lighthouse beam",
                        duration=6.0,
                        seed=2,
                        dialogue=[Line(character="Keeper", line="Sing, then.")],
                        sounds="rain lashing, waves on rocks",
                        description=LONG if long_description else "A grey whale rises in the beam.",
                    ),
                ],
            ),
            Scene(
                scene_id="b",
                shots=[Shot(shot_id="s3", prompt="Dawn over a calm sea", duration=4.0, seed=3, characters=["Keeper"])],
            ),
        ],
        fps=8,
        width=160,
        height=90,
        film=FilmOptions(music_level=-14),
    )


def new_project(chief, tmp_path, board: Storyboard) -> str:
    p = tmp_path / "story.yaml"
    p.write_text(dump_storyboard(board))
    return json.loads(chief("--json", "new", "--storyboard", str(p)).stdout)["project"]


def cues(path: str, vtt: bool) -> list[tuple[float, float, str]]:
    """(start, end, text) of every cue of an SRT or a WebVTT file, read back with a parser of its own."""
    text = open(path, encoding="utf-8").read()
    if vtt:
        assert text.startswith("WEBVTT\n\n")
        text = text.removeprefix("WEBVTT\n\n")
    out = []
    for block in text.strip().split("\n\n"):
        lines = block.splitlines()
        if not vtt:
            assert lines[0].isdigit()
            lines = lines[1:]
        m = re.fullmatch(r"(\d+):(\d+):(\d+)[,.](\d+) --> (\d+):(\d+):(\d+)[,.](\d+)", lines[0])
        assert m, lines[0]
        t = [int(x) for x in m.groups()]
        start = t[0] * 3600 + t[1] * 60 + t[2] + t[3] / 1000
        end = t[4] * 3600 + t[5] * 60 + t[6] + t[7] / 1000
        out.append((start, end, " / ".join(lines[1:])))
    return out


def test_sdh_captions_name_the_off_screen_speaker_and_carry_the_sounds(chief, tmp_path):
    pid = new_project(chief, tmp_path, access_board())
    r = json.loads(chief("render", pid, "--json").stdout)
    srt, vtt = cues(r["files"]["srt"], vtt=False), cues(r["files"]["vtt"], vtt=True)
    for got in (srt, vtt):
        print("\n".join(f"{a:6.3f} {b:6.3f} {t}" for a, b, t in got))
        texts = [t for _, _, t in got]
        first = texts[0]
        # the scene's cue starts and the shot's sounds start, above the first line: tags on their own caption line
        assert first.startswith("[music swells] [rain lashing] [thunder] / ")  # no room tone
        assert "KEEPER: The lamp is lit tonight." in first  # the speaker changes within the shot: named
        assert "WHALE: I hear you, old man." in texts  # off screen: named
        s2 = next(t for t in texts if "Sing, then." in t)
        assert s2.startswith("[waves] / ") and "[rain" not in s2  # the rain goes on: not said again
        assert "KEEPER: Sing, then." in s2  # the keeper is not in shot s2: off screen
        assert any(t == "[music stops]" for t in texts)  # scene b has no cue
        stop = next(c for c in got if c[2] == "[music stops]")
        assert stop[0] == pytest.approx(16.0, abs=0.01) and stop[1] <= 20.0
    assert [(round(a, 3), round(b, 3)) for a, b, _ in srt] == [(round(a, 3), round(b, 3)) for a, b, _ in vtt]
    # the film carries them too, as a soft subtitle stream a player turns on: the sidecar's cues, read from the mp4
    stream, text = soft_subtitles(r["film"])
    print(stream)
    assert "mov_text" in stream and "(eng)" in stream
    sidecar = open(r["files"]["srt"], encoding="utf-8").read()
    assert srt_cues(text) == srt_cues(sidecar) and len(srt_cues(text)) == len(srt)

    chief("film", pid, "--burn-subtitles")  # burned in when asked: the SDH captions drawn on the picture
    burned = json.loads(chief("render", pid, "--json").stdout)
    assert burned["rendered"] == 0 and not burned["stream_copied"]
    assert soft_subtitles(burned["film"]) == ("", "")  # drawn on the picture: not a second time as a stream
    (drawn, fps), (clean, _) = read_frames(burned["film"]), read_frames(r["film"])

    def changed(t: float) -> int:  # pixels the burn-in changed
        i = round(t * fps)
        return int((np.abs(drawn[i].astype(int) - clean[i].astype(int)).max(axis=2) > 60).sum())

    print(
        f"burned-in pixels: {changed(1.0)} at 1 s (tags and a line), {changed(17.0)} at 17 s ([music stops]), "
        f"{changed(19.5)} at 19.5 s (no caption)"
    )
    assert changed(1.0) > 20 and changed(17.0) > 20 and changed(19.5) == 0
    chief("film", pid, "--no-burn-subtitles", "--captions", "plain")  # plain: the off-screen speaker named, no tags
    plain = json.loads(chief("render", pid, "--json").stdout)
    assert plain["rendered"] == 0
    texts = [t for _, _, t in cues(plain["files"]["srt"], vtt=False)]
    assert texts[:2] == [KEEPER, f"Whale: {WHALE}"] and not any("[" in t for t in texts)


def tracks(film: str) -> list[str]:
    """The audio streams as ffmpeg lists them (the listing ffprobe prints too), each with its metadata lines."""
    err = subprocess.run([ffmpeg_exe(), "-hide_banner", "-i", film], capture_output=True, text=True).stderr
    blocks = re.split(r"\n(?=\s*Stream #)", err)
    return [b for b in blocks if re.match(r"\s*Stream #0:\d+.*Audio:", b)]


def runs(mask: np.ndarray, frame: float = 0.02) -> list[tuple[float, float]]:
    """(start, end) in seconds of each run of True frames."""
    edges = np.flatnonzero(np.diff(np.r_[0, mask.astype(np.int8), 0]))
    return [(round(a * frame, 2), round(b * frame, 2)) for a, b in zip(edges[::2], edges[1::2])]


def test_the_described_film_has_a_second_track_whose_descriptions_fall_between_the_lines(chief, tmp_path):
    pid = new_project(chief, tmp_path, access_board())
    out = json.loads(chief("film", pid, "--audio-description", "--json").stdout)
    assert out["film"]["audio_description"] is True and out["changed"] is True
    r = json.loads(chief("render", pid, "--json").stdout)
    a = r["audio"]
    print(f"sound: {a}")
    assert a["descriptions_said"] == 2 and a["descriptions_flagged"] == []
    audio = tracks(r["film"])
    print("\n".join(audio))
    assert len(audio) == 2
    main, described = audio
    assert "(eng)" in main and "(default)" in main and re.search(r"name\s*: Main", main)
    assert "(eng)" in described and "(descriptions)" in described and "(default)" not in described
    assert re.search(r"name\s*: Audio description", described)

    one = decode(r["film"], RATE)  # the first audio stream
    two = np.frombuffer(
        subprocess.run(
            [
                ffmpeg_exe(),
                "-v",
                "error",
                "-i",
                r["film"],
                "-map",
                "0:a:1",
                "-ac",
                "1",
                "-ar",
                str(RATE),
                "-f",
                "f32le",
                "-",
            ],
            capture_output=True,
            check=True,
        ).stdout,
        "<f4",
    )
    n = min(len(one), len(two))
    assert n == pytest.approx(20.0 * RATE, abs=0.05 * RATE)
    diff = two[:n] - one[:n]
    # where lines are said: the dialogue stem the render keeps, in 20-ms frames above -50 dBFS
    stem = decode(r["files"]["dialogue"], RATE)[:n]
    frame = RATE // 50
    m = n // frame
    spoken = np.mean(np.square(stem[: m * frame].reshape(m, frame)), axis=1) > 10 ** (-50 / 10)
    energy = np.mean(np.square(diff[: m * frame].reshape(m, frame)), axis=1)
    inside, outside = energy[spoken], energy[~spoken]
    print(
        f"spoken {spoken.sum() * 0.02:.2f} s; difference: {10 * np.log10(inside.sum() + 1e-20):.1f} dB inside the "
        f"lines, {10 * np.log10(outside.sum() + 1e-20):.1f} dB outside; {inside.sum() / energy.sum():.5f} of it inside"
    )
    assert spoken.sum() * 0.02 > 2.0  # three lines are said (2.8 s)
    # Where each line is said the two tracks differ only by the AAC coder's noise (each track is coded on its own),
    # measured 19-33 dB under the line (identical before the first description). A description is said some 6 dB under
    # the lines here, so one said over a seventh of a line or more brings the difference within 15 dB of it. (The share
    # of the difference inside the lines, bounded before, moved with the coder's noise: 0.45-1.35%.)
    level = np.mean(np.square(one[: m * frame].reshape(m, frame)), axis=1)
    for a, b in runs(spoken):
        line = slice(round(a / 0.02), round(b / 0.02))
        under = 10 * np.log10(level[line].mean() / (energy[line].mean() + 1e-20))
        print(f"line {a:.2f}-{b:.2f} s: the tracks differ {under:.1f} dB under it")
        assert under > 15.0, (a, b, under)
    said = [(a, b) for a, b in runs(energy > 0.01 * energy.max()) if b - a >= 0.2]  # 20 dB under its loudest
    print(f"the difference is loud in {said}")
    assert said and all(0.0 <= t0 and t1 <= 16.0 for t0, t1 in said)  # s1 and s2 describe; s3 has no description
    assert any(t0 < 10.0 for t0, _ in said) and any(t0 >= 10.0 for t0, _ in said)  # each in its own shot
    voiced = np.concatenate([diff[round(t0 * RATE) : round(t1 * RATE)] for t0, t1 in said])
    print(
        f"the descriptions at {rms_db(voiced):.1f} dBFS, the lines at {rms_db(one[:n][np.repeat(spoken, frame)[:n]]):.1f}"
    )
    assert rms_db(voiced) > -30  # heard: the narrator's voice, not the duck's ramps alone

    again = json.loads(chief("render", pid, "--json").stdout)  # cached like lines
    assert again["audio"]["descriptions_voiced"] == 0 and again["audio"]["descriptions_said"] == 2


def test_a_description_too_long_for_its_gap_is_flagged_and_left_out(chief, tmp_path):
    board = access_board(long_description=True)
    board = board.model_copy(update={"film": board.film.model_copy(update={"audio_description": True})})
    assert [w.split(":")[0] for w in board.description_warnings()] == ["shot s2 description"]
    pid = new_project(chief, tmp_path, board)
    res = chief("render", pid, "--json")
    assert re.search(
        r"warning: shot s2 description: 32 words take about 12.8 s to say; the longest gap .* holds", res.stderr
    )
    r = json.loads(res.stdout)
    flagged = r["audio"]["descriptions_flagged"]
    print(flagged)
    assert r["audio"]["descriptions_said"] == 1 and len(flagged) == 1 and flagged[0].startswith("shot s2 description")
    assert "left out of the described track" in flagged[0]
    text = chief("render", pid)
    assert "described track: 1 description(s) said" in text.stdout and "1 left out: shot s2 description" in text.stdout


def test_editing_a_description_renders_no_picture_and_revoices_only_it(chief, tmp_path):
    pid = new_project(chief, tmp_path, access_board())
    chief("film", pid, "--audio-description")
    first = json.loads(chief("render", pid, "--json").stdout)
    assert first["audio"]["descriptions_said"] == 2  # voiced now or by another test (the sound cache is shared)
    out = json.loads(chief("edit", pid, "s2", "description=The whale sinks back into the dark.", "--json").stdout)
    assert out["storyboard"]["scenes"][0]["shots"][1]["description"] == "The whale sinks back into the dark."
    r = json.loads(chief("render", pid, "--json").stdout)
    assert (r["rendered"], r["reused"]) == (0, 3)  # no picture re-rendered
    assert r["audio"]["descriptions_voiced"] == 1 and r["audio"]["lines_voiced"] == 0
    assert r["film_sha256"] != first["film_sha256"]
    bad = chief("edit", pid, "s2", "description=" + "x" * 501, ok=False)
    assert bad.exit_code != 0 and "description" in bad.output + bad.stderr


def test_a_storyboard_from_before_descriptions_loads(tmp_path):
    board = access_board().model_dump(mode="json")
    for shot in (s for sc in board["scenes"] for s in sc["shots"]):
        del shot["description"]
    del board["film"]["captions"], board["film"]["audio_description"]
    p = tmp_path / "old.json"
    p.write_text(json.dumps(board))
    old = load_storyboard(p)
    assert all(s.description == "" for s in old.shots())
    assert old.film.captions == "sdh" and old.film.audio_description is False
    assert Storyboard.model_validate(board).description_warnings() == []
