"""What a reference change re-renders, said before it runs (issue 25, item 3), on a backend that takes references:
tiny random-weight Wan with Wan VACE, loaded through the backend's own code (nothing renders: keys only)."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pytest
from PIL import Image

from generation.diffusers_backend import DiffusersBackend
from tests.conftest import tiny_board

pytestmark = pytest.mark.slow


def test_only_a_change_of_the_first_reference_re_renders_the_characters_shots(folders, make_studio, tmp_path):
    backend = DiffusersBackend(folders("wan"), vace_model=folders("wan_vace"))
    assert backend.supports_references
    st = make_studio(backend=backend)
    board = tiny_board(4).model_copy(update={"width": 32, "height": 32})
    pid = st.create_from_storyboard(board).project_id
    for s in board.shots():  # every key can be computed: no count comes from a refusal
        st._clips.key(st._clips.request_for(board, board.shots().index(s), continuity=False))
    first = st.clips_affected(pid, "reference", name="Keeper")  # the Keeper is in s2 and s4
    assert (first.shots, first.rendered) == (["s2", "s4"], [])
    assert first.describe() == "A new reference for Keeper will re-render 2 of 4 clips (none of them rendered yet)"
    assert st.reference_effects(pid)[("Keeper", False)]["add"] == first  # the panel's count is the query's
    picture = tmp_path / "keeper.png"
    Image.fromarray(np.random.default_rng(1).integers(0, 255, (32, 32, 3), dtype=np.uint8)).save(picture)
    v = st.add_reference(pid, "Keeper", picture)
    assert v.draft
    assert st.clips_affected(pid, "reference", name="Keeper").shots == []  # a second one conditions nothing
    assert st.clips_affected(pid, "clear-references", name="Keeper").shots == ["s2", "s4"]
