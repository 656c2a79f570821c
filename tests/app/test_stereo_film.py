"""The film's sound is stereo, listened to by numbers on the rendered mp4: its audio streams (the mix and the
described track) are two channels; the line's window is centred (L/R correlation near 1, balanced within half a
dB) and the music and rain before it are wide (correlation clearly under 1, side energy); the film meets its
loudness target and ceiling by ebur128 over both channels; `chief film --channels mono` makes a one-channel film
with no picture rendered again; the screening room's soloed dialogue stays centred; a creator's stereo track keeps its two channels; and the film's ceiling check
lowers both channels alike."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from app.services.audio import mix_stems
from generation.audio.loudness import measure
from generation.audio.pcm import RATE, decode, read_frames, write_wav
from generation.audio.stereo import image
from generation.video_io import ffmpeg_exe
from storage.schema import Character, Line, Scene, Shot, Storyboard
from tests.app.test_access import new_project, tracks

pytestmark = pytest.mark.slow  # real Piper lines

LINE = "The stereo test keeps the keeper in the middle."


def stereo_board() -> Storyboard:
    return Storyboard(
        title="Stereo",
        characters=[Character(name="Keeper", description="old man in a yellow coat")],
        scenes=[
            Scene(
                scene_id="a",
                music="slow strings and harp",
                shots=[
                    Shot(
                        shot_id="s1",
                        prompt="Rain on a lighthouse window",
                        duration=4.0,
                        seed=1,
                        sounds="rain on the roof",
                        description="Rain runs down the glass.",
                    ),
                    Shot(
                        shot_id="s2",
                        prompt="The keeper by the lamp",
                        duration=4.0,
                        seed=2,
                        characters=["Keeper"],
                        dialogue=[Line(character="Keeper", line=LINE)],
                    ),
                ],
            )
        ],
        fps=8,
        width=64,
        height=36,
    )


def spoken_span(dialogue: np.ndarray, after: float) -> slice:
    """The samples from the first to the last 20-ms frame of the dialogue stem over -50 dBFS after `after` s, 0.1 s
    inside each end."""
    frame = RATE // 50
    m = len(dialogue) // frame
    power = np.mean(np.square(dialogue[: m * frame].reshape(m, -1)), axis=1)
    loud = np.flatnonzero(power > 1e-5)
    loud = loud[loud * frame >= after * RATE]
    return slice(int(loud[0]) * frame + RATE // 10, int(loud[-1] + 1) * frame - RATE // 10)


def audio_stream(film: str, k: int) -> np.ndarray:
    """Audio stream `k` of the film as `(n, 2)` samples (the listing says it is stereo)."""
    out = subprocess.run(
        [ffmpeg_exe(), "-v", "error", "-i", film, "-map", f"0:a:{k}", "-ar", str(RATE), "-f", "f32le", "-"],
        capture_output=True,
        check=True,
    ).stdout
    return np.frombuffer(out, "<f4").reshape(-1, 2)


def test_the_film_is_stereo_with_the_line_centred_and_mono_on_request(chief, tmp_path):
    pid = new_project(chief, tmp_path, stereo_board())
    chief("film", pid, "--audio-description")
    r = json.loads(chief("render", pid, "--json").stdout)
    listed = tracks(r["film"])
    print("\n".join(listed))
    assert len(listed) == 2 and all(re.search(r"Audio: aac.*, stereo,", t) for t in listed)  # mix and described
    film = decode(r["film"], RATE, stereo=True)
    assert film.shape[1] == 2
    dialogue, _ = read_frames(r["files"]["dialogue"])
    assert dialogue.shape[1] == 2 and np.array_equal(dialogue[:, 0], dialogue[:, 1])
    line = spoken_span(dialogue[:, 0], 4.0)
    said = image(film[line])
    before = image(film[round(0.5 * RATE) : round(3.5 * RATE)])  # music and rain, no line
    print(f"over the line ({line.start / RATE:.2f}-{line.stop / RATE:.2f} s): {said}; before it: {before}")
    assert said.correlation >= 0.95 and abs(said.balance_db) < 0.5
    assert before.correlation < 0.85 and before.side_db > -15 and abs(before.balance_db) < 1.0
    described = audio_stream(r["film"], 1)
    assert image(described[round(0.5 * RATE) : round(3.5 * RATE)]).correlation < 0.9  # the mix under it is wide
    heard = measure(r["film"])  # ebur128 over both channels of the film's own AAC
    print(f"film: {heard}; reported: {r['audio']}")
    assert abs(heard.integrated_lufs + 14.0) <= 1.0 and heard.true_peak_dbtp <= -1.0
    assert (r["audio"]["loudness_lufs"], r["audio"]["true_peak_dbtp"]) == (heard.integrated_lufs, heard.true_peak_dbtp)
    stems = {k: Path(r["files"][k]) for k in ("dialogue", "music", "effects")}  # the screening room's solo
    solo = decode(
        mix_stems(Path(r["film"]), stems, ["dialogue"], heard.integrated_lufs, tmp_path / "solo.mp4"), RATE, stereo=True
    )
    alone = image(solo[line])
    print(f"the dialogue soloed: {alone}")
    # centred: the channels the same but for the AAC coder's own noise (each film's Piper take differs a little, and
    # with it what the coder keeps apart: 0.9989-0.9994 measured here over the line alone and in the mix)
    assert alone.correlation > 0.995 and abs(alone.balance_db) < 0.1

    out = json.loads(chief("film", pid, "--channels", "mono", "--json").stdout)
    assert out["film"]["channels"] == "mono" and out["changed"] is True
    mono = json.loads(chief("render", pid, "--json").stdout)
    assert mono["rendered"] == 0 and mono["audio"]["lines_voiced"] == 0  # the sound only, nothing voiced again
    listed = tracks(mono["film"])
    assert len(listed) == 2 and all(re.search(r"Audio: aac.*, mono,", t) for t in listed)
    assert decode(mono["film"], RATE, stereo=True).shape[1] == 1
    assert read_frames(mono["files"]["music"])[0].shape[1] == 1
    heard = measure(mono["film"])
    print(f"mono film: {heard}")
    assert abs(heard.integrated_lufs + 14.0) <= 1.0 and heard.true_peak_dbtp <= -1.0


def peak_hz(samples: np.ndarray) -> float:
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(len(samples))))
    return float(np.argmax(spectrum) * RATE / len(samples))


def test_a_creators_stereo_track_keeps_its_two_channels(chief, tmp_path):
    pid = new_project(chief, tmp_path, stereo_board())
    t = np.arange(round(8.0 * RATE)) / RATE
    pair = np.stack([0.3 * np.sin(2 * np.pi * 440 * t), 0.3 * np.sin(2 * np.pi * 660 * t)], axis=1)
    chief("music", pid, "--film", str(write_wav(tmp_path / "pair.wav", pair.astype(np.float32), RATE)))
    r = json.loads(chief("render", pid, "--json").stdout)
    assert "uploaded track" in r["audio"]["label"]
    stem, _ = read_frames(r["files"]["music"])
    film = decode(r["film"], RATE, stereo=True)
    span = slice(round(0.5 * RATE), round(3.5 * RATE))  # before the line: the track and the rain
    found = [[round(peak_hz(x[span, c])) for c in (0, 1)] for x in (stem, film)]
    print(f"left and right peak at: stem {found[0]} Hz, film {found[1]} Hz")
    for left, right in found:
        assert left == pytest.approx(440, abs=2) and right == pytest.approx(660, abs=2)


def test_the_ceiling_check_lowers_both_channels_alike(studio, tmp_path):
    """A film whose AAC goes over the ceiling in its right channel only (the left 20 dB under it) is cut again
    lower: measured over both channels, both lowered by one gain, still two channels."""
    from app.services.audio import FilmSound
    from app.services.film import FilmAssembler
    from generation.base import CancelToken
    from generation.video_io import run_ffmpeg
    from storage.records import RenderAudio

    t = np.arange(4 * RATE) / RATE
    square = np.sign(np.sin(2 * np.pi * 997 * t)) * 0.99  # peaky in AAC: its true peak over full scale
    pair = np.stack([square * 0.1, square], axis=1).astype(np.float32)
    mix = write_wav(tmp_path / "mix.wav", pair, RATE)
    film = tmp_path / "film.mp4"

    def cut(main, second):
        run_ffmpeg(["-y", "-i", str(main), "-c:a", "aac", "-b:a", "128k", str(film)])

    cut(mix, None)
    before = measure(film)
    assert before.true_peak_dbtp > -1.0  # the test's premise: over the ceiling
    summary = RenderAudio(
        lines_voiced=0, lines_reused=0, cues_made=0, cues_reused=0, loudness_lufs=-10.0, true_peak_dbtp=-3.0,
        lra_lu=0.0, target="web", label="test",
    )  # fmt: skip
    assembler = FilmAssembler(studio.ctx, None, None)
    sound = assembler._under_ceiling(FilmSound(mix, summary, {}), None, film, tmp_path, cut, CancelToken())
    after = decode(film, RATE, stereo=True)
    levels = [20 * np.log10(np.sqrt(np.mean(np.square(after[RATE:-RATE, c])))) for c in (0, 1)]
    print(f"before {before}; after {sound.summary.true_peak_dbtp} dBTP, channels at {levels}")
    assert after.shape[1] == 2 and sound.summary.true_peak_dbtp <= -1.0
    assert levels[1] - levels[0] == pytest.approx(20.0, abs=0.5)  # one gain for both: the image kept
