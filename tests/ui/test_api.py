"""The app's API endpoints, called with gradio_client against a launched app."""

from __future__ import annotations

import json
import re

import pytest
from gradio_client import handle_file
from gradio_client.exceptions import AppError


def create(client, board_file):
    pid, v, msg, *_ = client.predict(handle_file(str(board_file)), api_name="/create_from_file")
    assert msg.startswith("Created “Tiny Lighthouse”")
    return pid, v


def test_create_render_reuses_unchanged_shots(client, board_file, studio):
    pid, v = create(client, board_file)
    assert v == 1 and studio.projects()[0].id == pid
    _, film, summary, strip, shots, _ = client.predict(pid, v, api_name="/render")
    assert "rendered **3**, reused **0**" in summary and "animatic" in summary
    assert [r[2] for r in shots["data"]] == ["rendered"] * 3
    # the player's film is named for the film (a download keeps the name), not for its hash; no lines: no captions
    assert film["value"].endswith("/Tiny-Lighthouse-v1.mp4") and film["subtitles"] is None
    assert strip.count("data-shot=") == 3

    board = client.predict(pid, v, api_name="/load_storyboard")[0]
    data = json.loads(board)
    assert all(s["thumb"] for s in data["scenes"][0]["shots"])  # every shot has its clip's thumbnail
    data["scenes"][0]["shots"][1]["prompt"] = "A whale tail in silver water, morning light"  # s2
    nv, _, msg = client.predict(pid, v, json.dumps(data), False, 2, 0, False, api_name="/save_storyboard")
    assert nv == 2 and "Saved as v2" in msg and "Branched" not in msg
    _, _, summary2, _, shots2, _ = client.predict(pid, nv, api_name="/render")
    assert "rendered **1**, reused **2**" in summary2
    assert [r[2] for r in shots2["data"]] == ["reused", "rendered", "reused"]
    assert client.predict(pid, nv, "s2", api_name="/clip").endswith(".mp4")


def test_a_version_that_changes_no_pixels_shares_its_parents_film(client, board_file, studio):
    pid, v = create(client, board_file)
    client.predict(pid, v, api_name="/render")
    v2, _ = client.predict(pid, v, ["film_critic", "teen_scroller"], api_name="/set_panel")
    board = studio.version(pid, v2).storyboard
    v3, _ = studio.save_storyboard(pid, board.model_copy(update={"title": "A new title"}), v2)  # no title card
    _, film, summary, *_ = client.predict(pid, v3.number, api_name="/render_info")
    assert "shares the film of **v1**" in summary and film["value"].endswith("/A-new-title-v3.mp4")
    assert studio.render_info(pid, v3.number).version == 1
    crits = client.predict(pid, v3.number, api_name="/critique")[1]  # critics can watch it: no "render first"
    assert "panel" in crits
    opts = board.film.model_copy(update={"title_card": True})
    v4, _ = studio.save_storyboard(pid, board.model_copy(update={"title": "A new title", "film": opts}), v3.number)
    assert studio.render_info(pid, v4.number) is None  # a title card changes pixels: it needs its own film


def test_errors_are_one_line_messages(client):
    with pytest.raises(AppError) as e:
        client.predict("p_missing", 1, api_name="/render")
    assert str(e.value) == "no project 'p_missing'"
    with pytest.raises(AppError, match="write an idea first"):
        client.predict("  ", 1, "", api_name="/create_project")
    with pytest.raises(AppError, match="open or create a project first"):
        client.predict("", None, "", "", "", {"headers": [], "data": []}, api_name="/save_story")


def test_save_on_an_old_version_branches_and_says_so(client, board_file, studio):
    pid, v = create(client, board_file)
    chars = {"headers": ["name", "description"], "data": [["Keeper", "an old keeper, yellow coat"]]}
    v2, msg = client.predict(pid, v, "Tiny Lighthouse", "first tab", "teal", chars, api_name="/save_story")
    assert v2 == 2 and "Branched" not in msg
    v3, msg = client.predict(pid, v, "Tiny Lighthouse", "second tab", "teal", chars, api_name="/save_story")
    assert v3 == 3 and "Branched" in msg
    assert studio.version(pid, 2).storyboard.logline == "first tab"  # nothing lost
    assert studio.version(pid, 3).storyboard.characters[0].name == "Keeper"
    assert studio.version(pid, 3).parent_number == 1


