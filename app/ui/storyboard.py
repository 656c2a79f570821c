"""Storyboard screen: scenes of shot cards you can see (thumbnail, prompt, length, camera, characters, narration,
lock and continuity), edited in place and dragged to reorder; per-shot actions (play the clip, render just that
shot); the film options (title card, crossfade, burned-in subtitles). Saving makes a new version.

The cards are one client-side component (`storyboard.js`): the board travels as JSON (`board_json` /
`json_to_board`), so a 120-shot board is one value, not hundreds of Gradio components."""

from __future__ import annotations

import json
from pathlib import Path

import gradio as gr

from app.ui.common import Ctx, follow, guard, media_url, need_project, progress_html, ver
from app.ui.story import saved_message

HERE = Path(__file__).parent
ALL_SCENES = "(all scenes)"
SHOT_FIELDS = ("shot_id", "prompt", "negative_prompt", "duration", "seed", "camera", "narration", "dialogue",
               "characters", "locked", "continuity")


def board_json(board, thumbs: dict[str, str], seed_policy: str = "random", dirty: bool = False) -> str:
    """The board as the editor's JSON value: scenes of shots (with their thumbnail URLs), the camera moves and
    the character names to choose from."""
    from storage.schema import CAMERA_MOVES

    return json.dumps({
        "cameras": list(CAMERA_MOVES), "characters": [c.name for c in board.characters], "seed_policy": seed_policy,
        "dirty": dirty,
        "scenes": [{"scene_id": sc.scene_id, "title": sc.title,
                    "shots": [{**s.model_dump(include=set(SHOT_FIELDS)), "thumb": thumbs.get(s.shot_id, "")}
                              for s in sc.shots]} for sc in board.scenes]})


def json_to_board(base, value: str, fresh_ids: bool = True):
    """The editor's JSON applied to `base`: scenes and shots in the order given; fields the cards do not show
    (scene descriptions, purpose, location) are kept by id; shots and scenes marked new get fresh ids (or keep
    the editor's temporary ones: `fresh_ids=False`, for a draft that is rendered, not saved)."""
    from storage.schema import Storyboard

    from storage.parsing import ParseError, parse_json

    try:
        data = parse_json(value or "", "the storyboard editor")  # any client can send it: no RecursionError
    except ParseError:
        raise ValueError("the storyboard editor sent something unreadable: reload the page") from None
    if not isinstance(data, dict) or not isinstance(data.get("scenes"), list):
        raise ValueError("the storyboard editor sent no scenes: reload the page")
    old_scenes = {sc.scene_id: sc for sc in base.scenes}
    scenes = []
    for sc in data["scenes"]:
        shots = []
        for s in sc.get("shots") or []:
            shot = {k: s[k] for k in SHOT_FIELDS if k in s}
            if s.get("isNew") and fresh_ids:
                shot.pop("shot_id", None)
            shots.append(shot)
        if not shots:
            continue
        old = old_scenes.get(sc.get("scene_id")) if not sc.get("isNew") else None
        scene = old.model_dump(exclude={"shots"}) if old else ({} if fresh_ids else {"scene_id": sc.get("scene_id")})
        scene.update(title=str(sc.get("title") or ""), shots=shots)
        scenes.append(scene)
    if not scenes:
        raise ValueError("a storyboard needs at least one shot")
    return Storyboard.model_validate({**base.model_dump(), "scenes": scenes})


def with_thumbs(value: str, thumbs: dict[str, str]) -> str:
    """The editor's JSON with fresh thumbnail URLs (everything else as the editor had it)."""
    data = json.loads(value)
    for sc in data["scenes"]:
        for s in sc["shots"]:
            s["thumb"] = thumbs.get(s["shot_id"], s.get("thumb", ""))
    return json.dumps(data)


def film_options(base, title_card, title_seconds, crossfade, burn):
    return base.film.model_copy(update={"title_card": bool(title_card), "title_seconds": float(title_seconds),
                                        "crossfade": float(crossfade), "burn_subtitles": bool(burn)})


