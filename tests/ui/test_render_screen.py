"""The Render screen while a first render runs: it says it is rendering, not "Not rendered yet"."""

from __future__ import annotations

import threading
import time


def test_a_first_render_says_rendering_not_not_rendered_yet(studio, client, board_file):
    from tests.ui.test_api import create

    pid, v = create(client, board_file)
    assert client.predict(pid, v, api_name="/render_info")[2].startswith("Not rendered yet")
    gate, real = threading.Event(), studio.render

    def held(*args, **kwargs):  # the real render, once the test has seen the page while it runs
        assert gate.wait(timeout=300)
        return real(*args, **kwargs)

    studio.render = held
    job = client.submit(pid, v, api_name="/render")
    deadline = time.monotonic() + 120
    while not job.outputs() and time.monotonic() < deadline:  # the first frame: the render is held, still running
        time.sleep(0.05)
    first = job.outputs()[0]
    print("while rendering:", first[2])
    assert "Rendering…" in first[2] and "Not rendered" not in first[2]
    gate.set()
    done = job.result()
    assert "rendered **3**" in done[2]