def test_invalid_storyboard_edit_leaves_project_unchanged(client, board_file, studio):
    pid, v = create(client, board_file)
    data = json.loads(client.predict(pid, v, api_name="/load_storyboard")[0])
    data["scenes"][0]["shots"][0]["camera"] = "spin_wildly"  # not a camera move
    with pytest.raises(AppError, match="camera"):
        client.predict(pid, v, json.dumps(data), False, 2, 0, False, api_name="/save_storyboard")
    assert len(studio.versions(pid)) == 1


def test_note_refine_accept_compare(client, board_file, studio):
    pid, v = create(client, board_file)
    client.predict(pid, v, api_name="/render")
    _, msg = client.predict(pid, v, "Make the storm scarier", "s3", api_name="/add_note")
    assert msg == "Note added." and [(n.shot_id, n.text) for n in studio.notes(pid, v)] == [
        ("s3", "Make the storm scarier")
    ]
    prop = client.predict(pid, v, api_name="/refine")
    assert prop["proposal"]["edits"], prop
    res = client.predict(
        pid, prop["id"], [1], {"1": "Night storm, towering black waves, lightning"}, api_name="/accept"
    )
    assert (res["version"]["number"], res["version"]["parent_number"], res["branched"], res["applied"]) == (
        2,
        1,
        False,
        [1],
    )
    film_a, film_b, diff, scores = client.predict(pid, 1, 2, api_name="/compare")
    assert film_a["value"].endswith("-v1.mp4") and film_b["value"] is None  # v2 not rendered yet
    assert "v1 → v2" in diff and "changed" in diff
    graph = client.predict(pid, 2, "overall", api_name="/history")[0]
    assert "data-version='1'" in graph and "node current' data-version='2'" in graph


def test_handoff_zip_opens_with_otio_finds_its_media_and_carries_the_notes(client, board_file, studio, tmp_path):
    """One zip an editor opens anywhere: the cut in three formats, the clips in media/, paths relative to the zip's
    folder, the captions timed on the cut; its markers carry the creator's notes (this version's and the earlier
    ones', labelled) and the critiques of the version handed off only: an earlier version's panel watched another
    film (stale), even where a shot's clip is the same."""
    import zipfile

    import opentimelineio as otio

    from storage.schema import Line

    pid, v = create(client, board_file)
    client.predict(pid, v, api_name="/render")
    client.predict(pid, v, "Make the storm scarier", "s3", api_name="/add_note")
    client.predict(pid, v, api_name="/critique")
    v1_critics = {c.persona_name.lower() for c in studio.critiques(pid, v)}
    board = studio.version(pid, v).storyboard
    board.scenes[0].shots[2].prompt = "A calm sea at noon"  # s3 changes: v1's critics never saw its new clip
    board.scenes[0].shots[0].dialogue = [Line(character="Keeper", line="The lamp <is> lit & ready.")]
    v2 = studio.save_storyboard(pid, board, v, "s3 calmer")[0].number
    client.predict(pid, v2, api_name="/render")  # v2 is not critiqued yet
    client.predict(pid, v2, "Hold the last shot longer", None, api_name="/add_note")

    def unpack(name: str) -> tuple[dict, list[str]]:
        files = client.predict(pid, v2, api_name="/export_timeline")
        assert len(files) == 1 and files[0].endswith("Tiny-Lighthouse-v2-for-an-editor.zip")
        unpacked = tmp_path / name
        with zipfile.ZipFile(files[0]) as zf:
            names = zf.namelist()
            zf.extractall(unpacked)
        marks = {}
        for cut in ("cut.otio", "cut.edl", "cut.fcpxml"):
            clips = [
                c for t in otio.adapters.read_from_file(str(unpacked / cut)).video_tracks() for c in t.find_clips()
            ]
            assert [c.name for c in clips] == ["s1", "s2", "s3"]
            if cut != "cut.edl":  # an EDL names its clips' files, not their paths
                for c in clips:
                    url = c.media_reference.target_url
                    assert not url.startswith(("file:", "/")) and (unpacked / url).is_file(), (cut, url)
            marks[cut] = {c.name: [m.name.lower() for m in c.markers] for c in clips}
        assert not any(str(studio.config.home) in (unpacked / n).read_text() for n in ("cut.otio", "cut.fcpxml"))
        return marks, names, unpacked

    marks, names, unpacked = unpack("before")
    assert sorted(n for n in names if not n.startswith("media/")) == [
        "cut.dialogue.edl",
        "cut.edl",
        "cut.effects.edl",
        "cut.fcpxml",
        "cut.music.edl",
        "cut.otio",
        "cut.srt",
        "cut.vtt",
        "dialogue.wav",
        "effects.wav",
        "music.wav",
    ]
    assert "The lamp <is> lit & ready." in (unpacked / "cut.srt").read_text()
    assert "The lamp &lt;is&gt; lit &amp; ready." in (unpacked / "cut.vtt").read_text()
    for cut, by_shot in marks.items():
        every = [m for ms in by_shot.values() for m in ms]
        assert not any(m.startswith(tuple(v1_critics)) for m in every), (cut, every)  # v1's panel: stale
        assert "note: hold the last shot longer" in by_shot["s1"], (cut, by_shot)  # v2's note, on the film
        assert any(m.startswith("note (on v1") and "make the storm scarier" in m for m in by_shot["s3"]), (cut, by_shot)

    client.predict(pid, v2, api_name="/critique")  # now v2's own panel speaks, on every shot
    v2_critics = {c.persona_name.lower() for c in studio.critiques(pid, v2)}
    marks, _, _ = unpack("after")
    for cut, by_shot in marks.items():
        critic_on = {sid for sid, ms in by_shot.items() if any(m.startswith(tuple(v2_critics)) for m in ms)}
        assert critic_on, (cut, by_shot)
        assert not any("(on v1" in m and not m.startswith("note") for ms in by_shot.values() for m in ms)


