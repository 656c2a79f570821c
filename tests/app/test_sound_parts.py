"""The film's sound costs what changed: the mix is made in parts (a scene each), cached by what they hold; a one-line
edit re-mixes the scene holding the line and reuses the others, and the film still meets its target (ebur128 on the
rendered film)."""

from __future__ import annotations

import json

import pytest

from generation.audio.loudness import measure
from storage.files import dump_storyboard
from storage.schema import Character, Line, Scene, Shot, Storyboard

pytestmark = pytest.mark.slow  # real Piper lines

# Words no other test speaks: the sound cache is shared by the session, and the counts below start from nothing.
WORDS = ["The parts test hears the ferry bell at noon.", "Parts test: the nets are dry.", "Parts test, the last tide."]


def three_scenes() -> Storyboard:
    def shot(k, i, who):
        return Shot(
            shot_id=f"s{k}{i}",
            prompt=f"A quay, scene {k}, view {i}",
            duration=3.0,
            seed=10 * k + i,
            characters=[who],
            dialogue=[Line(character=who, line=f"{WORDS[k]} ({i})")],
            sounds="gulls over the water" if i else "rain on the quay",
        )

    return Storyboard(
        title="Parts",
        characters=[Character(name="Ada", description="a ferry pilot"), Character(name="Pip", description="a boy")],
        scenes=[
            Scene(scene_id=f"sc{k}", music="slow strings, parts test", shots=[shot(k, 0, "Ada"), shot(k, 1, "Pip")])
            for k in range(3)
        ],
        fps=8,
        width=64,
        height=36,
    )


def test_a_one_line_edit_remixes_the_scene_holding_the_line_only(chief, tmp_path):
    p = tmp_path / "story.yaml"
    p.write_text(dump_storyboard(three_scenes()))
    project = json.loads(chief("--json", "new", "--storyboard", str(p)).stdout)["project"]
    first = json.loads(chief("render", project, "--json").stdout)["audio"]
    assert (first["parts_mixed"], first["parts_reused"]) == (3, 0)  # a part a scene, all mixed
    chief("edit", project, "s11", "line.1=Parts test: the nets are wet again.")
    second = json.loads(chief("render", project, "--json").stdout)
    a = second["audio"]
    assert a["lines_voiced"] == 1
    assert (a["parts_mixed"], a["parts_reused"]) == (1, 2)  # scene 1 only
    heard = measure(second["film"])
    assert abs(heard.integrated_lufs - -14.0) <= 0.5 and heard.true_peak_dbtp <= -1.0
    again = json.loads(chief("render", project, "--json").stdout)["audio"]
    assert (again["parts_mixed"], again["parts_reused"]) == (0, 3)
