"""References and keyframes: the image-first half of the workflow.

Characters and locations carry reference images (uploaded, or generated from their description); each shot
can carry an approved keyframe, rendered with the still-image backend and conditioned on the references of
the characters in it (and of its scene's location), re-rolled with a new seed, picked from earlier candidates,
or replaced by an upload. Every candidate is kept (the `keyframes` table); approving one is a change to the
storyboard, a small action: it goes into the working draft (a draft child of a finished version, or the open draft
itself amended; storage.repository.Unit.fold). The panel can screen the keyframe storyboard before any
video is rendered: the same critique loop, recorded as a keyframe screening.

Stills are stored as PNG in the media store, re-encoded from what was uploaded (so no metadata rides along).
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from pydantic import BaseModel

from agents.base import FilmView, SampledFrame
from app.context import MAX_UPLOAD_PIXELS, Context, ProgressFn, derived_seed, no_progress
from app.errors import StudioError
from app.services.clips import Clips
from app.services.projects import Projects
from app.services.watching import Watching
from generation.base import CancelToken, RenderError, compose_prompt
from generation.images import ImageBackend, ImageRequest, image_key
from storage.records import ClipsAffected, CritiqueRecord, KeyframeRecord, MediaRecord, Version
from storage.run import DoneProgress, ShotProgress
from storage.schema import MAX_REFERENCES, Shot, Storyboard, new_id, utcnow

MAX_UPLOAD_BYTES = 32 * 2**20
MAX_SIDE = 4096  # larger uploads are scaled down to this side
UPLOAD_FORMATS = {"PNG", "JPEG", "WEBP"}
# A keyframe or reference not made yet, in a storyboard that asks what an action would change (`clips_affected`).
PENDING_IMAGE = hashlib.sha256(b"chief: an image not made yet").hexdigest()


class ShotKeyframes(BaseModel):
    """One storyboard card's keyframe state: the approved still and every candidate, newest first."""

    shot_id: str
    prompt: str
    approved: str | None  # sha256 of the approved keyframe in this version
    candidates: list[KeyframeRecord]


class KeyframesResult(BaseModel):
    """What a keyframe action made: the new version, and the candidates it rendered or reused."""

    version: Version
    keyframes: list[KeyframeRecord]
    rendered: int
    reused: int
    label: str  # what drew them


