"""The backend raises on shot k of n: finished shots are kept, the version has no film, a retry renders
only what is missing."""

from __future__ import annotations

import pytest

from app.studio import RenderFailed
from generation.animatic import AnimaticBackend
from tests.fault.conftest import assert_sound, board, count, make_studio


class FailingBackend(AnimaticBackend):
    """The real animatic backend, except that one shot id crashes (as a GPU out-of-memory would)."""

    def __init__(self, fail_on: str) -> None:
        self.fail_on, self.calls = fail_on, []

    def render(self, request, out, progress=None, cancel=None):
        self.calls.append(request.shot_id)
        if request.shot_id == self.fail_on:
            raise RuntimeError("CUDA out of memory (simulated)")
        return super().render(request, out, progress, cancel)


@pytest.mark.parametrize("k", [0, 2, 4])
def test_backend_raises_on_shot_k(home, k):
    n = 5
    failing = FailingBackend(fail_on=f"s{k}")
    studio = make_studio(home, backend=failing)
    pid = studio.create_from_storyboard(board(n)).project_id

    with pytest.raises(RenderFailed) as exc:
        studio.render(pid)
    msg = str(exc.value)
    assert f"shot {k + 1}/{n} (s{k}) failed" in msg and "CUDA out of memory" in msg and "\n" not in msg
    assert failing.calls == [f"s{i}" for i in range(k + 1)]  # it stopped at the failing shot
    assert count(home, "clips") == k  # shots before k are kept
    assert studio.render_info(pid) is None and count(home, "renders") == 0  # no film until every shot exists
    assert_sound(home, pid)

    healthy = make_studio(home)  # a fresh process's view: same home, the real backend
    info = healthy.render(pid)
    assert (info.rendered, info.reused) == (n - k, k)
    assert [s.status for s in info.shots] == ["reused"] * k + ["rendered"] * (n - k)
    assert healthy.film_path(info).is_file() and count(home, "clips") == n
    assert_sound(home, pid)
