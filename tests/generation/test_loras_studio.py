"""A creator's LoRA through the Studio on the tiny random-weight Wan (issue 32): checked against the model before
anything is written, applied to its character's shots only (their clip keys change, the others' do not), carried
by a project archive into another data folder."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest

from app.errors import StudioError
from generation.diffusers_backend import DiffusersBackend
from generation.tiny import build_wan_lora
from tests.conftest import tiny_board

pytestmark = pytest.mark.slow


def keys(st, pid):
    v = st.version(pid)
    board = v.storyboard
    return {s.shot_id: st._clips.key(st._clips.request_for(board, i)) for i, s in enumerate(board.shots())}


def test_a_lora_is_checked_applied_to_its_shots_and_survives_an_archive(folders, make_studio, tmp_path):
    backend = DiffusersBackend(folders("wan"))
    st = make_studio(backend=backend, steps=2)
    board = tiny_board(2, duration=0.5).model_copy(update={"width": 16, "height": 16})  # the Keeper is in s2
    pid = st.create_from_storyboard(board).project_id
    before = keys(st, pid)
    media = st.media.root

    misfit = build_wan_lora(tmp_path / "misfit.safetensors", seed=5, head_dim=16)
    with pytest.raises(StudioError) as err:
        st.lora_add(pid, misfit, character="Keeper")
    message = str(err.value)
    assert "\n" not in message and message.startswith("LoRA refused: misfit.safetensors does not fit the model: ")
    assert st.version(pid).number == 1 and not list(media.rglob("*.safetensors"))  # nothing written

    look = build_wan_lora(tmp_path / "keeper.safetensors", seed=5)
    v, checked = st.lora_add(pid, look, character="Keeper", scale=0.8)
    assert checked == f"fits {backend.model}: 16 layers, rank 4"
    assert (v.number, v.storyboard.loras[0].name, v.storyboard.loras[0].scale) == (2, "keeper", 0.8)
    after = keys(st, pid)
    assert after["s1"] == before["s1"] and after["s2"] != before["s2"]  # only the Keeper's shot
    render = st.render(pid)
    assert [s.key for s in render.shots] == [after["s1"], after["s2"]]

    out = st.export_project(pid, tmp_path / "film.chief.zip")
    other = make_studio(backend=backend, steps=2, home=tmp_path / "elsewhere")
    moved = other.import_project(out)
    new = moved.project_id
    assert moved.storyboard.loras == v.storyboard.loras
    assert other.media.find(v.storyboard.loras[0].sha256) is not None  # the file came with it
    assert keys(other, new) == after  # the same clips: the LoRA acts there as here