class Keyframes:
    def __init__(self, ctx: Context, projects: Projects, clips: Clips, watching: Watching) -> None:
        self.ctx, self.projects, self.clips, self.watching = ctx, projects, clips, watching
        self._images: ImageBackend | None = None

    # ------------------------------------------------------------------ the still-image backend
    @property
    def images(self) -> ImageBackend:
        """The still-image backend (built on first use); a one-line error when there is none."""
        if self._images is None:
            from app.factory import make_images

            images = make_images(self.ctx.config)
            if images is None:
                raise StudioError(
                    "no image model: upload a keyframe or reference picture, or set CHIEF_IMAGE_MODEL "
                    "to a FLUX, SDXL, SD3 or Qwen-Image pipeline (a local folder or a cached hub id)"
                )
            try:
                getattr(images, "family", None)  # a diffusers model: its folder and pipeline class, read now
            except RenderError as e:
                raise StudioError(f"CHIEF_IMAGE_MODEL: {e}") from None
            self._images = images
        return self._images

    def label(self) -> str:
        """What draws stills, for the status line (loads nothing)."""
        try:
            return self.images.label
        except StudioError as e:
            return "none (set CHIEF_IMAGE_MODEL)" if not self.ctx.config.image_model else f"unavailable: {e}"

    def image_path(self, sha256: str) -> Path:
        return self.ctx.media.path(sha256, "png")

    # ------------------------------------------------------------------ references
    def add_reference(
        self, pid: str, name: str, image: Path, *, location: bool = False, base: int | str | None = None
    ) -> Version:
        """An uploaded reference image for a character (or location): the working draft."""
        _room_for_one(_subject(self.projects.version(pid, base).storyboard, name, location))  # before storing
        scratch = self.ctx.media.scratch()
        try:
            media = self.ctx.media.put(read_still(Path(image), scratch), "png")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return self._set_references(
            pid, name, location, base, lambda refs: [*refs, media.sha256], [media], f"reference for {name} (upload)"
        )

    def generate_reference(
        self,
        pid: str,
        name: str,
        *,
        location: bool = False,
        seed: int | None = None,
        base: int | str | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
    ) -> Version:
        """A reference image generated from the character's (or location's) description: the working draft."""
        v = self.projects.version(pid, base)
        item = _subject(v.storyboard, name, location)
        _room_for_one(item)
        n = len(item.references)
        look = "character reference, full figure, plain background" if not location else "establishing view"
        req = ImageRequest(
            subject=f"reference {name}",
            prompt=compose_prompt(f"{name}: {item.description}, {look}", v.storyboard.style_guide),
            seed=derived_seed(name, "reference", n) if seed is None else seed,
            width=v.storyboard.width,
            height=v.storyboard.height,
            caption=name,
        )
        scratch = self.ctx.media.scratch()
        try:
            media, _, _ = self._still(req, scratch, progress or no_progress, cancel or CancelToken(), 0, 1, name)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return self._set_references(
            pid,
            name,
            location,
            v.number,
            lambda refs: [*refs, media.sha256],
            [media],
            f"reference for {name} (generated, seed {req.seed})",
        )

    def clear_references(
        self, pid: str, name: str, *, location: bool = False, base: int | str | None = None
    ) -> Version:
        return self._set_references(pid, name, location, base, lambda refs: [], [], f"references of {name} cleared")

    def _set_references(self, pid, name, location, base, change, media: list[MediaRecord], message: str) -> Version:
        with self.ctx.repo.write() as u:
            v = u.version(pid, base)
            board = v.storyboard.model_copy(deep=True)
            item = _subject(board, name, location)
            item.references = change(item.references)
            _room_for_one(item, 0)
            u.add_media(media)
            return u.fold(v, board, "reference", message)[0]

    # ------------------------------------------------------------------ keyframes
    def render_keyframes(
        self,
        pid: str,
        shots: list[str] | None = None,
        ref: int | str | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
    ) -> KeyframesResult:
        """A keyframe for each chosen shot (default: every shot without one), approved in the working draft.
        Each shot's first keyframe uses the shot's seed; a still rendered before for the same request is reused."""
        v = self.projects.version(pid, ref)
        chosen = _chosen(v, shots)
        ids = [s.shot_id for s in chosen]
        named = ", ".join(ids) if len(ids) <= 3 else f"{len(ids)} shots ({ids[0]}–{ids[-1]})"
        return self._render(v, [(s, s.seed) for s in chosen], progress, cancel, f"keyframes for {named}")

    def reroll(
        self,
        pid: str,
        shot_id: str,
        ref: int | str | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
    ) -> KeyframesResult:
        """A new keyframe for one shot with a new seed, approved in the working draft; the old one stays a candidate."""
        v = self.projects.version(pid, ref)
        shot = self.projects.shot(v, shot_id)
        with self.ctx.repo.read() as u:
            seeds = {k.seed for k in u.keyframes(pid, shot_id)} | {shot.seed}
        n = len(seeds)
        while (seed := derived_seed(shot_id, "keyframe", n)) in seeds:
            n += 1
        return self._render(v, [(shot, seed)], progress, cancel, f"re-roll keyframe of {shot_id} (seed {seed})")

    def _render(
        self,
        v: Version,
        todo: list[tuple[Shot, int]],
        progress: ProgressFn | None,
        cancel: CancelToken | None,
        message: str,
    ) -> KeyframesResult:
        progress, cancel = progress or no_progress, cancel or CancelToken()
        label = self.images.label  # no image model: say so before anything else
        made, counts = [], {"rendered": 0, "reused": 0}
        scratch = self.ctx.media.scratch()
        try:
            for i, (shot, seed) in enumerate(todo):
                cancel.raise_if_cancelled()
                _, record, status = self._still(
                    self.keyframe_request(v.storyboard, shot, seed),
                    scratch,
                    progress,
                    cancel,
                    i,
                    len(todo),
                    shot.shot_id,
                    v,
                )
                made.append(record)
                counts[status] += 1
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        chosen = {k.shot_id: k.sha256 for k in made}
        version = self._approve(v.project_id, v.number, chosen, message)
        progress(DoneProgress(shots=len(todo)))
        return KeyframesResult(version=version, keyframes=made, label=label, **counts)

    def keyframe_request(self, board: Storyboard, shot: Shot, seed: int) -> ImageRequest:
        """A shot's keyframe: its composed prompt, the video's frame size, and the references of its characters
        (the first of each) and of its scene's location."""
        video = self.ctx.backend.resolve(
            self.clips.request_for(board, board.shots().index(shot), continuity=False).with_(
                keyframe=None, keyframe_sha256=None, references=(), references_sha256=()
            )
        )
        bible = {c.name: c for c in board.characters}
        places = {loc.name: loc for loc in board.locations}
        items = [bible[n] for n in shot.characters if n in bible]
        items += [places[loc] for loc in [board.scene_of(shot.shot_id).location] if loc in places]
        refs = tuple(item.references[0] for item in items if item.references)
        width, height, _, _ = video.size()
        return ImageRequest(
            subject=f"keyframe {shot.shot_id}",
            prompt=video.prompt,
            negative_prompt=shot.negative_prompt,
            seed=seed,
            width=width,
            height=height,
            caption=shot.prompt,
            references=tuple(str(self.image_path(r)) for r in refs),
            references_sha256=refs,
        )

    def _still(
        self,
        req: ImageRequest,
        scratch: Path,
        progress: ProgressFn,
        cancel: CancelToken,
        i: int,
        n: int,
        subject_id: str,
        v: Version | None = None,
    ) -> tuple[MediaRecord, KeyframeRecord | None, str]:
        """Render (or reuse) one still; as a keyframe candidate of `v` when `v` is given (stored at once, like a
        clip, so a retry after a failure reuses it). Returns (media, candidate, "rendered" or "reused")."""
        images = self.images
        try:
            resolved = images.resolve(req)
            key = image_key(images, resolved)
            with self.ctx.repo.read() as u:
                known = u.keyframe_by_key(key)
            status = "reused"
            if known is not None and self.ctx.media.find(known.sha256) is not None:
                with self.ctx.repo.read() as u:
                    media = u.media([known.sha256])[known.sha256]
            else:

                def on_step(done: int, total: int) -> None:
                    progress(
                        ShotProgress(
                            stage="keyframe",
                            shot_index=i,
                            shots=n,
                            shot_id=subject_id,
                            step=done,
                            steps=total,
                            status="rendering",
                        )
                    )

                out = scratch / f"{i:04d}.png"
                images.render(resolved, out, on_step, cancel)
                media, status = self.ctx.media.put(out, "png"), "rendered"
        except RenderError as e:
            raise StudioError(f"{req.subject}: {e}") from None
        progress(
            ShotProgress(stage="keyframe", shot_index=i, shots=n, shot_id=subject_id, step=1, steps=1, status=status)
        )
        if v is None:
            return media, None, status
        width, height = resolved.size()
        record = KeyframeRecord(
            id=new_id("kf"),
            version=v.number,
            shot_id=subject_id,
            sha256=media.sha256,
            source="generated",
            seed=req.seed,
            backend=images.name,
            model=images.model,
            label=images.label,
            key=key,
            width=width,
            height=height,
            created_at=utcnow(),
        )
        with self.ctx.repo.write() as u:
            u.add_media([media])
            u.add_keyframe(v, record)
        return media, record, status

    def set_keyframe(self, pid: str, shot_id: str, image: Path, ref: int | str | None = None) -> Version:
        """Replace a shot's keyframe by an uploaded image: kept as a candidate, approved in the working draft."""
        v = self.projects.version(pid, ref)
        self.projects.shot(v, shot_id)
        scratch = self.ctx.media.scratch()
        try:
            png = read_still(Path(image), scratch)
            from PIL import Image

            with Image.open(png) as im:
                size = im.size
            media = self.ctx.media.put(png, "png")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        record = KeyframeRecord(
            id=new_id("kf"),
            version=v.number,
            shot_id=shot_id,
            sha256=media.sha256,
            source="uploaded",
            label="uploaded",
            width=size[0],
            height=size[1],
            created_at=utcnow(),
        )
        with self.ctx.repo.write() as u:
            u.add_media([media])
            u.add_keyframe(v, record)
        return self._approve(pid, v.number, {shot_id: media.sha256}, f"keyframe of {shot_id} uploaded")

    def pick_keyframe(self, pid: str, shot_id: str, keyframe_id: str, ref: int | str | None = None) -> Version:
        """Approve an earlier candidate of the shot: the working draft."""
        with self.ctx.repo.read() as u:
            k = u.keyframe(pid, keyframe_id)
        if k.shot_id != shot_id:
            raise StudioError(f"keyframe {keyframe_id} belongs to shot {k.shot_id}, not {shot_id}")
        return self._approve(pid, ref, {shot_id: k.sha256}, f"keyframe of {shot_id}: candidate from v{k.version}")

    def clear_keyframe(self, pid: str, shot_id: str, ref: int | str | None = None) -> Version:
        """No keyframe for the shot: it renders from text (or continues from the previous shot) again."""
        return self._approve(pid, ref, {shot_id: None}, f"keyframe of {shot_id} cleared")

    def _approve(self, pid: str, ref: int | str | None, chosen: dict[str, str | None], message: str) -> Version:
        with self.ctx.repo.write() as u:
            v = u.version(pid, ref)
            board = v.storyboard.model_copy(deep=True)
            for shot in board.shots():
                if shot.shot_id in chosen:
                    shot.keyframe = chosen[shot.shot_id]
            missing = set(chosen) - {s.shot_id for s in board.shots()}
            if missing:
                raise StudioError(f"v{v.number} has no shot {sorted(missing)[0]!r}")
            if board == v.storyboard:
                raise StudioError("that keyframe is already the approved one: nothing changes")
            return u.fold(v, board, "keyframe", message)[0]

    def shot_keyframes(self, pid: str, ref: int | str | None = None) -> list[ShotKeyframes]:
        """Every shot's approved keyframe and candidates, in film order (a storyboard card each)."""
        v = self.projects.version(pid, ref)
        with self.ctx.repo.read() as u:
            candidates = u.keyframes(pid)
        return [
            ShotKeyframes(
                shot_id=s.shot_id,
                prompt=s.prompt,
                approved=s.keyframe,
                candidates=[k for k in reversed(candidates) if k.shot_id == s.shot_id],
            )
            for s in v.storyboard.shots()
        ]

    # ------------------------------------------------------------------ before an action: what it re-renders
    def clips_affected(
        self,
        pid: str,
        action: str,
        ref: int | str | None = None,
        *,
        shots: list[str] | None = None,
        name: str | None = None,
        location: bool = False,
    ) -> ClipsAffected:
        """How many clips an action would re-render, asked before it runs: "keyframes" (draw for `shots`, default
        every shot without one, as `render_keyframes` chooses), "reroll" (a new keyframe for `shots[0]`),
        "reference" (one more reference image of `name`) or "clear-references"."""
        return self._affected(self.projects.version(pid, ref), action, shots, name, location)

    def _affected(
        self, v: Version, action: str, shots: list[str] | None, name: str | None, location: bool, cached=None
    ) -> ClipsAffected:
        board = v.storyboard.model_copy(deep=True)
        if action in ("keyframes", "reroll"):
            chosen = [board.shot(s.shot_id) for s in _chosen(v, shots)]
            if action == "reroll" and len(chosen) != 1:
                raise StudioError("a re-roll is for one shot: name it")
            for s in chosen:
                s.keyframe = PENDING_IMAGE  # a still not drawn yet: differs from every keyframe there is
            what = (
                f"A new keyframe for {chosen[0].shot_id}"
                if action == "reroll"
                else f"Drawing keyframes for {len(chosen)} shot{'' if len(chosen) == 1 else 's'}"
            )
        elif action in ("reference", "clear-references") and name:
            item = _subject(board, name, location)
            item.references = [*item.references, PENDING_IMAGE] if action == "reference" else []
            what = f"{'A new reference for' if action == 'reference' else 'Clearing the references of'} {name}"
        else:
            raise StudioError(f"unknown action {action!r}: keyframes, reroll, reference or clear-references")
        return self.clips.clips_affected(v.storyboard, board, what, cached)

    def keyframe_effects(
        self, pid: str, ref: int | str | None = None, cached: dict | None = None
    ) -> dict[str, ClipsAffected]:
        """For every shot, what a new keyframe (drawn, re-rolled) would re-render, as `clips_affected` says for one
        shot (a test holds them equal): the shot, and the continuity shots after it in its chain. The storyboard
        cards ask with it before either runs; one read of the version, the cache and the chains for the board."""
        v = self.projects.version(pid, ref)
        board = v.storyboard
        cached = self.clips.cached_shots(board) if cached is None else cached  # the caller's, read for this board
        ids = [s.shot_id for s in board.shots()]
        out = {}
        for chain in self.clips.chains(board):
            for k, i in enumerate(chain):
                shots = [ids[j] for j in chain[k:]]
                out[ids[i]] = ClipsAffected(
                    action=f"{'A new' if board.shots()[i].keyframe else 'Drawing a'} keyframe for {ids[i]}",
                    shots=shots,
                    rendered=[s for s in shots if s in cached],
                    total=len(ids),
                )
        return out

    def reference_effects(self, pid: str, ref: int | str | None = None) -> dict[tuple[str, bool], dict]:
        """(name, is a location) -> {"add": …, "clear": …}: what one more reference, or none, would re-render, for
        every character and location (`clips_affected` for each, with one read of the cache)."""
        v = self.projects.version(pid, ref)
        cached = self.clips.cached_shots(v.storyboard)
        out = {}
        for location, items in ((False, v.storyboard.characters), (True, v.storyboard.locations)):
            for item in items:
                out[(item.name, location)] = {
                    key: self._affected(v, action, None, item.name, location, cached)
                    for key, action in (("add", "reference"), ("clear", "clear-references"))
                }
        return out

    # ------------------------------------------------------------------ keyframe screening
    def screen(
        self,
        pid: str,
        ref: int | str | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
    ) -> list[CritiqueRecord]:
        """The panel screens the keyframe storyboard (one still per shot, before any video), recorded as a
        keyframe screening; the refiner reads it like any critique."""
        v = self.projects.version(pid, ref)
        timeline = v.storyboard.timeline()
        stills = [(s, start, s.keyframe) for s, start, _ in timeline if s.keyframe]
        missing = [s.shot_id for s, _, _ in timeline if not s.keyframe]
        if missing:
            raise StudioError(
                f"v{v.number}: {len(missing)} shot(s) have no keyframe ({', '.join(missing[:5])}): "
                "draw or upload their keyframes first"
            )
        frames = [
            SampledFrame(shot_id=s.shot_id, index=0, time=round(start, 3), path=str(self.image_path(sha)))
            for s, start, sha in stills
        ]
        with self.ctx.repo.read() as u:
            by_sha = {k.sha256: k.label for k in u.keyframes(pid)}
        made_by = sorted({by_sha.get(sha, "uploaded") for _, _, sha in stills})
        film = FilmView(
            storyboard=v.storyboard,
            frames=frames,
            intent=self.projects.project(pid).idea or v.storyboard.logline,
            references=self.watching.references(v),
            renderer_label=f"keyframe screening: one still per shot, no motion yet ({'; '.join(made_by)})",
        )
        return self.watching.screen(v, film, progress, screening="keyframes", cancel=cancel)


