"""The Render screen's values: a render's summary in words (reused shots, the drafts, the sound), the shot table,
and what the screen shows for a version (its film, or its nearest rendered ancestor's, labelled)."""

from __future__ import annotations

import gradio as gr

from app.ui.common import md
from app.ui.player import film_video
from app.ui.timeline import drafts_note, strip_html

SHOT_COLUMNS = ["#", "shot", "clip", "tier", "length (s)", "render time (s)"]
# A render belongs to the browser that started it (app/server/jobs.py): its tabs and a reload follow it and may stop it.
NOT_RENDERED = "Not rendered yet: press **Render**."
RENDERING = "**Rendering…** the film shows here when it is done."
STOP_NOTE = "Stop stops the render this browser started; its other tabs and a reloaded page follow it too."


def summary(info, number: int | None = None) -> str:  # a RenderRecord
    total = info.rendered + info.reused
    shared = (
        f" · this version changes no pixels, so it shares the film of **v{info.version}**"
        if number is not None and number != info.version
        else ""
    )
    how = "stream copy, no re-encode" if info.stream_copied else "re-encoded once"
    earlier = sum(r.status == "earlier" for r in info.shots)
    older = f" · **{earlier}** from earlier renders (changed since)" if earlier else ""
    sound = md(info.audio.describe()) if info.audio else "none (no line, narration, music or sounds)"
    drafts = drafts_note(info)
    tiers = (
        f"  \n**drafts**: {md(drafts)}: finalise them on the Storyboard (a card's **Finalize**) or render **Final**"
        if drafts
        else ""
    )
    return (
        f"**v{info.version}**: rendered **{info.rendered}**, reused **{info.reused}** of {total} shots "
        f"in {info.seconds:.1f}s ({how}){older} · made by {md(info.label)}{shared}{tiers}  \n**sound**: {sound}"
    )


def shot_rows(studio, info) -> list[list]:
    rows = []
    for i, r in enumerate(info.shots):
        clip = studio.clip_info(r.key)
        took = f"{clip.seconds:.1f}" if clip is not None and r.status == "rendered" else "—"
        rows.append([i + 1, r.shot_id, r.status, r.tier, round(r.num_frames / r.fps, 2), took])
    return rows


def outputs_for(studio, pid, number, info):
    """(film, summary, strip, shot rows, clip choices) for a RenderRecord (or None: nothing rendered yet). A version
    not rendered yet shows the film of its nearest rendered ancestor, labelled as such, until its own exists."""
    last = studio.last_film(pid, number) if info is None and pid else None
    if last is not None:
        info = last.render
    if info is None:
        return film_video(studio, pid, None), NOT_RENDERED, "", [], gr.Dropdown(choices=[], value=None)
    if last is not None:
        board = studio.version(pid, info.version).storyboard
        text = f"**{md(last.describe())}**: press **Render** to make v{number}'s.  \n" + summary(info)
    else:
        board = studio.version(pid, number).storyboard
        missing = len(board.shots()) - len(info.shots)
        text = summary(info, number) + (
            f" · **{missing}** shot(s) not in this film yet: render their scenes" if missing > 0 else ""
        )
    choices = [
        (f"{i + 1}. {r.shot_id} ({r.status}{', draft' * (r.tier == 'draft')})", r.shot_id)
        for i, r in enumerate(info.shots)
    ]
    return (
        film_video(studio, pid, info, info.version if last is not None else number),
        text,
        strip_html(studio, board, info, "#film video"),
        shot_rows(studio, info),
        gr.Dropdown(choices=choices, value=None),
    )
