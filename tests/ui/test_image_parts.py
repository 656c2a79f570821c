"""The image-first parts of the web app without a browser: the cards' keyframes, candidates and takes, what a card
may ask for, uploads, the references panel, the consistency table, the keyframe screening's label, the servers
list (against a real local HTTP server), and the API endpoints these screens expose."""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from gradio_client.exceptions import AppError
from PIL import Image

from tests.conftest import tiny_board


def noise(path, seed: int):
    Image.fromarray(np.random.default_rng(seed).integers(0, 255, (36, 64, 3), dtype=np.uint8)).save(path)
    return path


@pytest.fixture
def project(studio):
    return studio.create_from_storyboard(tiny_board(3)).project_id


def test_saving_the_board_keeps_the_approved_keyframes(studio, project):
    """The cards do not edit a shot's keyframe: a save (or a draft render) keeps it, a new shot has none."""
    from app.ui.board_media import card_media
    from app.ui.screens.storyboard import board_json, json_to_board

    v = studio.render_keyframes(project).version
    board = v.storyboard
    data = json.loads(board_json(board, {}, media=card_media(studio, project, v.number)))
    s1 = data["scenes"][0]["shots"][0]
    assert s1["keyframe"] and s1["thumb"] == s1["keyframe"]  # the keyframe is the card's picture
    s1["prompt"] = "A lighthouse on a rock at dusk"
    data["scenes"][0]["shots"].append({**s1, "shot_id": "new1", "isNew": True})  # a duplicate
    saved = json_to_board(board, json.dumps(data))
    assert saved.shots()[0].keyframe == board.shots()[0].keyframe and saved.shots()[0].prompt.endswith("dusk")
    assert saved.shots()[1].prompt.endswith("dusk") and saved.shots()[1].keyframe is None  # the duplicate
    assert json_to_board(board, board_json(board, {})) == board


def test_a_card_shows_its_candidates_and_takes_with_the_votes(studio, project):
    from app.ui.board_media import card_media

    studio.render_keyframes(project)
    studio.reroll_keyframe(project, "s2")
    studio.render_takes(project, "s2", 2)
    studio.vote_takes(project, "s2")
    number = studio.version(project).number
    media = card_media(studio, project, number)
    cands = media["s2"]["candidates"]
    approved = studio.version(project).storyboard.shot("s2").keyframe
    assert len(cands) == 2 and [c["on"] for c in cands] == [True, False]  # newest (approved) first
    assert cands[0]["url"].endswith(f"{approved}.png")
    assert media["s1"]["candidates"] == []  # one approved still: no strip
    takes = media["s2"]["takes"]
    assert [t["number"] for t in takes["items"]] == [1, 2, 3] and takes["can_vote"]
    panel = studio.version(project).panel
    assert takes["voted"] == len(panel)  # the offline critics score the takes alike: no votes, no preference said
    assert [t["voters"] for t in takes["items"]] == [[], [], []] and len(takes["no_preference"]) == len(panel)
    assert all(len(x["scores"]) == 3 for x in takes["no_preference"])
    assert all(t["thumb"].startswith("gradio_api/file=") and t["clip"].endswith(".mp4") for t in takes["items"])
    assert media["s1"]["takes"] is None


def test_a_card_asks_only_for_what_it_may(tmp_path):
    from app.ui.board_media import CardAction, uploaded_file

    assert CardAction.of({"shot_id": "s2", "action": "takes", "n": 3}).n == 3
    for bad in (
        {"shot_id": "s2", "action": "delete_project"},
        {"shot_id": "../s2", "action": "draw"},
        {"shot_id": "s2", "action": "takes", "n": 99},
        None,
    ):
        with pytest.raises(ValueError, match="^the storyboard sent an action it cannot ask for: reload the page$"):
            CardAction.of(bad)
    with pytest.raises(ValueError, match="choose the file again"):
        uploaded_file(str(noise(tmp_path / "elsewhere.png", 1)))  # a file outside Gradio's upload folder
    with pytest.raises(ValueError, match="choose the file again"):
        uploaded_file("/etc/passwd")


