"""The diffusers backend through the product's own path: CHIEF_VIDEO_MODEL = a saved tiny pipeline folder."""

from __future__ import annotations

import pytest

from app.config import load_config
from app.studio import Studio
from generation.video_io import read_frames
from storage.schema import Scene, Shot, Storyboard

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ltx_folder(tiny_models):
    return tiny_models("ltx")


def board() -> Storyboard:
    shots = [
        Shot(shot_id=f"s{i}", prompt=p, duration=1.0, seed=i, continuity=(i == 3))
        for i, p in enumerate(["a red cat", "a blue dog", "the dog runs on", "a green bird"], 1)
    ]
    return Storyboard(title="Tiny LTX", scenes=[Scene(scene_id="a", shots=shots)], fps=8, width=32, height=32)


def test_studio_renders_with_a_model_folder_from_the_environment(ltx_folder, tmp_path):
    env = {
        "CHIEF_VIDEO_BACKEND": "diffusers",
        "CHIEF_VIDEO_MODEL": str(ltx_folder),
        "CHIEF_STEPS": "2",
        "CHIEF_NARRATION": "0",
    }
    st = Studio(load_config({"home": tmp_path / "home"}, environ=env))
    assert st.status().backend_label.startswith("diffusers · LTXPipeline")
    pid = st.create_from_storyboard(board()).project_id

    first = st.render(pid)
    assert (first.rendered, first.reused) == (4, 0)
    assert first.backend == "diffusers" and first.model == str(ltx_folder)
    frames, _ = read_frames(st.film_path(first))
    assert len(frames) == 4 * 9  # 1 s at 8 fps -> 9 frames under LTX's 8k+1 rule
    assert frames[0].shape == (32, 32, 3)

    edited = board()
    edited.scenes[0].shots[1].prompt = "a blue dog, sleeping"  # s3 continues from s2
    st.save_storyboard(pid, edited, base=1)
    second = st.render(pid)
    assert [s.status for s in second.shots] == ["reused", "rendered", "rendered", "reused"]

    again = Studio(load_config({"home": tmp_path / "home2"}, environ=env))  # same seeds -> same clips
    pid2 = again.create_from_storyboard(board()).project_id
    assert [s.sha256 for s in again.render(pid2).shots] == [s.sha256 for s in first.shots]
    st.db.close()
    again.db.close()