def _chosen(v: Version, shots: list[str] | None) -> list[Shot]:
    """The shots a keyframe drawing is for: `shots`, else every shot without a keyframe; a one-line error when
    one is unknown or there is none."""
    board = v.storyboard
    unknown = sorted(set(shots or ()) - {s.shot_id for s in board.shots()})
    if unknown:
        raise StudioError(f"v{v.number} has no shot {unknown[0]!r}")
    chosen = [s for s in board.shots() if (s.shot_id in shots if shots else not s.keyframe)]
    if not chosen:
        raise StudioError(
            f"every shot of v{v.number} has a keyframe: re-roll one (--reroll SHOT) or name shots (--shots)"
        )
    return chosen


def _subject(board: Storyboard, name: str, location: bool):
    items = board.locations if location else board.characters
    found = next((item for item in items if item.name == name), None)
    if found is None:
        known = ", ".join(item.name for item in items) or "none"
        raise StudioError(f"no {'location' if location else 'character'} {name!r} in the storyboard (known: {known})")
    return found


def _room_for_one(item, more: int = 1) -> None:
    if len(item.references) + more > MAX_REFERENCES:
        raise StudioError(f"{item.name} has {MAX_REFERENCES} reference images already (the most it may have)")


def read_still(path: Path, scratch: Path) -> Path:
    """An uploaded image, checked and re-encoded as an RGB PNG in `scratch` (no metadata survives). Refuses, in one
    line, anything that is not a PNG, JPEG or WebP within the size limits."""
    from PIL import Image, UnidentifiedImageError

    if not path.is_file():
        raise StudioError(f"{path.name}: no such file")
    if path.stat().st_size > MAX_UPLOAD_BYTES:
        raise StudioError(f"{path.name}: larger than {MAX_UPLOAD_BYTES >> 20} MB")
    try:
        with Image.open(path) as im:
            if im.format not in UPLOAD_FORMATS:
                raise StudioError(f"{path.name}: a {im.format} image; use PNG, JPEG or WebP")
            if im.width * im.height > MAX_UPLOAD_PIXELS:
                raise StudioError(f"{path.name}: {im.width}x{im.height} is more than {MAX_UPLOAD_PIXELS:,} pixels")
            im.verify()
        with Image.open(path) as im:
            rgb = im.convert("RGB")
    except StudioError:
        raise
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError) as e:
        raise StudioError(f"{path.name}: not a readable PNG, JPEG or WebP image ({type(e).__name__})") from None
    rgb.thumbnail((MAX_SIDE, MAX_SIDE))
    out = scratch / f"upload-{new_id('i')}.png"
    rgb.save(out, format="PNG")
    return out
