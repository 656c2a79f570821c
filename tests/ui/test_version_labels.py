"""A version in the tree is labelled with a word of what it changed ("lines", "sounds & music"), not "edit"."""

from __future__ import annotations

import re

from storage.schema import Line
from tests.ui.conftest import TINY_BOARD


def test_edits_are_labelled_with_what_they_changed(studio, tmp_path, client):
    from storage.files import load_storyboard

    p = tmp_path / "b.yaml"
    p.write_text(TINY_BOARD)
    pid = studio.create_from_storyboard(load_storyboard(p)).project_id
    board = studio.version(pid).storyboard
    board.scenes[0].shots[0].dialogue = [Line(character="Keeper", line="Light the lamp.")]
    v2 = studio.save_storyboard(pid, board, 1, "storyboard edit")[0].number
    board.scenes[0].shots[1].sounds = "gulls, surf"
    board.scenes[0].shots[2].sounds = "thunder"
    board.scenes[0].music = "low strings"
    v3 = studio.save_storyboard(pid, board, v2, "storyboard edit")[0].number
    board.scenes[0].shots[0].prompt = "A lighthouse at dusk"
    board.scenes[0].shots = board.scenes[0].shots[:2]
    v4 = studio.save_storyboard(pid, board, v3, "storyboard edit")[0].number
    words = studio.change_words(pid, [1, v2, v3, v4])
    assert words == {1: "", v2: "lines", v3: "sounds & music", v4: "picture & shot removed"}

    svg = client.predict(pid, v4, "overall", api_name="/history")[0]  # the History screen's graph
    labels = dict(re.findall(r"data-version='(\d+)'.*?<text class='kind'[^>]*>([^<]*)<", svg))
    print(labels)
    assert labels == {
        "1": "import",
        str(v2): "lines",
        str(v3): "sounds &amp; music",
        str(v4): "picture &amp; shot removed",
    }

    from click.testing import CliRunner

    from app.cli import main

    log = CliRunner().invoke(main, ["--home", str(studio.config.home), "log", pid])
    assert log.exit_code == 0, log.output
    assert re.search(rf"v{v2} .* storyboard edit \(lines\)", log.output) and "(sounds & music)" in log.output
