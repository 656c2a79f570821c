"""Storyboard screen: scenes of shot cards you can see (the approved keyframe, else the clip's thumbnail; prompt,
length, camera, characters, narration, lines (speaker, line, delivery, ▶ to hear it as the render voices it; a
line too long for its shot flagged), sounds, description, lock and continuity; each scene's music cue and track
button on its header), edited in place and dragged to reorder; per-shot
actions (play the clip, render just that shot); the image-first workflow on each card (draw, re-roll, upload, pick
or clear its keyframe; render takes, watch them side by side with the panel's votes, use one); keyframes for the
whole board or the chosen scene and the panel's keyframe screening; the film options (with a track for the whole
film). Saving makes a new version,
and so does approving a keyframe or using a take: the page follows it. Unsaved edits are kept in the browser per
project and version (the JSON's `key`) and come back after a tab switch or a reload; Undo; find a shot; fold scenes.

The cards are one client-side component (`storyboard.js`): the board travels as JSON (`board_json` /
`json_to_board`), so a 120-shot board is one value, not hundreds of Gradio components. Long work (keyframes,
takes, a shot's render, the panel's screenings) runs as a job: a reloaded page follows it again, Stop stops it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import gradio as gr
from pydantic import BaseModel, Field, ValidationError

from app.ui.board_media import CardAction, card_media, draw_confirmations, outcome, pick_message, uploaded_file
from app.ui.common import (
    Ctx,
    ask_to_stop,
    branch_note,
    follow,
    guard,
    md,
    media_url,
    need_project,
    notice,
    progress_html,
    ver,
)
from app.ui.story import saved_message

HERE = Path(__file__).parent
ALL_SCENES = "(all scenes)"
# ✦ Draw keyframes says what it will re-render and asks first (the board's `confirm_draw`); "no" sends NOT_CONFIRMED
# instead of the board, which draws nothing. An unsaved board is not asked: the server refuses it with its own line.
NOT_CONFIRMED = "(not confirmed)"
CONFIRM_DRAW = """(pid, v, value, scene) => {
  let ask = '';
  try { const b = JSON.parse(value); ask = b.dirty ? '' : (b.confirm_draw || {})[scene] || ''; } catch (e) { ask = ''; }
  if (ask && !window.confirm(ask + '. Draw them?')) return [pid, v, '(not confirmed)', scene];
  return [pid, v, value, scene];
}"""
SHOT_FIELDS = (
    "shot_id",
    "prompt",
    "negative_prompt",
    "duration",
    "seed",
    "camera",
    "narration",
    "dialogue",
    "sounds",
    "description",
    "characters",
    "locked",
    "continuity",
)
TRACK_TYPES = [".wav", ".flac", ".mp3", ".ogg", ".oga", ".opus", ".m4a", ".aac"]  # as a scene header's track button
FILM_TRACK = "♫ uploaded track under the whole film"
NO_FILM_TRACK = "No track of yours under the whole film: each scene's cue or track plays."
BOARD_KINDS = ("keyframes", "takes", "render", "critique")  # the jobs this screen starts (and follows on reload)


class TrackAction(BaseModel):
    """A scene header's track button: place the uploaded file over the scene, or take the track away."""

    scene_id: str = Field(pattern=r"^[A-Za-z0-9_\-]{1,40}$")
    action: Literal["upload", "clear"]
    path: str = Field("", max_length=4096)  # the uploaded file, as Gradio's upload answered

    @classmethod
    def of(cls, data: Any) -> TrackAction:
        try:
            return cls.model_validate(data if isinstance(data, dict) else {})
        except ValidationError:
            raise ValueError("the storyboard sent a track action it cannot ask for: reload the page") from None


class Finalize(BaseModel):
    """A card's Finalize (`shot_id`) or a scene header's (`scene_id`): render it at the final tier, keeping the
    draft's seed, keyframe and take, and cut the film again."""

    shot_id: str = Field("", pattern=r"^[A-Za-z0-9_\-]{0,64}$")
    scene_id: str = Field("", pattern=r"^[A-Za-z0-9_\-]{0,40}$")

    @classmethod
    def of(cls, data: Any) -> Finalize:
        try:
            a = cls.model_validate(data if isinstance(data, dict) else {})
        except ValidationError:
            a = None
        if a is None or bool(a.shot_id) == bool(a.scene_id):
            raise ValueError("the storyboard sent a Finalize it cannot ask for: reload the page")
        return a


class LinePlay(BaseModel):
    """A card's ▶ on a line: the line as the card has it now (saved or not), voiced in the version's voices."""

    project: str = Field(min_length=1, max_length=80)
    version: int = Field(0, ge=0, le=10**9)
    character: str = Field("", max_length=80)
    line: str = Field("", max_length=2000)
    delivery: str = Field("", max_length=200)

    @classmethod
    def of(cls, data: Any) -> LinePlay:
        data = data[0] if isinstance(data, list) and len(data) == 1 else data
        try:
            return cls.model_validate(data if isinstance(data, dict) else {})
        except ValidationError:
            raise ValueError("the storyboard sent a line it cannot play: reload the page") from None


