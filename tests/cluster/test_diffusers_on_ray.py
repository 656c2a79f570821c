"""The tiny LTX pipeline rendered through a Ray worker gives the same clips as one process.

One worker: what is proved here is a diffusers pipeline on a worker, its image-to-video included (the conditioning
frame travels with the request, as bytes, whichever worker takes it). A pool of two, the chains shared between them
and the clips rendered once cluster-wide are proved with the animatic in test_cluster.py; a second worker here cost
~10 s of CPU (its own import of torch and diffusers, its own pipeline) and proved nothing more."""

from __future__ import annotations

import pytest

from app.config import load_config
from app.studio import Studio
from tests.conftest import tiny_board

pytestmark = pytest.mark.slow


def test_tiny_ltx_on_ray_matches_one_process(ray_cluster, tmp_path, tiny_models):
    from app.cluster import RayBackend

    model = tiny_models("ltx")
    # 3 shots of 1 s at 32x32, 8 fps, 2 steps; shot 2 continues from shot 1 (image-to-video on the worker)
    board = tiny_board(3, shot_overrides={1: {"continuity": True}}).model_copy(update={"width": 32, "height": 32})
    settings = {"narration": False, "agents": "offline", "backend": "diffusers", "model": str(model), "steps": 2}
    single = Studio(load_config({"home": tmp_path / "single", **settings}, environ={}))
    want = single.render(single.create_from_storyboard(board).project_id)
    cfg = load_config({"home": tmp_path / "ray", **settings}, environ={})
    rb = RayBackend(cfg, num_workers=1, worker_cpus=0.5)
    try:
        assert rb.label.startswith("diffusers · LTXPipeline") and rb.label.endswith("on Ray (1 worker: CPU)")
        assert rb.supports_continuity
        st = Studio(cfg, backend=rb)
        got = st.render(st.create_from_storyboard(board).project_id)
    finally:
        rb.close()
    assert [(r.key, r.sha256) for r in got.shots] == [(r.key, r.sha256) for r in want.shots]
    assert got.rendered == 3
