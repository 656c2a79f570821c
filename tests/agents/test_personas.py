"""The persona library and the prompt templates."""

from __future__ import annotations

import jinja2
import pytest

import prompts
from agents.personas import builtin_personas, load_persona_file, persona_to_yaml
from storage.schema import DIMENSIONS

TASTES = {"shot_seconds", "motion", "brightness", "contrast", "captions", "flash_sensitivity", "continuity", "patience"}


def test_builtin_personas_are_complete_and_distinct():
    ps = builtin_personas()
    assert len(ps) >= 6
    for pid, p in ps.items():
        assert p.id == pid and p.source == "builtin"
        assert p.who and p.viewing_history and p.loves and p.hates and p.notices_first and p.voice
        assert set(p.weights) == set(DIMENSIONS) and p.tastes.model_fields_set == TASTES  # every taste set in the file
        assert all(0 <= v <= 1 for k, v in p.tastes.model_dump().items() if k != "shot_seconds")
    # distinct: no two personas share the same weights or tastes
    assert len({tuple(p.weights.values()) for p in ps.values()}) == len(ps)
    assert len({tuple(sorted(p.tastes.model_dump().items())) for p in ps.values()}) == len(ps)
    assert ps["teen_scroller"].tastes.shot_seconds < ps["film_critic"].tastes.shot_seconds
    assert ps["captions_reader"].tastes.flash_sensitivity == 1.0


def test_yaml_round_trip(tmp_path):
    p = builtin_personas()["genre_fan"].model_copy(update={"id": "my_fan", "source": "custom", "name": "Mine"})
    path = tmp_path / "my_fan.yaml"
    path.write_text(persona_to_yaml(p))
    assert load_persona_file(path) == p


def test_bad_persona_file_names_the_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: X\nwho: y\nweights: {charisma: 2}\n")
    with pytest.raises(ValueError, match=r"bad.yaml.*charisma"):
        load_persona_file(path)
    path.write_text("id: other\nname: X\nwho: y\n")
    with pytest.raises(ValueError, match="must match the file name"):
        load_persona_file(path)


def test_templates_are_strict():
    with pytest.raises(jinja2.UndefinedError):
        prompts.render("planner_user.j2", idea="x")
    assert "Target length: 2 minute(s) = 120 seconds" in prompts.render(
        "planner_user.j2", idea="x", minutes=2, seconds=120, n_shots=24, n_scenes=4
    )