def playing(studio):
    """The cards' server function: `{"project", "version", "character", "line", "delivery"}` (a line's ▶) ->
    `{"url", "made"}` of the line voiced as the render voices it (from the sound cache when the render or an earlier
    ▶ spoke it: `made` False), or `{"error": one line}`."""
    from app.errors import user_errors
    from app.ui.common import one_line
    from storage.repository import NotFound
    from storage.schema import Line

    def play_line(data):
        try:
            a = LinePlay.of(data)
            if not a.line.strip():
                raise ValueError("the line is empty: type what they say first")
            line = Line(character=a.character, line=a.line, delivery=a.delivery)
            path, made = studio.line_sample(a.project, line, a.version or None)
            return {"url": media_url(path), "made": made}
        except (TypeError, RuntimeError, NotFound, *user_errors()) as e:
            return {"error": one_line(e)}

    return play_line


def board_json(
    board,
    thumbs: dict[str, str],
    seed_policy: str = "random",
    dirty: bool = False,
    media: dict[str, dict] | None = None,
    open_takes: str | None = None,
    max_upload: int = 0,
    key: str = "",
    saved_from: str = "",
    carried_from: str = "",
    confirm_draw: dict[str, str] | None = None,
    max_track: int = 0,
    project: str = "",
    version: int = 0,
    tiers: dict[str, str] | None = None,
) -> str:
    """The board as the editor's JSON value: scenes of shots (with their pictures: the approved keyframe or the
    clip's thumbnail, keyframe candidates, takes), the camera moves and the character names to choose from. `key`
    names the version ("pid:vN") the browser keeps unsaved edits under; `saved_from`, the one a save came from (its
    kept edits are done with); `carried_from`, the one a track was placed on while the board had unsaved edits
    (they are kept on, over this version); `confirm_draw`, what ✦ Draw keyframes asks before it runs, per scene picked;
    `tiers`, the tier of each shot's clip as it stands (a card badges a draft and offers Finalize)."""
    from storage.schema import CAMERA_MOVES

    media, tiers = media or {}, tiers or {}

    def shot(s) -> dict:
        extra = media.get(s.shot_id) or {}
        kf = extra.get("keyframe", "")
        fields = s.model_dump(mode="json", include=set(SHOT_FIELDS))
        return {
            **fields,
            "was": {k: v for k, v in fields.items() if k != "shot_id"},  # as loaded: a save sends only what changed
            "thumb": kf or thumbs.get(s.shot_id, ""),
            "tier": tiers.get(s.shot_id, ""),  # its clip's tier as it stands ("": no clip)
            "keyframe": kf,
            "candidates": extra.get("candidates", []),
            "takes": extra.get("takes"),
            "affects": extra.get("affects"),
        }

    return json.dumps(
        {
            "cameras": list(CAMERA_MOVES),
            "characters": [c.name for c in board.characters],
            "seed_policy": seed_policy,
            "dirty": dirty,
            "open_takes": open_takes,
            "max_upload": max_upload,
            "max_track": max_track,
            "key": key,
            "project": project,  # a line's ▶ speaks in this version's voices
            "version": version,
            "saved_from": saved_from,
            "carried_from": carried_from,  # a track made this version: the browser's unsaved edits go on over it
            "confirm_draw": confirm_draw or {},
            "film": board.film.model_dump(mode="json"),  # the film options as loaded (see `loaded_board`)
            "scenes": [
                {
                    "scene_id": sc.scene_id,
                    "title": sc.title,
                    "music": sc.music,
                    "track": bool(sc.music_track),  # a creator's uploaded track plays instead of the cue
                    "was": {"title": sc.title, "music": sc.music},
                    "shots": [shot(s) for s in sc.shots],
                }
                for sc in board.scenes
            ],
        }
    )


