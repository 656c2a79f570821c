"""A shot card's ▶ on a line, without a browser: the storyboard's `play_line` server function (as the built app
wires it) voices the line through the render's own voicing and cache — a line the render spoke is played from the
cache (the same WAV, nothing voiced), an edited line is voiced anew in its character's voice — and refuses in one
line what it cannot play (a name not in the bible, an empty or over-long line, a request it cannot read)."""

from __future__ import annotations

import json
from urllib.parse import unquote

import pytest

from app.ui.screens.storyboard import playing
from generation.audio.pcm import RATE, decode, rms_db
from storage.files import dump_storyboard
from storage.schema import Character, Line, Scene, Shot, Storyboard

SAID = "The tide turns at midnight, keeper."  # words of this test only: the session's sound cache is shared
EDITED = "The tide turns at midnight, keeper, and the light must burn until the morning comes."


def board() -> Storyboard:
    return Storyboard(
        title="Lines",
        characters=[
            Character(name="Keeper", description="old man in a yellow coat"),
            Character(name="Whale", description="a grey whale"),
        ],
        scenes=[
            Scene(
                scene_id="a",
                shots=[
                    Shot(
                        shot_id="s1",
                        prompt="A lighthouse at night",
                        duration=4.0,
                        seed=1,
                        characters=["Whale"],
                        dialogue=[Line(character="Whale", line=SAID, delivery="slowly")],
                    ),  # fmt: skip
                ],
            )
        ],
        fps=8,
        width=64,
        height=36,
    )


@pytest.fixture
def rendered(chief, make_studio, tmp_path):
    """(studio, project id) of a project whose film was rendered once (its line voiced by the render)."""
    p = tmp_path / "story.yaml"
    p.write_text(dump_storyboard(board()))
    pid = json.loads(chief("--json", "new", "--storyboard", str(p)).stdout)["project"]
    r = json.loads(chief("render", pid, "--json").stdout)
    assert r["audio"]["lines_voiced"] + r["audio"]["lines_reused"] == 1
    return make_studio(), pid


def lines(studio) -> set[str]:
    """The voiced lines in the sound cache (where the render keeps them)."""
    return {p.name for p in (studio.config.sound_dir / "lines").rglob("*.wav")}


def served(url: str):
    return unquote(url.split("file=", 1)[1])


def test_a_line_the_render_spoke_plays_from_the_cache_and_an_edited_line_is_voiced(rendered):
    studio, pid = rendered
    play = playing(studio)
    before = lines(studio)
    got = play({"project": pid, "version": 1, "character": "Whale", "line": SAID, "delivery": "slowly"})
    assert got["made"] is False, got  # the render's WAV: nothing voiced
    assert lines(studio) == before
    heard = decode(served(got["url"]), RATE)
    spoken = studio._audio.say(studio.version(pid).storyboard, "Whale", SAID, "slowly")  # the render's own entry
    assert not spoken.made and spoken.path.name in before
    assert spoken.path.read_bytes() == open(served(got["url"]), "rb").read()
    assert 1.0 < len(heard) / RATE < 6.0 and rms_db(heard) > -35.0

    again = play([{"project": pid, "version": 1, "character": "Whale", "line": SAID, "delivery": "slowly"}])
    assert (again["made"], again["url"], lines(studio)) == (False, got["url"], before)

    edited = play({"project": pid, "version": 1, "character": "Whale", "line": EDITED, "delivery": "slowly"})
    assert edited["made"] is True and len(lines(studio)) == len(before) + 1
    longer = decode(served(edited["url"]), RATE)
    assert len(longer) > 1.8 * len(heard)  # 15 words, not 6
    other = play({"project": pid, "version": 1, "character": "Keeper", "line": SAID, "delivery": "slowly"})
    assert other["made"] is True and other["url"] != got["url"]  # another character's voice
    assert len(studio.versions(pid)) == 1  # playing keeps nothing


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"character": "Ghost", "line": SAID},
            "no character 'Ghost' in this storyboard (characters: Keeper, Whale): the film speaks that line in the "
            "narrator's voice",
        ),
        ({"character": "Whale", "line": "   "}, "the line is empty: type what they say first"),
        ({"character": "Whale", "line": "x" * 2001}, "the storyboard sent a line it cannot play: reload the page"),
        ({"character": "Whale", "line": SAID, "delivery": "y" * 201}, "the storyboard sent a line it cannot play"),
        ({"character": "Whale", "line": SAID, "version": "two"}, "the storyboard sent a line it cannot play"),
        ({"character": "Whale", "line": SAID, "version": 9}, "no version"),
        ({"character": "Whale", "line": SAID, "project": "nope"}, "nope"),
    ],
)
def test_what_a_line_cannot_be_played_for_is_refused_in_one_line(make_studio, data, message):
    studio = make_studio()
    pid = studio.create_from_storyboard(board()).project_id
    before = lines(studio)
    got = playing(studio)({"project": pid, "version": 1, **data})
    assert message in got.get("error", ""), got
    assert "\n" not in got["error"] and "url" not in got
    assert len(studio.versions(pid)) == 1
    assert lines(studio) == before  # nothing voiced
