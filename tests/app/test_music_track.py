"""A creator's own track: `chief music P --scene S FILE` plays it over the scene instead of the cue, `--film` under
the whole film, `--clear` takes it away; heard in the film's music stem (its own frequency), labelled "uploaded
track", carried by an archive to another data folder; a file that is not audio is refused in one line with
nothing saved or stored."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from app.cli import main
from generation.audio.pcm import RATE, decode, rms_db
from generation.video_io import run_ffmpeg
from tests.app.test_sound import project, render, sound_board, window  # noqa: F401  (the project fixture)


def tone(path, hz: float, seconds: float):
    run_ffmpeg(["-y", "-f", "lavfi", "-i", f"sine=frequency={hz}:sample_rate=44100:duration={seconds}", str(path)])
    return str(path)


def peak_hz(samples: np.ndarray) -> float:
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(len(samples))))
    return float(np.argmax(spectrum) * RATE / len(samples))


def media_files(home) -> set[str]:
    return {p.name for p in (home / "media").rglob("*.*")}


def versions(chief, project) -> list[int]:  # noqa: F811
    return [v["number"] for v in json.loads(chief("--json", "log", project).stdout)["versions"]]


def test_a_scene_track_replaces_its_cue_and_a_film_track_plays_under_everything(chief, project, tmp_path):  # noqa: F811
    render(chief, project)
    out = json.loads(chief("--json", "music", project, "--scene", "a", tone(tmp_path / "a.wav", 440, 6.0)).stdout)
    assert (out["version"], out["changed"]) == (2, True) and len(out["track"]) == 64
    r = render(chief, project)
    a = r["audio"]
    print(a)
    assert "uploaded track" in a["label"] and "temp score" not in a["label"] and a["cues_made"] + a["cues_reused"] == 0
    assert r["rendered"] == 0  # no picture again
    stem = decode(r["files"]["music"], RATE)
    print(f"scene a's music peaks at {peak_hz(window(stem, 1.0, 5.0)):.1f} Hz")
    assert peak_hz(window(stem, 1.0, 5.0)) == pytest.approx(440, abs=2)  # the creator's tone, not the cello cue
    assert rms_db(window(stem, 6.5, 7.5)) < -80  # the 6-s track ends inside the scene's 8 s: silence, no loop
    assert rms_db(window(stem, 8.5, 11.5)) < -80  # scene b has no music

    same = json.loads(chief("--json", "music", project, "--scene", "a", str(tmp_path / "a.wav")).stdout)
    assert (same["version"], same["changed"]) == (2, False)  # the same track again: no version

    chief("music", project, "--film", tone(tmp_path / "film.flac", 330, 20.0))
    r = render(chief, project)
    stem = decode(r["files"]["music"], RATE)
    assert peak_hz(window(stem, 1.0, 5.0)) == pytest.approx(330, abs=2)  # the film's track wins over the scene's
    assert peak_hz(window(stem, 8.5, 11.5)) == pytest.approx(330, abs=2) and rms_db(window(stem, 8.5, 11.5)) > -40

    chief("music", project, "--film", "--clear")
    chief("music", project, "--scene", "a", "--clear")
    r = render(chief, project)
    assert "temp score" in r["audio"]["label"] and "uploaded track" not in r["audio"]["label"]
    assert versions(chief, project) == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scene", "zz", "GOOD"], "error: no scene 'zz' in this storyboard (scenes: a, b)"),
        (
            ["--scene", "a", "TEXT"],
            "error: track refused: notes.wav: not an audio file (a text file; CHIEF reads WAV, FLAC",
        ),
        (["--film", "--scene", "a", "GOOD"], "Error: say where: --scene SCENE or --film"),
        (["--film"], "Error: give a FILE, or --clear"),
    ],
)
def test_refusals_are_one_line_and_save_nothing(chief, project, tmp_path, args, message):  # noqa: F811
    good, text = tone(tmp_path / "good.wav", 440, 1.0), tmp_path / "notes.wav"
    text.write_text("RIFF? no, just words pretending to be a WAV file\n" * 50)
    before = media_files(chief.home)
    res = chief("music", project, *[{"GOOD": good, "TEXT": str(text)}.get(a, a) for a in args], ok=False)
    assert res.exit_code != 0 and message in res.stderr, res.stderr
    assert len([ln for ln in res.stderr.strip().splitlines() if ln.startswith(("error", "Error"))]) == 1
    assert versions(chief, project) == [1] and media_files(chief.home) == before


def test_an_archive_carries_the_track(chief, project, tmp_path):  # noqa: F811
    chief("music", project, "--scene", "a", tone(tmp_path / "a.wav", 440, 6.0))
    r = render(chief, project)
    archive = tmp_path / "p.chief.zip"
    chief("export", project, "-o", str(archive))
    runner = CliRunner()
    other = tmp_path / "elsewhere"
    res = runner.invoke(main, ["--home", str(other), "import", str(archive), "--json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    pid = json.loads(res.stdout)["id"]
    shown = runner.invoke(main, ["--home", str(other), "--json", "show", pid], catch_exceptions=False)
    track = json.loads(shown.stdout)["version"]["storyboard"]["scenes"][0]["music_track"]
    assert len(track) == 64 and list((other / "media").rglob(f"{track}.flac"))  # the FLAC came along
    status = runner.invoke(main, ["--home", str(other), "--json", "render", pid], env={"CHIEF_NARRATION": "0"})
    again = json.loads(status.stdout)
    assert (again["rendered"], again["reused"]) == (0, 3) and "uploaded track" in again["audio"]["label"]
    assert again["film_sha256"] == r["film_sha256"]  # the same film, mixed from the same track