def json_to_board(base, value: str, fresh_ids: bool = True):
    """The editor's JSON applied to `base`: scenes and shots in the order given; fields the cards do not edit
    (scene descriptions, purpose, location; a shot's approved keyframe) are kept by id; shots and scenes marked new get fresh ids (or keep
    the editor's temporary ones: `fresh_ids=False`, for a draft that is rendered, not saved)."""
    from storage.parsing import ParseError, parse_json
    from storage.schema import Storyboard

    try:
        data = parse_json(value or "", "the storyboard editor")  # any client can send it: no RecursionError
    except ParseError:
        raise ValueError("the storyboard editor sent something unreadable: reload the page") from None
    if not isinstance(data, dict) or not isinstance(data.get("scenes"), list):
        raise ValueError("the storyboard editor sent no scenes: reload the page")
    old_scenes = {sc.scene_id: sc for sc in base.scenes}
    old_shots = {s.shot_id: s for s in base.shots()}
    scenes = []
    for sc in data["scenes"]:
        shots = []
        for s in sc.get("shots") or []:
            shot = {k: s[k] for k in SHOT_FIELDS if k in s}
            if isinstance(shot.get("dialogue"), list):  # a line added on the card and left empty says nothing
                shot["dialogue"] = [
                    ln
                    for ln in shot["dialogue"]
                    if not (isinstance(ln, dict) and not str(ln.get("line") or "").strip())
                ]
            old = old_shots.get(shot.get("shot_id")) if not s.get("isNew") else None
            if old is not None:  # what the card does not edit (its approved keyframe) stays as it was
                shot = {**old.model_dump(exclude=set(SHOT_FIELDS)), **shot}
            if s.get("isNew") and fresh_ids:
                shot.pop("shot_id", None)
            shots.append(shot)
        if not shots:
            continue
        old = old_scenes.get(sc.get("scene_id")) if not sc.get("isNew") else None
        scene = old.model_dump(exclude={"shots"}) if old else ({} if fresh_ids else {"scene_id": sc.get("scene_id")})
        scene.update(title=str(sc.get("title") or ""), shots=shots)
        if "music" in sc:
            scene["music"] = str(sc.get("music") or "")
        scenes.append(scene)
    if not scenes:
        raise ValueError("a storyboard needs at least one shot")
    return Storyboard.model_validate({**base.model_dump(), "scenes": scenes})


def loaded_board(base, value: str):
    """The board the editor's page was loaded from, as far as the page can say: `base` (its version as it is now)
    with each shot's and scene's fields as the page got them (`was`, kept with the shot, so a draft the browser
    brought back after a reload still says what it was made from) and the film options as the page got them. A save
    then carries only what the person changed (`storage.edits.merge_boards`); a page that sends no `was` (a program
    calling the API) is taken as made from `base` as it is now."""
    from storage.parsing import ParseError, parse_json
    from storage.schema import Storyboard

    try:
        data = parse_json(value or "", "the storyboard editor")
    except ParseError:
        raise ValueError("the storyboard editor sent something unreadable: reload the page") from None
    if not isinstance(data, dict) or not isinstance(data.get("scenes"), list):
        raise ValueError("the storyboard editor sent no scenes: reload the page")
    sent_scenes = {sc.get("scene_id"): sc for sc in data["scenes"] if isinstance(sc, dict)}
    sent_shots = {
        s.get("shot_id"): s for sc in sent_scenes.values() for s in (sc.get("shots") or []) if isinstance(s, dict)
    }
    board = base.model_dump()
    for sc in board["scenes"]:
        was = (sent_scenes.get(sc["scene_id"]) or {}).get("was")
        if isinstance(was, dict):
            sc.update({k: was[k] for k in ("title", "music") if k in was})
        for s in sc["shots"]:
            was = (sent_shots.get(s["shot_id"]) or {}).get("was")
            if isinstance(was, dict):
                s.update({k: was[k] for k in SHOT_FIELDS if k in was and k != "shot_id"})
    if isinstance(data.get("film"), dict):
        board["film"] = data["film"]
    try:
        return Storyboard.model_validate(board)
    except ValidationError:
        raise ValueError("the storyboard editor sent a board it was not given: reload the page") from None


def with_thumbs(value: str, thumbs: dict[str, str], tiers: dict[str, str] | None = None) -> str:
    """The editor's JSON with fresh clip thumbnails where a shot shows no keyframe, and each clip's tier (everything
    else as the editor had it)."""
    data = json.loads(value)
    for sc in data["scenes"]:
        for s in sc["shots"]:
            if not s.get("keyframe"):
                s["thumb"] = thumbs.get(s["shot_id"], s.get("thumb", ""))
            if tiers is not None:
                s["tier"] = tiers.get(s["shot_id"], "")
    return json.dumps(data)


def scene_starts(board) -> list[tuple]:
    """(scene, where it starts in seconds) in film order."""
    out, t = [], 0.0
    for sc in board.scenes:
        out.append((sc, t))
        t += sum(s.duration for s in sc.shots)
    return out


def scene_label(n: int, scene, start: float) -> str:
    """'3. The storm · s021–s030 · 1:00–1:30': a scene in the picker, with its shots and its times."""

    def clock(t: float) -> str:
        return f"{int(t) // 60}:{int(t) % 60:02d}"

    ids = [s.shot_id for s in scene.shots]
    end = start + sum(s.duration for s in scene.shots)
    shots = ids[0] if len(ids) == 1 else f"{ids[0]}–{ids[-1]}"
    return f"{n}. {scene.title or 'Scene ' + str(n)} · {shots} · {clock(start)}–{clock(end)}"


