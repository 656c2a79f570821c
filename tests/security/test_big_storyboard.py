"""#34.7: a huge storyboard is refused before the expensive work. A 3.7 MB board (300 shots × 12 lines of 1,000
characters) took 15.6 s of CPU before its refusal: PyYAML's Python scanner read every character, then every field
was validated, then the caps refused it. Now libyaml reads the text (storage/parsing.py) and the caps are checked
on the parsed values (storage/files.py `_Outline`), before the storyboard is validated field by field."""

from __future__ import annotations

import json

import pytest
import yaml

from storage.files import StoryboardFileError, load_storyboard
from storage.schema import Limits, Storyboard
from tests.security.conftest import chief, one_line_error


def board(shots: int = 300, lines: int = 12, chars: int = 1000, duration: float = 5.0, **top) -> dict:
    said = ("the sea keeps what it takes " * (chars // 28 + 1))[:chars]
    return {
        "title": "Huge",
        **top,
        "scenes": [
            {
                "scene_id": f"sc{k}",
                "shots": [
                    {
                        "shot_id": f"s{k}_{i}",
                        "prompt": "A lighthouse",
                        "duration": duration,
                        "dialogue": [{"line": said} for _ in range(lines)],
                    }
                    for i in range(shots // 10)
                ],
            }
            for k in range(10)
        ],
    }


def write(tmp_path, data: dict, suffix: str):
    path = tmp_path / f"huge.{suffix}"
    path.write_text(json.dumps(data) if suffix == "json" else yaml.safe_dump(data, width=10**6))
    return path


@pytest.fixture
def no_field_validation(monkeypatch):
    """Fails the test if the storyboard is validated field by field, or if PyYAML's Python scanner reads it."""
    scanned = []

    def validate(*args, **kwargs):
        raise AssertionError("the storyboard was validated before its caps were checked")

    monkeypatch.setattr(Storyboard, "model_validate", validate)
    original = yaml.scanner.Scanner.fetch_more_tokens
    monkeypatch.setattr(yaml.scanner.Scanner, "fetch_more_tokens", lambda self: scanned.append(1) or original(self))
    yield
    assert scanned == [], f"PyYAML's Python scanner ran {len(scanned)} times"


@pytest.mark.parametrize("suffix", ["yaml", "json"])
@pytest.mark.parametrize(
    ("data", "refusal"),
    [
        (board(), "a 25.0-minute film is over the limit CHIEF_MAX_FILM_MINUTES=20"),
        (board(shots=320, duration=1.0, lines=1), "320 shots is over the limit CHIEF_MAX_SHOTS=300"),
        (board(shots=10, lines=13, chars=40), "has 13 lines is over the limit CHIEF_MAX_SHOT_LINES=12"),
        (board(shots=10, duration=45, lines=0), "lasts 45 s is over the limit CHIEF_MAX_SHOT_SECONDS=20"),
        (board(shots=10, lines=0, fps=60), "60 fps is over the limit CHIEF_MAX_FPS=30"),
    ],
)
def test_a_storyboard_over_a_cap_is_refused_before_it_is_validated(
    tmp_path, no_field_validation, suffix, data, refusal
):
    path = write(tmp_path, data, suffix)
    with pytest.raises(StoryboardFileError) as e:
        load_storyboard(path, limits=Limits())
    assert str(e.value).startswith(f"{path}: ") and refusal in str(e.value), str(e.value)


def test_the_huge_board_is_one_line_and_writes_nothing(tmp_path):
    home = tmp_path / "home"
    path = write(tmp_path, board(), "yaml")
    assert path.stat().st_size > 3_600_000
    line = one_line_error(chief(home, "new", "--storyboard", str(path)))
    assert "huge.yaml: a 25.0-minute film is over the limit CHIEF_MAX_FILM_MINUTES=20" in line, line
    assert json.loads(chief(home, "projects", "--json").stdout) == []


def test_a_board_within_the_caps_still_loads(tmp_path):
    data = board(shots=20, lines=2, chars=60, duration=3.0)
    for suffix in ("yaml", "json"):
        loaded = load_storyboard(write(tmp_path, data, suffix), limits=Limits())
        assert len(loaded.shots()) == 20 and loaded.shots()[0].dialogue[1].line.startswith("the sea keeps")