def test_an_upload_inside_gradios_folder_is_accepted(tmp_path, monkeypatch):
    from app.ui.board_media import uploaded_file

    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    (tmp_path / "gradio" / "abc").mkdir(parents=True)
    inside = noise(tmp_path / "gradio" / "abc" / "still.png", 2)
    assert uploaded_file(str(inside)) == inside
    with pytest.raises(ValueError):
        uploaded_file(str(tmp_path / "gradio" / "abc" / ".." / ".." / "outside.png"))


def test_what_a_finished_job_says_and_which_version_the_page_follows(studio, project):
    from app.ui.board_media import outcome

    kf = studio.render_keyframes(project)
    assert outcome(kf)[0] == kf.version.number and "keyframes approved for s1, s2, s3" in outcome(kf)[1]
    state = studio.render_takes(project, "s1", 1)
    assert outcome(state) == (None, outcome(state)[1], "s1")  # takes make no version; their card opens
    picked = studio.pick_take(project, "s1", state.takes[-1].id)
    number, text, shot = outcome(picked)
    assert (number, shot) == (picked.version.number, "s1") and "nothing re-renders" in text


def test_the_screening_room_labels_a_keyframe_screening(studio, project):
    from app.ui.board_media import outcome
    from app.ui.screens.screening import cards_html

    studio.render_keyframes(project)
    crits = studio.screen_keyframes(project)
    assert "Keyframe screening" in cards_html(crits, {})
    assert "screened the keyframes of v2: " in outcome(crits)[1]
    studio.render(project)
    film = studio.critique(project)
    assert "Keyframe screening" not in cards_html(film, {}) and "The panel watched v2: " in outcome(film)[1]


def test_story_save_keeps_the_references(client, studio, tmp_path):
    """The character table does not show reference images; saving the story keeps them by name."""
    pid = studio.create_from_storyboard(tiny_board(2)).project_id
    v = studio.add_reference(pid, "Keeper", noise(tmp_path / "k.png", 3)).number
    chars = {"headers": ["name", "description"], "data": [["Keeper", "old man in a yellow coat, a grey beard"]]}
    v2, _ = client.predict(pid, v, "Tiny", "A keeper and a whale", "muted", chars, api_name="/save_story")
    keeper = studio.version(pid, v2).storyboard.characters[0]
    assert keeper.description.endswith("grey beard") and len(keeper.references) == 1


def test_references_panel_and_the_table_without_a_model(client, studio, tmp_path):
    pid = studio.create_from_storyboard(tiny_board(2)).project_id
    v = studio.add_reference(pid, "Keeper", noise(tmp_path / "k.png", 4)).number
    studio.set_keyframe(pid, "s2", noise(tmp_path / "s2.png", 5), v)
    _, _, _, refs, table, _ = client.predict(pid, None, api_name="/load_references")
    subjects = json.loads(refs)["subjects"]
    assert [(s["name"], len(s["refs"])) for s in subjects] == [("Keeper", 1)]
    assert "not measured: no image-embedding model" in table and "its keyframe" in table
    assert "data-value" not in table  # no number where nothing was measured


def test_the_table_measures_with_a_model_worst_shot_first_and_escapes(make_studio, tmp_path, tiny_models):
    """A tiny CLIP image encoder: the shot drawn from another picture comes first; names are escaped."""
    from app.ui.screens.story import consistency_html

    st = make_studio(embed_model=tiny_models("clip_vision"))
    board = tiny_board(4)
    board.characters[0].name = "<img src=x>"
    for s in board.shots():
        s.characters = ["<img src=x>"] if s.characters else []
    board.scenes[1].shots[0].characters = ["<img src=x>"]  # in s2, s3, s4
    pid = st.create_from_storyboard(board).project_id
    a, b = noise(tmp_path / "a.png", 1), noise(tmp_path / "b.png", 2)
    st.add_reference(pid, "<img src=x>", a)
    for shot, img in (("s2", a), ("s3", b), ("s4", a)):
        st.set_keyframe(pid, shot, img)
    html = consistency_html(st.consistency(pid))
    assert "Measured with" in html and "<img src=x>" not in html and "&lt;img src=x&gt;" in html
    rows = [r.split("'")[0] for r in html.split("data-shot='")[1:]]
    assert rows[0] == "s3" and sorted(rows) == ["s2", "s3", "s4"]