def film_options(
    title_card,
    title_seconds,
    crossfade,
    burn,
    loudness="web",
    music_level=-8.0,
    effects_level=-14.0,
    ducking=True,
    captions="sdh",
    described=False,
    tier=None,
    channels=None,
) -> dict:
    """The film options the board's controls set (checked by the Studio); `tier` or `channels` None: as it was."""
    kept = {k: v for k, v in (("tier", tier), ("channels", channels)) if v is not None}
    return kept | {
        "title_card": bool(title_card),
        "title_seconds": float(title_seconds),
        "crossfade": float(crossfade),
        "burn_subtitles": bool(burn),
        "loudness": loudness,
        "music_level": float(music_level),
        "effects_level": float(effects_level),
        "ducking": bool(ducking),
        "captions": captions,
        "audio_description": bool(described),
    }


def build(ctx: Ctx) -> None:
    from app.jobs import DONE
    from app.keyframes import MAX_UPLOAD_BYTES
    from app.ui.render import TIERS, default_tier, tier_switch
    from generation.audio.upload import UploadLimits
    from storage.records import ShotRender

    studio, jobs = ctx.studio, ctx.jobs
    with gr.Row(equal_height=True):
        scene_pick = gr.Dropdown([ALL_SCENES], value=ALL_SCENES, label="Scene", elem_id="scene_filter", scale=2)
        save = gr.Button("Save storyboard (new version)", variant="primary", elem_id="shots_save_btn", scale=2)
        keyframes_btn = gr.Button("✦ Draw keyframes", elem_id="keyframes_btn", scale=2)
        screen_btn = gr.Button("Screen the keyframes", elem_id="screen_keyframes_btn", scale=2)
        stop = gr.Button("Stop", elem_id="shot_stop_btn", scale=1)
        board_tier = tier_switch("board_tier")  # the tier ⟳ Render shot renders at (Finalize: always final)
    board_tier_note = gr.Markdown(elem_id="board_tier_note", elem_classes="hint")
    stills = gr.Markdown(elem_id="stills_label", elem_classes="hint")
    message = gr.Markdown(elem_id="shots_message")
    progress = gr.HTML(value="", elem_id="shot_progress", js_on_load=None)
    job_box = gr.Textbox(visible=False, elem_id="board_job")  # the job the progress line follows (for Stop)
    with gr.Row():
        with gr.Column(scale=4):
            editor = gr.HTML(
                value=None,
                html_template="<div class='sb'></div>",
                elem_id="board",
                js_on_load=(HERE / "kit.js").read_text() + (HERE / "storyboard.js").read_text(),
                css_template=(HERE / "storyboard.css").read_text(),
                server_functions=[playing(studio)],
            )
        with gr.Column(scale=1, min_width=260):
            clip = gr.Video(label="Shot", elem_id="board_clip", interactive=False, autoplay=True)
            with gr.Accordion("Film options", open=True):
                title_card = gr.Checkbox(label="Open with a title card", elem_id="opt_title_card")
                title_seconds = gr.Slider(
                    0.5, 10, value=2, step=0.5, label="Title card seconds", elem_id="opt_title_seconds"
                )
                crossfade = gr.Slider(
                    0,
                    2,
                    value=0,
                    step=0.25,
                    label="Crossfade between shots (s; 0 = hard cuts)",
                    elem_id="opt_crossfade",
                )
                burn = gr.Checkbox(label="Burn subtitles into the picture", elem_id="opt_burn")
                gr.Markdown(
                    "A title card, crossfades or burned-in subtitles re-encode the film once; clips are reused.",
                    elem_classes="hint",
                )
                loudness = gr.Radio(
                    [("web (-14 LUFS)", "web"), ("EBU R128 (-23 LUFS)", "ebu")],
                    value="web",
                    label="Loudness",
                    elem_id="opt_loudness",
                )
                music_level = gr.Slider(-60, 12, value=-8, step=1, label="Music level (dB)", elem_id="opt_music")
                effects_level = gr.Slider(-60, 12, value=-14, step=1, label="Effects level (dB)", elem_id="opt_effects")
                ducking = gr.Checkbox(value=True, label="Duck the music under speech", elem_id="opt_ducking")
                gr.Markdown(
                    "Sound: voices, the temp score and temp effects are mixed again; clips are reused.",
                    elem_classes="hint",
                )
                film_track_label = gr.Markdown(elem_id="film_track_label")  # the twin of `chief music P --film FILE`
                with gr.Row(equal_height=True):
                    film_track_btn = gr.UploadButton(
                        "♫ Track for the whole film",
                        file_types=["audio", *TRACK_TYPES],
                        elem_id="film_track_btn",
                        size="sm",
                        scale=1,
                    )
                    film_track_clear = gr.Button(
                        "✕", elem_id="film_track_clear", size="sm", scale=0, min_width=40, visible=False
                    )
                captions = gr.Radio(
                    [("SDH: speakers, [sounds] and [music]", "sdh"), ("plain: the lines", "plain")],
                    value="sdh",
                    label="Captions",
                    elem_id="opt_captions",
                )
                described = gr.Checkbox(
                    label="Audio description: a second audio track with each shot's description voiced between lines",
                    elem_id="opt_described",
                )
                channels_opt = gr.Radio(  # the twin of `chief film P --channels`
                    [("stereo: dialogue centred, music and effects wide", "stereo"), ("mono: one channel", "mono")],
                    value=None,
                    label="Mix",
                    elem_id="opt_channels",
                )
                default_tier_opt = gr.Radio(  # the twin of `chief film P --tier`
                    TIERS, value=None, label="Render tier by default (Render and ⟳ Render shot)", elem_id="opt_tier"
                )
    board_outs = [progress, job_box, ctx.version, editor, message, clip]
    film_track_outs = [film_track_label, film_track_clear]
    skips = (gr.skip(),) * 4

    def policy() -> str:
        return getattr(studio.config, "seed_policy", "random")

    def thumbs_of(board) -> tuple[dict[str, str], dict[str, str]]:
        """Each shot's clip thumbnail and its tier, as it stands (its final when cached, else its draft)."""
        clips = studio.shot_clips(board)
        return (
            {sid: media_url(studio.thumbnail(c.sha256)) for sid, (c, _) in clips.items()},
            {sid: t for sid, (_, t) in clips.items()},
        )

    def editor_value(
        pid: str, number: int, open_takes: str | None = None, saved_from: int | None = None, carried_from: int = 0
    ) -> str:
        board = studio.version(pid, number).storyboard
        clips = studio.shot_clips(board)
        media = card_media(studio, pid, number, {sid: c for sid, (c, _) in clips.items()})
        return board_json(
            board,
            {sid: media_url(studio.thumbnail(c.sha256)) for sid, (c, _) in clips.items()},
            policy(),
            tiers={sid: t for sid, (_, t) in clips.items()},
            media=media,
            confirm_draw=draw_confirmations(board, media, ALL_SCENES),
            open_takes=open_takes,
            max_upload=MAX_UPLOAD_BYTES,
            max_track=UploadLimits().max_bytes,
            key=f"{pid}:v{number}",
            project=pid,
            version=number,
            saved_from=f"{pid}:v{saved_from}" if saved_from else "",
            carried_from=f"{pid}:v{carried_from}" if carried_from else "",
        )

    def stills_line() -> str:
        return (
            f"Keyframes and references are drawn by **{md(studio.images_label())}**; takes and clips by "
            f"**{md(studio.status().backend_label)}**."
        )

    def followed(pid: str, number: int, job, draft: str | None = None):
        """Follow a board job to its end; then show what it made (the page follows a new version)."""

        def frame(j):
            return progress_html(j), j.id, *skips

        def final(j):
            if j.state != DONE:
                return progress_html(j), j.id, *skips
            made, text, open_takes = outcome(j.result)
            text += branch_note(studio, pid, made) if made is not None else ""
            if isinstance(j.result, ShotRender):
                board = json_to_board(studio.version(pid, number).storyboard, draft, fresh_ids=False) if draft else None
                value = with_thumbs(draft, *thumbs_of(board)) if draft else editor_value(pid, number)
                return progress_html(j), j.id, gr.skip(), value, text, str(studio.clip_path(j.result.sha256))
            return (
                progress_html(j),
                j.id,
                made if made is not None else gr.skip(),
                editor_value(pid, made or number, open_takes),
                text,
                gr.skip(),
            )

        yield from follow(jobs, job, frame, final)

    def start(kind: str, pid: str, number: int, fn, label: str, draft: str | None = None):
        job, started = jobs.start(kind, pid, fn, label=label, version=number)
        if not started:
            notice(f"{job.label} is running: wait for it or press Stop")
        yield from followed(pid, number, job, draft if started else None)

    def saved_only(version, value, what: str = "keyframes and takes are made from") -> None:
        """Keyframes and takes are made from the saved version: a board with unsaved edits is refused."""
        if value and json_to_board(version.storyboard, value) != version.storyboard:
            raise ValueError(f"save the storyboard first: {what} the saved version (v{version.number})")

    def kept_note(carried: int, number: int) -> str:
        return f" Your unsaved edits stay unsaved, over v{number}: Save makes them a version." if carried else ""

    def unsaved(version, value) -> int:
        """`version`'s number when the board holds unsaved edits over it (a track placed meanwhile keeps them on,
        over the version it makes), else 0."""
        return version.number if value and json_to_board(version.storyboard, value) != version.storyboard else 0

    def film_track_shown(board):
        """The film options' track line and its ✕: shown while a track of the creator's plays under the film."""
        on = bool(board.film.music_track)
        return FILM_TRACK if on else NO_FILM_TRACK, gr.Button(visible=on)

    @guard
    def load(pid, v):
        """The board of the version, and the job this screen runs for the project, if any (then its outcome)."""
        if not pid:
            yield (
                None,
                gr.Dropdown(choices=[ALL_SCENES], value=ALL_SCENES),
                "",
                *[gr.skip()] * (len(opts) + 1),
                "",
                "",
                gr.skip(),
                gr.skip(),
                "",
                gr.Button(visible=False),
            )
            return
        version = studio.version(pid, ver(v))
        b = version.storyboard
        scenes = [(scene_label(i, sc, start), sc.scene_id) for i, (sc, start) in enumerate(scene_starts(b), 1)]
        f = b.film
        job = next((j for j in map(lambda k: jobs.active(pid, k), BOARD_KINDS) if j is not None), None)
        yield (
            editor_value(pid, version.number),
            gr.Dropdown(choices=[(ALL_SCENES, ALL_SCENES), *scenes], value=ALL_SCENES),
            f"v{version.number}: {len(b.shots())} shots in {len(b.scenes)} scene(s), {b.duration():.0f}s",
            f.title_card,
            f.title_seconds,
            f.crossfade,
            f.burn_subtitles,
            f.loudness,
            f.music_level,
            f.effects_level,
            f.ducking,
            f.captions,
            f.audio_description,
            f.tier,
            f.channels,
            stills_line(),
            progress_html(job),
            job.id if job else "",
            gr.skip(),
            gr.skip(),
            *film_track_shown(b),
        )
        if job is not None:
            for prog, job_id, number, value, text, shot_clip in followed(pid, version.number, job):
                yield (
                    value,
                    gr.skip(),
                    text,
                    *[gr.skip()] * (len(opts) + 1),
                    prog,
                    job_id,
                    number,
                    shot_clip,
                    *skips[:2],
                )

    @guard
    def save_board(
        pid,
        v,
        value,
        tc,
        ts,
        cf,
        bs,
        loud="web",
        music=-8.0,
        effects=-14.0,
        duck=True,
        caps="sdh",
        described=False,
        tier=None,
        channels=None,
    ):
        """Only what the person changed since the page got the board is saved, onto the newest board (a take
        picked or a keyframe drawn in another tab meanwhile stays); the same field changed there too is refused."""
        pid = need_project(pid)
        base = studio.version(pid, ver(v))
        loaded = loaded_board(base.storyboard, value)
        board = json_to_board(loaded, value)
        board = studio.with_film_options(
            board, film_options(tc, ts, cf, bs, loud, music, effects, duck, caps, described, tier, channels)
        )
        board = type(board).model_validate(board.model_dump())
        nv, branched, made = studio.save_merged(pid, base.number, loaded, board, "storyboard edit")
        if not made:
            return (
                nv.number if nv.number != base.number else gr.skip(),
                editor_value(pid, nv.number, saved_from=base.number),
                (f"Nothing changed since v{nv.number}: no new version."),
            )
        return nv.number, editor_value(pid, nv.number, saved_from=base.number), saved_message(nv, branched)

    @guard
    def play(pid, v, value, evt: gr.EventData):
        pid = need_project(pid)
        board = json_to_board(studio.version(pid, ver(v)).storyboard, value, fresh_ids=False)
        found = studio.shot_clips(board).get(evt.shot_id)  # its final when cached, else its draft
        if found is None:
            notice(f"shot {evt.shot_id} has no clip as it stands: press ⟳ Render shot")
            return gr.skip()
        return str(studio.clip_path(found[0].sha256))

    @guard
    def render_shot(pid, v, value, tier, evt: gr.EventData):
        """⟳ Render shot: the shot as the card has it (saved or not), at the switch's tier; nothing is saved."""
        pid = need_project(pid)
        version = studio.version(pid, ver(v))
        shot_id = CardAction.of({"shot_id": evt.shot_id, "action": "draw"}).shot_id
        tier = tier if tier in ("draft", "final") else version.storyboard.film.tier
        board = json_to_board(version.storyboard, value, fresh_ids=False)
        yield from start(
            "render",
            pid,
            version.number,
            lambda p, c: studio.render_shot(board, shot_id, p, c, tier),
            f"render shot {shot_id} ({tier})",
            draft=value,
        )

    @guard
    def finalize(pid, v, value, evt: gr.EventData):
        """A card's or a scene header's Finalize: that shot (or scene) rendered at the final tier with the draft's
        seed, keyframe and take (the saved version's: unsaved edits are refused), and the film cut again from every
        shot's latest clip, so the Render screen and the Screening room show it at once."""
        a = Finalize.of(getattr(evt, "_data", None))
        pid = need_project(pid)
        version = studio.version(pid, ver(v))
        saved_only(version, value, "Finalize renders")
        n = version.number
        scope = studio.scope(pid, n, scene=a.scene_id or None, shots=a.shot_id or None)
        yield from start(
            "render",
            pid,
            n,
            lambda p, c: studio.render(pid, n, p, c, scope, tier="final"),
            f"finalise {scope.label()} of v{n}",
        )

    @guard
    def card_action(pid, v, value, evt: gr.EventData):
        """A card's keyframe or takes button: quick changes at once, renders and screenings as a job."""
        a = CardAction.of(getattr(evt, "_data", None))
        pid = need_project(pid)
        version = studio.version(pid, ver(v))
        saved_only(version, value)
        n, sid = version.number, a.shot_id

        def now(number: int, text: str, open_takes: str | None = None):
            text += branch_note(studio, pid, number)
            return "", "", number, editor_value(pid, number, open_takes), text, gr.skip()

        if a.action == "upload":
            nv = studio.set_keyframe(pid, sid, uploaded_file(a.path), n)
            yield now(nv.number, f"v{nv.number}: shot {sid}'s keyframe is the uploaded picture.")
        elif a.action == "pick":
            nv = studio.pick_keyframe(pid, sid, a.keyframe_id, n)
            yield now(nv.number, f"v{nv.number}: shot {sid} uses an earlier keyframe again.")
        elif a.action == "clear":
            nv = studio.clear_keyframe(pid, sid, n)
            yield now(nv.number, f"v{nv.number}: shot {sid} has no keyframe: it renders from its prompt again.")
        elif a.action == "use":
            res = studio.pick_take(pid, sid, a.take_id, n)
            yield now(res.version.number, pick_message(res), sid)
        elif a.action == "draw":
            yield from start(
                "keyframes", pid, n, lambda p, c: studio.render_keyframes(pid, [sid], n, p, c), f"keyframe of {sid}"
            )
        elif a.action == "reroll":
            yield from start(
                "keyframes", pid, n, lambda p, c: studio.reroll_keyframe(pid, sid, n, p, c), f"new keyframe for {sid}"
            )
        elif a.action == "takes":
            yield from start(
                "takes", pid, n, lambda p, c: studio.render_takes(pid, sid, a.n, n, p, c), f"{a.n} take(s) of {sid}"
            )
        elif a.action == "replace":
            yield from start(
                "takes", pid, n, lambda p, c: studio.replace_take(pid, sid, n, p, c), f"a new take for {sid}"
            )
        elif a.action == "vote":
            yield from start(
                "critique",
                pid,
                n,
                lambda p, c: studio.vote_takes(pid, sid, n, p, c),
                f"the panel watching {sid}'s takes",
            )

    @guard
    def scene_track(pid, v, value, evt: gr.EventData):
        """A scene header's track button: the uploaded file placed over the scene (checked on the server: a
        refusal is one line and saves nothing), or taken away."""
        a = TrackAction.of(getattr(evt, "_data", None))
        pid = need_project(pid)
        version = studio.version(pid, ver(v))
        if a.scene_id not in {sc.scene_id for sc in version.storyboard.scenes}:
            raise ValueError(f"save the storyboard first: scene {a.scene_id} is new (not in v{version.number} yet)")
        carried = unsaved(version, value)  # the track goes on the saved version; unsaved edits stay unsaved
        upload = uploaded_file(a.path) if a.action == "upload" else None
        nv, made = studio.set_music_track(pid, a.scene_id, upload, version.number)
        if not made:
            text = f"v{nv.number}: nothing changed (scene {a.scene_id} already {'plays that track' if upload else 'has no track'})."
        elif upload is not None:
            text = f"v{nv.number}: scene {a.scene_id} plays the uploaded track instead of its cue."
        else:
            text = f"v{nv.number}: scene {a.scene_id} has no track: its cue plays again."
        text += branch_note(studio, pid, nv.number) + kept_note(carried, nv.number)
        return "", "", nv.number, editor_value(pid, nv.number, carried_from=carried), text, gr.skip()

    @guard
    def film_track(pid, v, value, path=None):
        """The film options' track: the uploaded file under the whole film (`path` None: taken away), through the
        scene button's path (`studio.set_music_track`, the same checks: a refusal is one line, nothing saved)."""
        pid = need_project(pid)
        version = studio.version(pid, ver(v))
        carried = unsaved(version, value)  # the track goes on the saved version; unsaved edits stay unsaved
        upload = uploaded_file(str(path)) if path is not None else None
        nv, made = studio.set_music_track(pid, None, upload, version.number)
        if not made:
            text = (
                f"v{nv.number}: nothing changed (the film already {'plays that track' if upload else 'has no track'})."
            )
        elif upload is not None:
            text = (
                f"v{nv.number}: the uploaded track plays under the whole film (instead of every scene's cue or track)."
            )
        else:
            text = f"v{nv.number}: no track under the whole film: each scene's cue or track plays again."
        text += branch_note(studio, pid, nv.number) + kept_note(carried, nv.number)
        board = nv.storyboard
        return (
            "",
            "",
            nv.number,
            editor_value(pid, nv.number, carried_from=carried),
            text,
            gr.skip(),
            *film_track_shown(board),
        )

    @guard
    def draw_keyframes(pid, v, value, scene):
        """Keyframes for every shot without one (of the chosen scene, or the whole board), as one job."""
        if value == NOT_CONFIRMED:  # the creator said no when asked what it re-renders: nothing changes
            yield *(gr.skip(),) * 4, "Not drawn: nothing changed.", gr.skip()
            return
        pid = need_project(pid)
        version = studio.version(pid, ver(v))
        saved_only(version, value)
        board, n = version.storyboard, version.number
        within = board.shots()
        if scene and scene != ALL_SCENES:
            sc = next((s for s in board.scenes if s.scene_id == scene), None)
            if sc is None:
                raise ValueError(f"v{n} has no scene {scene!r}: reload the page")
            within = sc.shots
        shots = [s.shot_id for s in within if not s.keyframe]
        if not shots:
            raise ValueError(
                f"every shot {'of this scene ' if len(within) < len(board.shots()) else ''}has a "
                "keyframe: ⟳ New keyframe on a card draws another"
            )
        yield from start(
            "keyframes",
            pid,
            n,
            lambda p, c: studio.render_keyframes(pid, shots, n, p, c),
            f"keyframes for {len(shots)} shot(s)",
        )

    @guard
    def screen_keyframes(pid, v):
        pid = need_project(pid)
        version = studio.version(pid, ver(v))
        n = version.number
        missing = [s.shot_id for s in version.storyboard.shots() if not s.keyframe]
        if missing:
            raise ValueError(
                f"{len(missing)} shot(s) have no keyframe yet ({', '.join(missing[:5])}): press ✦ Draw keyframes first"
            )
        yield from start(
            "critique",
            pid,
            n,
            lambda p, c: studio.screen_keyframes(pid, n, p, c),
            f"the panel screening v{n}'s keyframes",
        )

    @guard
    def stop_job(pid, job_id):
        job = jobs.get(job_id or "")
        if job is None or job.project != pid:
            job = next((j for j in map(lambda k: jobs.active(pid or "", k), BOARD_KINDS) if j is not None), None)
        return ask_to_stop(jobs, job)

    opts = [
        title_card,
        title_seconds,
        crossfade,
        burn,
        loudness,
        music_level,
        effects_level,
        ducking,
        captions,
        described,
        default_tier_opt,
        channels_opt,
    ]
    ctx.tabs["storyboard"].select(
        guard(default_tier(studio)),
        [ctx.pid, ctx.version],
        [board_tier, board_tier_note],
        api_visibility="private",
        show_progress="hidden",
    )
    ctx.tabs["storyboard"].select(
        load,
        [ctx.pid, ctx.version],
        [editor, scene_pick, message, *opts, stills, progress, job_box, ctx.version, clip, *film_track_outs],
        api_name="load_storyboard",
        show_progress="hidden",
    )
    save.click(
        save_board, [ctx.pid, ctx.version, editor, *opts], [ctx.version, editor, message], api_name="save_storyboard"
    ).then(  # a new default tier moves the switch to it
        guard(default_tier(studio)),
        [ctx.pid, ctx.version],
        [board_tier, board_tier_note],
        api_visibility="private",
        show_progress="hidden",
    )
    film_track_btn.upload(
        film_track,
        [ctx.pid, ctx.version, editor, film_track_btn],
        board_outs + film_track_outs,
        api_visibility="private",
        show_progress="hidden",
    )
    film_track_clear.click(
        film_track,
        [ctx.pid, ctx.version, editor],
        board_outs + film_track_outs,
        api_visibility="private",
        show_progress="hidden",
    )
    editor.play(play, [ctx.pid, ctx.version, editor], clip, api_visibility="private")
    editor.scene_track(
        scene_track, [ctx.pid, ctx.version, editor], board_outs, api_visibility="private", show_progress="hidden"
    )
    editor.render_shot(
        render_shot,
        [ctx.pid, ctx.version, editor, board_tier],
        board_outs,
        api_visibility="private",
        show_progress="hidden",
    )
    editor.card(
        card_action, [ctx.pid, ctx.version, editor], board_outs, api_visibility="private", show_progress="hidden"
    )
    ctx.refresh_status(  # the status bar's render line counts the film's drafts
        editor.finalize(
            finalize, [ctx.pid, ctx.version, editor], board_outs, api_visibility="private", show_progress="hidden"
        )
    )
    keyframes_btn.click(
        draw_keyframes,
        [ctx.pid, ctx.version, editor, scene_pick],
        board_outs,
        api_name="draw_keyframes",
        show_progress="hidden",
        js=CONFIRM_DRAW,
    )
    screen_btn.click(
        screen_keyframes, [ctx.pid, ctx.version], board_outs, api_name="screen_keyframes", show_progress="hidden"
    )
    stop.click(stop_job, [ctx.pid, job_box], progress, api_visibility="private", show_progress="hidden")
    scene_pick.change(
        None,
        scene_pick,
        None,
        js="""(scene) => {
      document.querySelectorAll('#board .scene').forEach((s) => {
        s.hidden = scene !== '(all scenes)' && s.dataset.scene !== scene; });
      return []; }""",
    )
