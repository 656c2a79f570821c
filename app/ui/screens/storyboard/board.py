"""The Storyboard's values: the board as the editor's JSON and back (`board_json` / `json_to_board`: a 120-shot board
is one value, not hundreds of Gradio components), the cards' typed requests (a track, Finalize, a line's ▶), the
scene picker's labels and the film options the controls set."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from app.ui.common import media_url

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
