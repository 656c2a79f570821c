"""Music and effects models in the render: tiny random-weight ACE-Step and Stable Audio pipelines (the real classes,
saved to a folder, loaded through the product's loader) make the scene's cue and a shot's sounds for a Studio render
of the animatic; the film's music stem is the model's cue (compared with the temp score), a second render makes
nothing again, the label names the models, and a model that cannot make the role is refused in one line."""

from __future__ import annotations

import numpy as np
import pytest

from app.errors import StudioError
from generation.audio import score
from generation.audio.families import make
from generation.audio.pcm import RATE, decode, read_frames
from generation.pipelines import PipelineModel
from tests.app.test_sound import sound_board
from tests.audio.conftest import audio_folders  # noqa: F401  (the session's tiny audio pipelines)

pytestmark = pytest.mark.slow


def board_with_sounds():
    board = sound_board()
    scenes = list(board.scenes)
    shots = [s.model_copy(update={"sounds": "rain on the window"}) for s in scenes[1].shots]
    scenes[1] = scenes[1].model_copy(update={"shots": shots})
    return board.model_copy(update={"scenes": scenes})


def correlation(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a - a.mean(), b - b.mean()
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_the_cue_and_the_sounds_are_the_models_and_a_second_render_makes_nothing(make_studio, audio_folders, tmp_path):  # noqa: F811
    from app.services.audio import _seed

    music, effects = audio_folders("ace_step"), audio_folders("stable_audio")
    st = make_studio(home=tmp_path / "h", sound_cache=tmp_path / "sound", music_model=music, effects_model=effects)
    v = st.create_from_storyboard(board_with_sounds())
    r = st.render(v.project_id)
    a = r.audio
    assert a is not None
    print(a.describe())
    assert "ACE-Step (ace_step) music" in a.label and "Stable Audio (stable_audio) effects" in a.label
    assert "temp score" not in a.label and "temp effects" not in a.label
    assert "ACE-Step (ace_step) music" in a.describe()
    assert (a.cues_made, a.cues_reused) == (2, 0)  # scene a's cue, shot s3's sounds

    # The cue stored is what the model makes for the scene's words, length and seed (at 48 kHz), not the temp score
    cue = st.config.sound_dir / "music"
    (stored,) = cue.glob("*.wav")
    samples, rate = read_frames(stored)  # in the model's own channels (ACE-Step makes two)
    scene = v.storyboard.scenes[0]
    direct = make(PipelineModel(music, device="cpu"), scene.music, 8.0, _seed(scene.scene_id)).samples
    direct = direct.reshape(len(direct), -1)
    temp = score.compose(scene.music, 8.0, _seed(scene.scene_id)).samples
    assert rate == RATE and len(samples) == len(direct) == 8 * RATE and samples.shape[1] == direct.shape[1]
    assert np.abs(samples - np.clip(direct, -1, 1)).max() < 1e-3  # 16-bit WAV of the model's output
    stem = decode(st.ctx.media.path(r.media["music"], "wav"), RATE)[: 8 * RATE]  # the stereo stem folded to mono
    window = slice(RATE, 7 * RATE)  # inside the scene's fades
    folded = direct.mean(axis=1)
    with_model, with_temp = correlation(stem[window], folded[window]), correlation(stem[window], temp[window])
    print(f"music stem vs the model's cue {with_model:.3f}, vs the temp score {with_temp:.3f}")
    assert with_model > 0.6 and abs(with_temp) < 0.2  # ducked under the lines: not a copy

    again = st.render(v.project_id)
    assert again.audio is not None and (again.audio.cues_made, again.audio.cues_reused) == (0, 2)
    assert again.audio.label == a.label
    assert again.media["music"] == r.media["music"]


def test_a_long_cue_is_made_in_pieces_of_the_length_asked(audio_folders):  # noqa: F811
    """Tiny Stable Audio makes at most 2 s a call: an 8-s cue is crossfaded pieces, exactly 8 s at 48 kHz."""
    model = PipelineModel(audio_folders("stable_audio"), device="cpu")
    sound = make(model, "low cello", 8.0, seed=5, steps=2)
    assert sound.rate == RATE and len(sound.samples) == 8 * RATE and sound.label == "Stable Audio (stable_audio)"
    assert np.isfinite(sound.samples).all()
    quarters = [np.abs(q).max() for q in np.array_split(sound.samples, 4)]
    assert min(quarters) > 0  # every part of it was made, none is padding
    assert np.array_equal(make(model, "low cello", 8.0, seed=5, steps=2).samples, sound.samples)


@pytest.mark.parametrize(
    "setting, folder, message",
    [
        ("music_model", "audioldm2", r"^music_model: AudioLDM2 \(audioldm2\) makes effects, not music \(use "),
        ("effects_model", "ace_step", r"^effects_model: ACE-Step \(ace_step\) makes music, not effects \(use "),
        ("music_model", None, r"^music_model: model '.*nowhere' not found"),
    ],
)
def test_a_model_that_cannot_make_it_is_refused_in_one_line(
    make_studio,
    audio_folders,  # noqa: F811
    tmp_path,
    setting,
    folder,
    message,
):
    path = audio_folders(folder) if folder else str(tmp_path / "nowhere")
    st = make_studio(home=tmp_path / "h", sound_cache=tmp_path / "sound", **{setting: path})
    v = st.create_from_storyboard(board_with_sounds())
    with pytest.raises(StudioError, match=message) as e:
        st.render(v.project_id)
    assert "\n" not in str(e.value)
    assert st.render_info(v.project_id) is None  # nothing recorded
    assert not (tmp_path / "sound" / "music").exists()  # no temp score made in its place
