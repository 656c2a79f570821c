"""The scene picker of Render, Screening and Revise, through the app's API: one scene renders, is critiqued and
refined on its own; the page shows the scope and how the critics watched (escaped)."""

from __future__ import annotations

import pytest
from gradio_client.exceptions import AppError

from app.ui.scenes import choices, coverage_html
from storage.files import load_storyboard
from storage.schema import Unseen
from tests.ui.conftest import TINY_BOARD

TWO_SCENES = (
    TINY_BOARD
    + """\
  - scene_id: b
    title: Night <b>storm</b>
    shots:
      - {shot_id: s4, prompt: The keeper lights the lamp, duration: 1, seed: 4}
      - {shot_id: s5, prompt: The whale sings under the beam, duration: 1, seed: 5}
"""
)


@pytest.fixture
def pid(studio, tmp_path):
    p = tmp_path / "two.yaml"
    p.write_text(TWO_SCENES)
    return studio.create_from_storyboard(load_storyboard(p), panel=["film_critic", "teen_scroller"]).project_id


def test_a_scene_rendered_critiqued_and_refined_from_the_page(client, studio, pid):
    _, film, summary, strip, shots, _ = client.predict(pid, 1, "b", api_name="/render")
    assert [r[1] for r in shots["data"]] == ["s4", "s5"]
    assert "**3** shot(s) not in this film yet" in summary and film["value"].endswith("-v1.mp4")
    _, cards, _ = client.predict(pid, 1, "b", api_name="/critique")
    assert "watched scene b" in cards and "watched 2/2 shots · measured offline" in cards
    assert all(c.scope.scenes == ["b"] for c in studio.critiques(pid))
    studio.add_note(pid, "more light", shot_id="s4")
    prop = client.predict(pid, 1, "b", api_name="/refine")
    assert prop["scope"] == {"scenes": ["b"], "shots": []}
    with pytest.raises(AppError, match="no scene 'zz'"):
        client.predict(pid, 1, "zz", api_name="/render")


def test_the_picker_labels_and_the_coverage_line_is_escaped(studio, pid):
    """The picker's labels are text (a dropdown shows them as text); the coverage goes into HTML, escaped."""
    board = studio.version(pid).storyboard
    labels = [label for label, _ in choices(board)]
    assert labels == ["whole film", "a · Dawn · 3 shots · 0:00–0:03", "b · Night <b>storm</b> · 2 shots · 0:03–0:05"]
    studio.render(pid)
    item = studio.critique(pid, scope=studio.scope(pid, scene="b"))[0]
    item = item.model_copy(
        update={
            "coverage": item.coverage.model_copy(update={"unseen": [Unseen(shot_id="s4", why="<script>x</script>")]})
        }
    )
    html = coverage_html(item)
    assert "<script>" not in html and "&lt;script&gt;" in html and "watched scene b" in html


def test_the_endpoint_limits_are_shown_in_settings(client):
    out = client.predict("", None, api_name="/settings")
    assert list(out[12:16]) == [8, 4000, 32768, False]  # images per request, output tokens, context, video input