def test_panel_and_custom_persona(client, board_file, studio):
    pid, v = create(client, board_file)
    v2, msg = client.predict(pid, v, ["film_critic", "teen_scroller"], api_name="/set_panel")
    assert studio.version(pid, v2).panel == ["film_critic", "teen_scroller"]
    yaml_text = "id: lighthouse_fan\nname: Lia\nwho: a lighthouse enthusiast\nloves: [lighthouses]\n"
    v3, msg = client.predict(pid, v2, yaml_text, api_name="/save_persona")
    assert "lighthouse_fan" in studio.version(pid, v3).panel
    with pytest.raises(AppError, match="persona YAML must be a mapping"):
        client.predict(pid, v3, "just text", api_name="/save_persona")
    with pytest.raises(AppError, match="not in the list of choices"):
        client.predict(pid, v3, ["nobody"], api_name="/set_panel")


def test_persona_builder_fills_the_editor(client):
    pytest.importorskip("agents.persona_builder")
    text = client.predict(
        "I love slow quiet films with long takes\nToo many fast cuts ruin it for me, @bob",
        "Ana",
        api_name="/build_persona",
    )
    assert "name: Ana" in text and "source: built" in text and "@bob" not in text


def test_shot_note_links_seek_to_the_films_times_with_a_title_card(client, board_file, studio):
    pid, v = create(client, board_file)
    board = studio.version(pid, v).storyboard
    opts = board.film.model_copy(update={"title_card": True, "title_seconds": 2.0})
    v2, _ = studio.save_storyboard(pid, board.model_copy(update={"film": opts}), v)
    client.predict(pid, v2.number, api_name="/render")

    def seeks(html: str) -> dict[str, str]:
        """shot id -> the time its links seek to."""
        return {s: t for t, s in re.findall(r"<a class='seek' data-t='([\d.]+)' data-shot='(\w+)'", html)}

    cards = client.predict(pid, v2.number, api_name="/critique")[1]
    _, _, strip, shown, *_ = client.predict(pid, v2.number, api_name="/screening")
    cells = {
        s: f"{float(t):.2f}" for t, s in re.findall(r"data-t='([\d.]+)' data-end='[\d.]+' data-shot='(\w+)'", strip)
    }
    assert cells["title"] == "0.00" and cells["s1"] == "2.00" and len(cells) == 4  # the title card, then 3 shots
    for html in (cards, shown):
        links = seeks(html)
        assert links and all(links[s] == cells[s] for s in links)  # where the strip puts the shot, not 2 s early