@contextmanager
def models_server(models: list[str], port: int = 0):
    """A real HTTP server on loopback (a free port unless `port` is given) answering GET /v1/models."""
    body = json.dumps({"object": "list", "data": [{"id": m, "object": "model"} for m in models]}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_the_servers_list_escapes_and_a_click_is_checked_against_a_fresh_probe(make_studio):
    from app.server.discovery import discover
    from app.ui.screens.settings.discovered import chosen, probed_ports, servers_html

    with models_server(["llama3.2:1b", "<script>x</script>"]) as port:
        st = make_studio(discovery_ports=f"{port}")
        ports = probed_ports(st.config)
        assert ports == (("A model server", port),)
        html = servers_html(discover(ports=ports), ports, st.config)
        assert "<script>" not in html and "data-model='llama3.2:1b'" in html
        server, model = chosen({"port": port, "model": "llama3.2:1b"}, ports)
        assert (server.base_url, model) == (f"http://127.0.0.1:{port}/v1", "llama3.2:1b")
        with pytest.raises(ValueError, match="no longer lists that model"):
            chosen({"port": port, "model": "gpt-9"}, ports)
        with pytest.raises(ValueError, match="not one this screen probes"):
            chosen({"port": 22, "model": "llama3.2:1b"}, ports)
    assert "id='no_servers'" in servers_html([], ports, st.config)
    assert probed_ports(make_studio().config)[0] == ("Ollama", 11434)  # the usual ports by default


def test_progress_words_for_stills_and_takes():
    from app.server.jobs import describe
    from storage.run import ShotProgress

    frac, text = describe(
        ShotProgress(stage="keyframe", shot_index=1, shots=4, shot_id="s2", step=5, steps=10, status="rendering")
    )
    assert (frac, text) == (0.375, "still 2/4 (s2) · step 5/10")
    take = ShotProgress(stage="take", shot_index=0, shots=3, shot_id="s1", step=1, steps=1, status="reused")
    assert describe(take)[1] == "take 1/3 of s1 · reused"


def test_draw_keyframes_for_the_chosen_scene_only(client, studio):
    """The scene filter's shots without a keyframe, as a job the endpoint follows to its end (a new version)."""
    pid = studio.create_from_storyboard(tiny_board(4)).project_id  # scene a: s1, s2; scene b: s3, s4
    editor = client.predict(pid, 1, api_name="/load_storyboard")[0]
    progress, _, number, value, message, _ = client.predict(pid, 1, editor, "b", api_name="/draw_keyframes")
    assert "data-state='done'" in progress and number == 2 and "keyframes approved for s3, s4" in message
    assert [bool(s.keyframe) for s in studio.version(pid, 2).storyboard.shots()] == [False, False, True, True]
    assert [bool(s["keyframe"]) for sc in json.loads(value)["scenes"] for s in sc["shots"]] == [
        False,
        False,
        True,
        True,
    ]
    with pytest.raises(AppError, match="^every shot of this scene has a keyframe"):
        client.predict(pid, 2, value, "b", api_name="/draw_keyframes")
    with pytest.raises(AppError, match=r"^2 shot\(s\) have no keyframe yet \(s1, s2\): press ✦ Draw keyframes first$"):
        client.predict(pid, 2, api_name="/screen_keyframes")


def test_keyframes_wait_for_unsaved_edits_to_be_saved(client, studio):
    pid = studio.create_from_storyboard(tiny_board(2)).project_id
    data = json.loads(client.predict(pid, 1, api_name="/load_storyboard")[0])
    data["scenes"][0]["shots"][0]["prompt"] = "An edit not saved yet"
    with pytest.raises(
        AppError,
        match=r"^save the storyboard first: keyframes and takes are made from the saved "
        r"version \(v1\)$",
    ):
        client.predict(pid, 1, json.dumps(data), "(all scenes)", api_name="/draw_keyframes")
    assert len(studio.versions(pid)) == 1