def build(ctx: Ctx) -> None:
    studio, jobs = ctx.studio, ctx.jobs
    with gr.Row(equal_height=True):
        scene_pick = gr.Dropdown([ALL_SCENES], value=ALL_SCENES, label="Scene", elem_id="scene_filter", scale=2)
        save = gr.Button("Save storyboard (new version)", variant="primary", elem_id="shots_save_btn", scale=2)
        stop = gr.Button("Stop", elem_id="shot_stop_btn", scale=1)
    message = gr.Markdown(elem_id="shots_message")
    progress = gr.HTML(value="", elem_id="shot_progress", js_on_load=None)
    with gr.Row():
        with gr.Column(scale=4):
            editor = gr.HTML(value=None, html_template="<div class='sb'></div>", elem_id="board",
                             js_on_load=(HERE / "storyboard.js").read_text(),
                             css_template=(HERE / "storyboard.css").read_text())
        with gr.Column(scale=1, min_width=260):
            clip = gr.Video(label="Shot", elem_id="board_clip", interactive=False, autoplay=True)
            with gr.Accordion("Film options", open=True):
                title_card = gr.Checkbox(label="Open with a title card", elem_id="opt_title_card")
                title_seconds = gr.Slider(0.5, 10, value=2, step=0.5, label="Title card seconds",
                                          elem_id="opt_title_seconds")
                crossfade = gr.Slider(0, 2, value=0, step=0.25, label="Crossfade between shots (s; 0 = hard cuts)",
                                      elem_id="opt_crossfade")
                burn = gr.Checkbox(label="Burn subtitles into the picture", elem_id="opt_burn")
                gr.Markdown("A title card, crossfades or burned-in subtitles re-encode the film once; clips are "
                            "reused.", elem_classes="hint")

    def policy() -> str:
        return getattr(studio.config, "seed_policy", "random")

    def thumbs_of(board) -> dict[str, str]:
        return {sid: media_url(studio.thumbnail(c.sha256)) for sid, c in studio.cached_shots(board).items()}

    def editor_value(board) -> str:
        return board_json(board, thumbs_of(board), policy())

    @guard
    def load(pid, v):
        if not pid:
            return None, gr.Dropdown(choices=[ALL_SCENES], value=ALL_SCENES), "", *[gr.skip()] * 4
        version = studio.version(pid, ver(v))
        b = version.storyboard
        scenes = [(f"{i}. {sc.title or sc.scene_id}", sc.scene_id) for i, sc in enumerate(b.scenes, 1)]
        f = b.film
        return (editor_value(b), gr.Dropdown(choices=[(ALL_SCENES, ALL_SCENES), *scenes], value=ALL_SCENES),
                f"v{version.number}: {len(b.shots())} shots in {len(b.scenes)} scene(s), {b.duration():.0f}s",
                f.title_card, f.title_seconds, f.crossfade, f.burn_subtitles)

    @guard
    def save_board(pid, v, value, tc, ts, cf, bs):
        pid = need_project(pid)
        base = studio.version(pid, ver(v))
        board = json_to_board(base.storyboard, value)
        board = board.model_copy(update={"film": film_options(base.storyboard, tc, ts, cf, bs)})
        board = type(board).model_validate(board.model_dump())
        if board == base.storyboard:
            return gr.skip(), gr.skip(), f"Nothing changed since v{base.number}: no new version."
        nv, branched = studio.save_storyboard(pid, board, base.number, "storyboard edit")
        return nv.number, editor_value(nv.storyboard), saved_message(nv, branched)

    @guard
    def play(pid, v, value, evt: gr.EventData):
        pid = need_project(pid)
        board = json_to_board(studio.version(pid, ver(v)).storyboard, value, fresh_ids=False)
        clip_rec = studio.cached_shots(board).get(evt.shot_id)
        if clip_rec is None:
            gr.Info(f"shot {evt.shot_id} has no clip as it stands: press ⟳ Render shot")
            return gr.skip()
        return str(studio.clip_path(clip_rec.sha256))

    @guard
    def render_shot(pid, v, value, evt: gr.EventData):
        pid = need_project(pid)
        shot_id = evt.shot_id
        board = json_to_board(studio.version(pid, ver(v)).storyboard, value, fresh_ids=False)
        job, started = jobs.start("render", pid, lambda p, c: studio.render_shot(board, shot_id, p, c),
                                  label=f"render shot {shot_id}")
        if not started:
            gr.Info(f"{job.label} is running: wait for it or press Stop")

        def frame(j):
            return progress_html(j), gr.skip(), gr.skip()

        def final(j):
            if j.state != "done" or not started:
                return progress_html(j), gr.skip(), gr.skip()
            return progress_html(j), with_thumbs(value, thumbs_of(board)), str(studio.clip_path(j.result.sha256))
        yield from follow(jobs, job, frame, final)

    @guard
    def stop_shot(pid):
        job = jobs.active(pid or "", "render")
        if job is not None:
            jobs.stop(job)
        return progress_html(job)

    opts = [title_card, title_seconds, crossfade, burn]
    ctx.tabs["storyboard"].select(load, [ctx.pid, ctx.version], [editor, scene_pick, message, *opts],
                                  api_name="load_storyboard")
    save.click(save_board, [ctx.pid, ctx.version, editor, *opts], [ctx.version, editor, message],
               api_name="save_storyboard")
    editor.play(play, [ctx.pid, ctx.version, editor], clip, api_visibility="private")
    editor.render_shot(render_shot, [ctx.pid, ctx.version, editor], [progress, editor, clip],
                       api_visibility="private", show_progress="hidden")
    stop.click(stop_shot, ctx.pid, progress, api_visibility="private", show_progress="hidden")
    scene_pick.change(None, scene_pick, None, js="""(scene) => {
      document.querySelectorAll('#board .scene').forEach((s) => {
        s.hidden = scene !== '(all scenes)' && s.dataset.scene !== scene; });
      return []; }""")
