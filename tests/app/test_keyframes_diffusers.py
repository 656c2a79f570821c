"""The image-first workflow with real (tiny, random-weight) models through the Studio and the product's loading
code: FLUX draws the references and keyframes, LTX animates the approved keyframes."""

from __future__ import annotations

import pytest

from tests.conftest import tiny_board

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def models(tiny_models):
    return {name: tiny_models(name) for name in ("flux", "ltx")}


@pytest.fixture
def st(tmp_path, models):
    from app.config import load_config
    from app.studio import Studio

    studio = Studio(
        load_config(
            {"home": tmp_path / "home", "narration": False, "agents": "offline", "steps": 2},
            environ={
                "CHIEF_VIDEO_BACKEND": "diffusers",
                "CHIEF_VIDEO_MODEL": models["ltx"],
                "CHIEF_IMAGE_MODEL": models["flux"],
            },
        )
    )
    yield studio
    studio.db.close()


def test_flux_keyframes_animated_by_ltx_and_a_reroll_re_renders_one_shot(st, models):
    board = tiny_board(3).model_copy(update={"width": 32, "height": 32})
    pid = st.create_from_storyboard(board).project_id
    assert st.status().image_model == models["flux"]
    ref = st.generate_reference(pid, "Keeper")
    (sha,) = ref.storyboard.characters[0].references
    assert st.image_path(sha).is_file() and ref.kind == "reference"
    made = st.render_keyframes(pid)
    assert made.rendered == 3 and made.label.startswith("diffusers images · FluxPipeline")
    by_shot = {k.shot_id: k for k in made.keyframes}
    assert (by_shot["s1"].width, by_shot["s1"].height) == (32, 32) and by_shot["s2"].model == models["flux"]
    first = st.render(pid)
    assert first.rendered == 3 and "LTXPipeline" in first.label
    st.reroll_keyframe(pid, "s3")
    again = st.render(pid)
    assert [s.status for s in again.shots] == ["reused", "reused", "rendered"]
