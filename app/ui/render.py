"""Render screen: render a version with progress per shot and step, a Stop button, the film and its clips."""

from __future__ import annotations

import threading

import gradio as gr

from app.ui.common import RENDER_QUEUE, Ctx, guard, md, need_project, ver

SHOT_COLUMNS = ["#", "shot_id", "status", "seconds"]


def summary(info) -> str:  # a RenderRecord
    total = info.rendered + info.reused
    return (f"**v{info.version}**: rendered **{info.rendered}**, reused **{info.reused}** of {total} shots "
            f"in {info.seconds:.1f}s · made by {md(info.label)} (backend {md(info.backend)}, "
            f"model {md(info.model or '—')})")


def outputs_for(studio, info):
    """(film, summary, shot rows, clip choices) for a RenderRecord (or None: nothing rendered yet)."""
    if info is None:
        return None, "Not rendered yet: press **Render**.", [], gr.Dropdown(choices=[], value=None)
    rows = [[i + 1, r.shot_id, r.status, r.duration] for i, r in enumerate(info.shots)]
    choices = [(f"{i + 1}. {r.shot_id} ({r.status})", r.shot_id) for i, r in enumerate(info.shots)]
    return str(studio.film_path(info)), summary(info), rows, gr.Dropdown(choices=choices, value=None)


def progress_adapter(progress) -> callable:
    """Studio progress events -> one gr.Progress bar: the fraction counts shots and steps within a shot."""
    def on(e: dict) -> None:
        if e["stage"] == "render":
            n, i = e["shots"], e["shot_index"]
            steps = e.get("steps") or 1
            frac = (i + min(e.get("step", 0) / steps, 1.0)) / max(n, 1)
            progress(min(frac, 0.99), desc=f"shot {i + 1}/{n} ({e['shot_id']}) · step {e.get('step', 0)}/{steps} · "
                                          f"{e['status']}")
        elif e["stage"] == "assemble":
            progress(0.99, desc="assembling the film")
    return on


def build(ctx: Ctx) -> None:
    studio = ctx.studio
    tokens: dict[tuple[str, str], object] = {}  # (browser session, project id) -> CancelToken of its render
    lock = threading.Lock()
    with gr.Row():
        render_btn = gr.Button("Render", variant="primary", elem_id="render_btn")
        stop_btn = gr.Button("Stop", variant="stop", elem_id="stop_btn")
    summary_md = gr.Markdown(elem_id="render_summary")
    with gr.Row():
        film = gr.Video(label="Film", elem_id="film", interactive=False, scale=3)
        with gr.Column(scale=2):
            shots = gr.Dataframe(headers=SHOT_COLUMNS, value=[], interactive=False, label="Shots",
                                 elem_id="render_shots", max_height=360)
            clip_pick = gr.Dropdown(label="Play one shot's clip", choices=[], elem_id="clip_pick", allow_custom_value=True)
            clip = gr.Video(label="Clip", elem_id="shot_clip", interactive=False)

    @guard
    def load(pid, v):
        if not pid:
            return outputs_for(studio, None)
        return outputs_for(studio, studio.render_info(pid, ver(v)))

    @guard
    def do_render(pid, v, request: gr.Request, progress=gr.Progress()):
        from generation.base import CancelToken

        pid = need_project(pid)
        token, key = CancelToken(), (request.session_hash, pid)
        with lock:
            tokens[key] = token
        progress(0, desc="starting")
        try:
            info = studio.render(pid, ver(v), progress=progress_adapter(progress), cancel=token)
        finally:
            with lock:
                if tokens.get(key) is token:
                    del tokens[key]
        return outputs_for(studio, info)

    @guard
    def stop(pid, request: gr.Request):
        """Stops this session's render only: another browser's render is not this one's to stop."""
        with lock:
            token = tokens.get((request.session_hash, pid or ""))
        if token is None:
            gr.Info("nothing is rendering for this project in this browser tab")
            return
        token.cancel()
        gr.Info("stopping after the current step; finished shots are kept")

    @guard
    def show_clip(pid, v, shot_id):
        if not (pid and shot_id):
            return None
        info = studio.render_info(pid, ver(v))
        rec = info.shot(shot_id) if info else None
        if rec is None:
            raise gr.Error(f"no clip for shot {shot_id} in this version's render")
        return str(studio.clip_path(rec.sha256))

    outs = [film, summary_md, shots, clip_pick]
    ctx.tabs["render"].select(load, [ctx.pid, ctx.version], outs, api_name="render_info")
    ev = render_btn.click(do_render, [ctx.pid, ctx.version], outs, api_name="render", concurrency_limit=1,
                          concurrency_id=RENDER_QUEUE, show_progress_on=[summary_md])
    ctx.refresh_status(ev)
    stop_btn.click(stop, ctx.pid, None, api_name="stop_render")
    clip_pick.change(show_clip, [ctx.pid, ctx.version, clip_pick], clip, api_name="clip")
