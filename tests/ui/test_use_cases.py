"""A use-case behaves the same from the CLI and the web app: both call the Studio's one implementation.

`replace_take` is driven through `chief takes P SHOT --replace` (click's runner) and through the storyboard card's
"replace" handler of the built web app, on two data folders set up alike; the outcomes are compared. Before the
Studio owned it, the CLI picked the newest take even when the new seed came out as an earlier take's clip (a
backend whose picture does not depend on the seed), making a version that went back to an old take.
"""

from __future__ import annotations

import json

import gradio as gr
import pytest
from click.testing import CliRunner

from app.cli import main
from generation.animatic import AnimaticBackend
from tests.conftest import steps, tiny_board


def _studio(home):
    from app.config import load_config
    from app.studio import Studio

    return Studio(load_config({"home": home, "narration": False, "agents": "offline"}, environ={}))


def _card_handler(studio):
    """The storyboard card's handler, as the built web app wires it."""
    from app.ui import create_app

    demo = create_app(studio)
    return next(f.fn for f in demo.fns.values() if getattr(f.fn, "__name__", "") == "card_action")


def _via_web(studio, pid, shot_id) -> tuple[str, int | None]:
    """(message, version the page follows) after the card's replace button (the job followed to its end)."""
    handler = _card_handler(studio)
    evt = gr.EventData(None, {"shot_id": shot_id, "action": "replace"})
    try:
        frames = steps(handler(pid, studio.version(pid).number, "", evt))
    except gr.Error as e:
        return f"error: {e.message}", None
    progress, _, number, _, text, _ = frames[-1]
    if "data-state='failed'" in progress:
        return "error: " + progress.split("</b> · ", 1)[1].rsplit(" · ", 1)[0], None
    return text, number


def _via_cli(home, pid, shot_id) -> tuple[str, int | None]:
    out = CliRunner().invoke(main, ["--home", str(home), "--json", "takes", pid, shot_id, "--replace"])
    if out.exit_code != 0:
        return out.stderr.strip(), None
    data = json.loads(out.stdout)
    return data["picked"], data["version"] if "version" in data else None


class SeedlessAnimatic(AnimaticBackend):
    """The animatic as a backend whose picture ignores the seed (every seed of a shot is one clip)."""

    def resolve(self, request):
        return super().resolve(request).with_(seed=0)


def _set_up(home, board, render: bool, seedless: bool):
    studio = _studio(home)
    pid = studio.create_from_storyboard(board).project_id
    if render:
        studio.render(pid)
    if seedless:  # a take of the shot as it is, then the shot's seed changed: its clip is still that take's
        studio.render_takes(pid, "s4", 1)
        moved = studio.version(pid).storyboard.model_copy(deep=True)
        moved.shot("s4").seed = 99
        studio.save_storyboard(pid, moved, None)
    return studio, pid


def _outcome(studio, pid, shot_id):
    """What the project holds after the action: versions, and the new version's shot, takes and log line."""
    nodes = studio.versions(pid)
    v = studio.version(pid)
    takes = studio.shot_takes(pid, shot_id, v.number)
    return {
        "versions": len(nodes),
        "seed": v.storyboard.shot(shot_id).seed,
        "message": v.message,
        "takes": [(t.number, t.seed) for t in takes.takes],
        "picked": next((t.number for t in takes.takes if t.id == takes.picked), None),
    }


@pytest.mark.parametrize(
    "board,render,seedless,shot,expect",
    [
        (tiny_board(4), True, False, "s4", "pick take 2 of s4"),  # a new take, picked into v2
        (  # a continuity shot whose previous clip was never rendered: refused, nothing written
            tiny_board(3, shot_overrides={1: {"continuity": True}}),
            False,
            False,
            "s2",
            "error: shot s2 continues from s1: render v1 first",
        ),
        (  # the new seed's clip is take 1's: refused, not a silent pick of take 1
            tiny_board(4),
            True,
            True,
            "s4",
            "error: the new take of s4 came out as an earlier one: nothing to replace it with",
        ),
    ],
)
def test_replace_take_is_the_same_from_the_cli_and_the_web(
    tmp_path, monkeypatch, board, render, seedless, shot, expect
):
    if seedless:
        monkeypatch.setattr("app.factory.make_backend", lambda config: SeedlessAnimatic())
    cli_studio, cli_pid = _set_up(tmp_path / "cli", board, render, seedless)
    web_studio, web_pid = _set_up(tmp_path / "web", board, render, seedless)
    before = len(cli_studio.versions(cli_pid))
    cli_studio.db.close()  # the CLI opens the folder itself

    cli_said, _ = _via_cli(tmp_path / "cli", cli_pid, shot)
    web_said, web_version = _via_web(web_studio, web_pid, shot)

    cli_after = _outcome(_studio(tmp_path / "cli"), cli_pid, shot)
    web_after = _outcome(web_studio, web_pid, shot)
    assert cli_after == web_after
    if expect.startswith("error: "):
        assert cli_said == web_said == expect
        assert cli_after["versions"] == before  # nothing written
    else:
        assert cli_after["message"].startswith(expect) and cli_after["versions"] == before + 1
        assert web_version == 2 and cli_after["picked"] == 2 and cli_after["seed"] == cli_after["takes"][1][1]


def test_set_picture_and_film_options_are_the_same_from_the_cli_and_the_web(tmp_path, client, studio):
    """The picture (size, rate) and the film options: the same versions from `chief picture` / `chief film` and the
    Settings / storyboard handlers; asking again for what a version has makes no version from either."""
    home = tmp_path / "cli"
    cli_studio = _studio(home)
    cli_pid = cli_studio.create_from_storyboard(tiny_board(2)).project_id
    cli_studio.db.close()
    web_pid = studio.create_from_storyboard(tiny_board(2)).project_id

    def cli(*args):
        out = CliRunner().invoke(main, ["--home", str(home), "--json", *args])
        assert out.exit_code == 0, out.output
        return json.loads(out.stdout)

    def counts():
        return len(_studio(home).versions(cli_pid)), len(studio.versions(web_pid))

    for expect in ((2, 2), (2, 2)):  # the second time nothing changes: no version from either
        made = cli("picture", cli_pid, "--size", "640x480", "--fps", "12")
        client.predict(web_pid, studio.version(web_pid).number, "4:3 · 640×480", 12, api_name="/set_picture")
        assert counts() == expect and made["version"] == 2
    for expect in ((3, 3), (3, 3)):
        made = cli("film", cli_pid, "--crossfade", "0.5", "--title-card")
        value = client.predict(web_pid, studio.version(web_pid).number, api_name="/load_storyboard")[0]
        client.predict(web_pid, studio.version(web_pid).number, value, True, 2, 0.5, False, api_name="/save_storyboard")
        assert counts() == expect and made["version"] == 3

    a, b = _studio(home).version(cli_pid).storyboard, studio.version(web_pid).storyboard
    assert (a.width, a.height, a.fps, a.film.crossfade, a.film.title_card) == (640, 480, 12, 0.5, True)
    assert a == b
