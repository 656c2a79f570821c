"""The Studio: the whole co-creation loop as one API, wired from one service per concern.

    projects.py   projects, the version tree, the panel and personas, film options and picture
    personas.py   building a persona from a viewer's comments, calibrating one against their ratings
    planning.py   an idea (or a hand-written storyboard) -> v1
    audio.py      characters' voices, the film's sound (lines, music cues, effects, the mix)
    clips.py      shot requests and continuity, the clip key, the clip cache, clip files, frames and thumbnails
    rendering.py  the render schedule and the render record (film.py assembles)
    watching.py   the critics' panel
    refining.py   notes, proposals, accepting edits, agent cost
    keyframes.py  reference images, one keyframe per shot, the keyframe screening
    takes.py      several takes of a shot, picking one, the panel's votes on them
    consistency.py  how alike each character looks across shots (an image-embedding model measures it)
    accounts.py   accounts of a shared server (storage.owners says whose projects a read may touch)

The CLI and the web app call the Studio, never the database or a backend directly. Every action is one
transaction: it completes or leaves the project as it was.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from pydantic import BaseModel

from app import agent_settings
from app.agent_settings import AgentSettings
from app.config import Config
from app.context import AgentSet, Context, ProgressFn
from app.errors import RenderFailed, StudioError
from app.server.accounts import Accounts
from app.server.queue import recorded_jobs
from app.services.audio import Audio, Cast
from app.services.classroom import Classroom
from app.services.clips import Clips
from app.services.consistency import Consistency, ConsistencyReport, Source
from app.services.keyframes import Keyframes, KeyframesResult, ShotKeyframes
from app.services.loras import Loras
from app.services.personas import PersonaBuild, PersonaCalibration, Personas
from app.services.planning import Planning
from app.services.projects import Projects
from app.services.refining import AcceptResult, EarlierNote, Refining, UsageSummary
from app.services.rendering import Rendering
from app.services.sharing import Sharing
from app.services.takes import PickResult, ShotTakes, Takes
from app.services.watching import Watching
from generation.base import Backend, CancelToken
from storage.db import Database
from storage.edits import StoryboardDiff, edit_shot
from storage.media import MediaStore, remove_stale_temp_files
from storage.records import (
    RENDER_MEDIA_EXT,
    ClipRecord,
    ClipsAffected,
    CritiqueRecord,
    JobRecord,
    LastFilm,
    Project,
    ProposalRecord,
    RenderRecord,
    ShotRender,
    TakeScreeningRecord,
    Version,
    VersionNode,
)
from storage.repository import Repository
from storage.schema import Line, Lora, Note, Persona, Scope, Storyboard, Tier, parse_scope

__all__ = ["AcceptResult", "Active", "RenderFailed", "Studio", "StudioError", "UsageSummary"]


class Active(BaseModel):
    """What is making the films and answering as agents: always shown, never silently changed."""

    home: str
    backend: str
    backend_label: str
    model: str
    images_label: str = ""  # what draws stills (keyframes, references): a model, the animatic, or none
    agents: str
    llm_endpoint: str = ""
    critic_model: str = ""
    refiner_model: str = ""
    planner_model: str = ""
    image_model: str = ""
    embed_model: str = ""


class Studio:
    def __init__(self, config: Config, backend: Backend | None = None, agents: AgentSet | None = None) -> None:
        from app.factory import make_agents, make_backend

        # another process builds the same Studio from the configuration alone (app/workers.py): nothing handed in
        self.portable = backend is None and agents is None
        self.db = Database(config.db_path)
        self.media = MediaStore(config.media_root)
        self.ctx = Context(
            config=config,
            repo=Repository(self.db),
            media=self.media,
            make_backend=make_backend,
            make_agents=make_agents,
            _backend=backend,
            _agents=agents,
        )
        self._clean()
        self._projects = Projects(self.ctx)
        self._planning = Planning(self.ctx, self._projects)
        self._personas = Personas(self.ctx)
        self._clips = Clips(self.ctx)
        self._audio = Audio(self.ctx)
        self._rendering = Rendering(self.ctx, self._projects, self._clips, self._audio)
        self._watching = Watching(self.ctx, self._projects, self._clips)
        self._refining = Refining(self.ctx, self._projects, self._watching, self._audio)
        self._keyframes = Keyframes(self.ctx, self._projects, self._clips, self._watching)
        self._takes = Takes(self.ctx, self._projects, self._clips, self._watching)
        self._consistency = Consistency(self.ctx, self._projects, self._clips)
        self._loras = Loras(self.ctx, self._projects)
        self.accounts = Accounts(self.ctx)  # who may sign in, who acts (projects belong to accounts)
        self.sharing = Sharing(self.ctx)  # read-only shares, hand-over (app/services/sharing.py)
        self.classroom = Classroom(self.ctx)  # the teacher's report (app/services/classroom.py)

    def _clean(self) -> None:
        """What killed processes left: work folders, half-written cache files, stored files no row names."""
        self.media.clean_scratch()
        remove_stale_temp_files(self.config.home / "cache")

        def known() -> set[str]:
            with self.ctx.repo.read() as u:
                return u.media_shas()

        self.media.collect(known)

    # ------------------------------------------------------------------ what is active
    @property
    def config(self) -> Config:
        return self.ctx.config

    @property
    def backend(self) -> Backend:
        return self.ctx.backend

    @property
    def agents(self) -> AgentSet:
        return self.ctx.agents

    def reconfigure(self, config: Config) -> None:
        """Use new agent settings (e.g. an LLM endpoint entered in the web app). The data folder and the
        backend stay: the warm pipeline is kept."""
        if config.home != self.config.home:
            raise StudioError("the data folder cannot change while the studio is running")
        self.ctx.config = config
        self.ctx._agents = None  # rebuilt from the new config on next use

    def set_agent_settings(self, settings: AgentSettings, *, from_own_page: bool) -> str:
        """New agent endpoint, key and models for this server (see app/agent_settings.py); returns the notice."""
        config, notice = agent_settings.apply(self.config, settings, from_own_page=from_own_page)
        self.reconfigure(config)
        return notice

    def status(self) -> Active:
        return Active(
            **{
                **self.config.describe(),
                "backend_label": self.backend.label,
                "images_label": self.images_label(),
                "agents": self.agents.label,
            }
        )

    # ------------------------------------------------------------------ projects and versions (projects.py)
    def create_project(
        self,
        idea: str,
        minutes: float = 1.0,
        title: str | None = None,
        panel: list[str] | None = None,
        *,
        overrides: dict | None = None,
        tag: str = "",
        cancel: CancelToken | None = None,
        progress: ProgressFn | None = None,
    ) -> Version:
        return self._planning.create_project(
            idea, minutes, title, panel, overrides=overrides, tag=tag, cancel=cancel, progress=progress
        )

    def create_from_storyboard(self, board: Storyboard, panel: list[str] | None = None, idea: str = "") -> Version:
        return self._planning.create_from_storyboard(board, panel, idea)

    def projects(self, include_trashed: bool = False) -> list[Project]:
        return self._projects.list(include_trashed)

    def project(self, pid: str) -> Project:
        return self._projects.project(pid)

    def queued_jobs(self, live: bool = False, limit: int = 200) -> list[JobRecord]:
        """The web server's jobs as recorded (app/server/jobs.py), newest first: every account's for a teacher or the local
        owner, else the acting account's own; only queued and running ones with `live`."""
        return recorded_jobs(self.ctx.repo, live=live, limit=limit)

    def resolve_project(self, ref: str) -> str:
        return self._projects.resolve(ref)

    def find_tagged(self, tag: str) -> Version | None:
        return self._projects.find_tagged(tag)

    def trash_project(self, pid: str) -> Project:
        return self._projects.set_trashed(pid, True)

    def restore_project(self, pid: str) -> Project:
        return self._projects.set_trashed(pid, False)

    def version(self, pid: str, ref: int | str | None = None) -> Version:
        return self._projects.version(pid, ref)

    def versions(self, pid: str) -> list[VersionNode]:
        return self._projects.versions(pid)

    def save_storyboard(
        self, pid: str, board: Storyboard, base: int | str | None, message: str = "hand edit", kind: str = "edit"
    ) -> tuple[Version, bool]:
        return self._projects.save_storyboard(pid, board, base, message, kind)

    def save_merged(
        self, pid: str, page: int, loaded: Storyboard, mine: Storyboard, message: str = "storyboard edit"
    ) -> tuple[Version, bool, bool]:
        """A storyboard editor's save: only what the person changed (`loaded` → `mine`) onto the newest board
        (see `Projects.save_merged`); (version, branched, made)."""
        return self._projects.save_merged(pid, page, loaded, mine, message)

    def edit_shot(
        self, pid: str, shot_id: str, changes: list[tuple[str, str]], base: int | str | None = None
    ) -> tuple[Version, bool]:
        """A child of `base` with one shot's fields changed (`storage.edits.edit_shot`: fields, its scene's music,
        `line.N…`): the CLI twin of editing a card. Returns (version, branched); refuses an edit that changes
        nothing."""
        v = self.version(pid, base)
        board = edit_shot(v.storyboard, shot_id, changes)
        if board == v.storyboard:
            raise StudioError(f"nothing to change: shot {shot_id} already has these values")
        keys = ", ".join(dict.fromkeys(k for k, _ in changes))
        return self.save_storyboard(pid, board, v.number, f"edit {shot_id}: {keys}")

    def set_film_options(self, pid: str, changes: dict, base: int | str | None = None) -> tuple[Version, bool]:
        """How the shots are cut together: (the new version, True), or (`base`, False) when nothing changes."""
        return self._projects.set_film_options(pid, changes, base)

    def with_film_options(self, board: Storyboard, changes: dict) -> Storyboard:
        """A storyboard (a draft too) with its film options changed, checked as `set_film_options` checks them."""
        from app.services.projects import with_film_options

        return with_film_options(board, changes)

    def voices(self, pid: str, ref: int | str | None = None) -> dict[str, Cast]:
        """Every character's voice in version `ref`: stored with the character, or cast from the names."""
        return self._audio.cast(self.version(pid, ref).storyboard)

    def voice_cast(self, board: Storyboard) -> dict[str, Cast]:
        """Every character's voice in `board` (a draft too): stored with the character, or cast from the names."""
        return self._audio.cast(board)

    def set_voice(self, pid: str, character: str, changes: dict, base: int | str | None = None) -> tuple[Version, bool]:
        """`character`'s voice stored (`changes`: storage.schema.CharacterVoice fields over the voice they have now),
        a small action: into the working draft (see `Projects.fold`); (`base`, False) when nothing changes."""
        v = self.version(pid, base)
        board = self._audio.with_voice(v.storyboard, character, changes)
        if board == v.storyboard:
            return v, False
        what = ", ".join(f"{k}={val}" for k, val in changes.items()) or "kept"
        return self._projects.fold(v, board, "edit", f"voice {character}: {what}"), True

    def preview_voice(
        self, pid: str, character: str, out: Path, ref: int | str | None = None, changes: dict | None = None
    ) -> Path:
        """A line in `character`'s voice (as version `ref` has it, with `changes` tried: not stored) written to
        `out` (WAV)."""
        board = self.version(pid, ref).storyboard
        board = self._audio.with_voice(board, character, changes) if changes else board
        return self._audio.preview(board, character, out)

    def voice_sample(self, pid: str, character: str, changes: dict | None = None, ref: int | str | None = None) -> Path:
        """A line in `character`'s voice, with `changes` tried (not stored), kept in the media store (the web page
        plays it; nothing names it, so the store's collection removes it later)."""
        board = self.version(pid, ref).storyboard
        board = self._audio.with_voice(board, character, changes) if changes else board
        work = self.media.scratch()
        try:
            return self.media.put_file(self._audio.preview(board, character, work / "line.wav"), move=True)[1]
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def line_sample(self, pid: str, line: Line, ref: int | str | None = None) -> tuple[Path, bool]:
        """A shot's line (as a card has it, saved or not) voiced as the render voices it, in version `ref`'s voices,
        kept in the media store for the page to play: (the WAV, whether it was spoken now rather than found in the
        sound cache, where the render's lines are)."""
        spoken = self._audio.say(self.version(pid, ref).storyboard, line.character, line.line, line.delivery)
        return self.media.put_file(spoken.path)[1], spoken.made

    def stems_film(self, render: RenderRecord, chosen: list[str]) -> Path:
        """`render`'s film with only the `chosen` stems (dialogue, music, effects) in its sound (app/services/audio.py)."""
        if render.audio is None:
            raise StudioError("this film has no sound: nothing to solo or mute")
        stems = {k: p for k, p in self.media_paths(render).items() if k in ("dialogue", "music", "effects")}
        return self._audio.stems_film(self.film_path(render), stems, chosen, render.audio.loudness_lufs)

    def set_music_track(
        self, pid: str, scene_id: str | None, upload: Path | None, base: int | str | None = None
    ) -> tuple[Version, bool]:
        """A creator's track (any common audio file, checked) over scene `scene_id` or, None, under the whole film;
        `upload` None takes it away. (the new version, True), or (`base`, False) when nothing changes."""
        return self._audio.set_track(pid, scene_id, upload, base)

    def set_picture(
        self, pid: str, width: int | None, height: int | None, fps: int | None, base: int | str | None = None
    ) -> tuple[Version, bool]:
        """The film's frame size and rate (None: the model's own): (the new version, True), or (`base`, False)."""
        return self._projects.set_picture(pid, width, height, fps, base)

    def fork(self, pid: str, ref: int | str | None = None) -> Version:
        self._room("fork")
        return self._projects.fork(pid, ref)

    def checkout(self, pid: str, ref: int | str) -> Version:
        return self._projects.checkout(pid, ref)

    def branched(self, v: Version) -> bool:
        return self._projects.branched(v)

    def change_words(self, pid: str, numbers: list[int]) -> dict[int, str]:
        """What each of the versions `numbers` changed from its parent, in a word or two ("lines", "sounds & music")."""
        return self._projects.change_words(pid, numbers)

    def diff(self, pid: str, a: int | str, b: int | str) -> StoryboardDiff:
        """Shot-by-shot differences between two versions, with the panel's scores on each."""
        d = self._projects.diff(pid, a, b)
        sa, sb = self.panel_scores(pid, d.from_version), self.panel_scores(pid, d.to_version)
        return d.model_copy(update={"scores": {k: (sa.get(k), sb.get(k)) for k in sorted(set(sa) | set(sb))}})

    def set_panel(
        self, pid: str, persona_ids: list[str], base: int | str | None = None, personas: list[Persona] | None = None
    ) -> Version:
        return self._projects.set_panel(pid, persona_ids, base, personas)

    def save_persona(self, pid: str, persona: Persona, base: int | str | None = None, on_panel: bool = True) -> Version:
        return self._projects.save_persona(pid, persona, base, on_panel)

    def persona_agent(self) -> str:
        """Who builds and rates personas now (said before a build, which may fail at the endpoint)."""
        return self._personas.label()

    def build_persona(
        self, comments: list, name: str, persona_id: str | None = None, holdout: float | None = None, seed: int = 0
    ) -> PersonaBuild:
        """A persona from one viewer's comments (agents.comments.Comment), calibrated on `holdout` of them if asked."""
        return self._personas.build(comments, name, persona_id, holdout, seed)

    def calibrate_persona(
        self, persona: Persona, items: list, holdout: float = 0.3, seed: int = 0
    ) -> PersonaCalibration:
        """How well a persona predicts its viewer's rated items (held out); the figures on a copy of it."""
        return self._personas.calibrate(persona, items, holdout, seed)

    def personas_of(self, v: Version) -> dict[str, Persona]:
        return self._projects.personas_of(v)

    def builtin_personas(self) -> dict[str, Persona]:
        return self._projects.builtin_personas()

    # ------------------------------------------------------------------ rendering (rendering.py, film.py)
    def scope(
        self, pid: str, ref: int | str | None = None, scene: str | None = None, shots: str | None = None
    ) -> Scope:
        """A scene (id or number) or a range of shots ("s010-s020", "s003,s007") of a version, checked; the whole film
        when neither is given."""
        try:
            return parse_scope(self.version(pid, ref).storyboard, scene, shots)
        except ValueError as e:
            raise StudioError(str(e)) from None

    def render(
        self,
        pid: str,
        ref: int | str | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
        scope: Scope | None = None,
        tier: Tier | None = None,
    ) -> RenderRecord:
        return self._rendering.render(pid, ref, progress, cancel, scope, tier)

    # ------------------------------------------------------------------ LoRAs (loras.py)
    def lora_add(
        self,
        pid: str,
        file: Path,
        *,
        scale: float = 1.0,
        name: str | None = None,
        character: str | None = None,
        base: int | str | None = None,
    ) -> tuple[Version, str]:
        """A child version with a creator's LoRA (refused in one line, nothing written, when it does not fit)."""
        return self._loras.add(pid, file, scale=scale, name=name, character=character, base=base)

    def lora_remove(self, pid: str, name: str, base: int | str | None = None) -> Version:
        return self._loras.remove(pid, name, base)

    def loras(self, pid: str, ref: int | str | None = None) -> list[Lora]:
        return self._loras.list(pid, ref)

    def render_info(self, pid: str, ref: int | str | None = None) -> RenderRecord | None:
        """The latest render of a version (or of the ancestor whose film it shares), or None."""
        return self._clips.latest_render(pid, ref)

    def lost_render(self, pid: str, ref: int | str | None = None) -> tuple[JobRecord, int, int] | None:
        """When the project's newest render of version `ref` was lost (the server stopped before it ended, app/server/
        jobs.py `_lose_dead_servers`) and the version has no film of its own yet: (that job, the shots whose clips a
        render again reuses, the shots in all); else None."""
        v = self.version(pid, ref)  # the project check: another account's project is "not found"
        if self._clips.latest_render(pid, v.number) is not None:
            return None
        with self.ctx.repo.read() as u:
            job = next((r for r in u.jobs(limit=500) if (r.project, r.kind) == (pid, "render")), None)
        if job is None or job.state != "lost" or job.version not in (None, v.number):
            return None
        return job, len(self.shot_clips(v.storyboard)), len(v.storyboard.shots())

    def last_film(self, pid: str, ref: int | str | None = None) -> LastFilm | None:
        """For a version not rendered yet: the film of its nearest rendered ancestor, and which shots changed."""
        return self._clips.last_film(pid, ref)

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
        """How many clips a keyframe or reference action would re-render (asked before it runs)."""
        return self._keyframes.clips_affected(pid, action, ref, shots=shots, name=name, location=location)

    def keyframe_effects(
        self, pid: str, ref: int | str | None = None, cached: dict[str, ClipRecord] | None = None
    ) -> dict[str, ClipsAffected]:
        """Per shot, what a new keyframe would re-render (the storyboard cards confirm with it); `cached`: the
        board's `cached_shots` when the caller has them."""
        return self._keyframes.keyframe_effects(pid, ref, cached)

    def reference_effects(self, pid: str, ref: int | str | None = None) -> dict[tuple[str, bool], dict]:
        """Per character and location, what adding or clearing a reference would re-render (the panel asks first)."""
        return self._keyframes.reference_effects(pid, ref)

    def render_shot(
        self,
        board: Storyboard,
        shot_id: str,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
        tier: Tier | None = None,
    ) -> ShotRender:
        return self._rendering.render_shot(board, shot_id, progress, cancel, tier)

    def cached_shots(self, board: Storyboard) -> dict[str, ClipRecord]:
        return self._clips.cached_shots(board)

    def shot_clips(self, board: Storyboard) -> dict[str, tuple[ClipRecord, Tier]]:
        """Each shot's clip as it stands with its tier: the final when cached, else the draft."""
        return self._rendering.shot_clips(board)

    def tier_recipes(self) -> dict[str, str]:
        """What the draft and final tiers render with on this backend, and what a finalised shot keeps."""
        return self._rendering.tier_recipes()

    def clip_info(self, key: str) -> ClipRecord | None:
        return self._clips.clip(key)

    def thumbnail(self, clip_sha256: str) -> Path:
        return self._clips.thumbnail(clip_sha256)

    def export_timeline(self, pid: str, ref: int | str | None, out_dir: Path) -> dict[str, Path]:
        """The latest film's cut as OTIO, EDL and FCPXML in `out_dir` (media: this machine's clip files), with
        critic and creator notes as markers and the sound's stems as audio tracks."""
        from app.services.film import export_timeline

        self._room("export")
        return export_timeline(**self._cut(pid, ref), out_dir=out_dir)

    def export_handoff(self, pid: str, ref: int | str | None, out: Path) -> Path:
        """The cut for an editor as one zip `out`: OTIO, EDL and FCPXML with the clips in media/, paths relative."""
        from app.services.film import handoff_zip

        self._room("handoff")
        return handoff_zip(**self._cut(pid, ref), out=out)

    def _cut(self, pid: str, ref: int | str | None) -> dict:
        """What both hand-offs are made of: the version's latest film, its critics' and the creator's notes (this
        version's and its ancestors'), the media."""
        v, render = self._film_of(pid, ref)
        return dict(
            render=render,
            board=v.storyboard,
            clip_path=self.clip_path,
            watched=self._watched(pid, v, render),
            notes=self.notes(pid, v.number),
            earlier=self.earlier_notes(pid, v.number),
            number=v.number,
            media_path=self.media.path,
        )

    def _film_of(self, pid: str, ref: int | str | None):
        v = self.version(pid, ref)
        render = self.render_info(pid, v.number)
        if render is None:
            raise StudioError(f"v{v.number} has no film yet: render it first")
        return v, render

    def _watched(self, pid: str, v: Version, render) -> list:
        """The panel runs whose notes the hand-off of `render` (version `v`'s film) carries: `v`'s latest run, for
        the shots whose clip it watched, then its ancestors' runs on this very film (a version that changes nothing
        the film holds shares its parent's render). An earlier version's run on another film is stale: not
        carried, even for a shot whose clip is the same (its lines, sound or neighbours may have changed)."""
        from app.services.film import Watched

        clips = {r.shot_id: r.sha256 for r in render.shots}
        left, out, at = set(clips), [], v
        while at is not None and left:
            crits = self.critiques(pid, at.number)
            if at.number != v.number:
                crits = [c for c in crits if c.render_id == render.id]
            seen = self.render_info(pid, at.number) if crits else None
            same = {r.shot_id for r in seen.shots if clips.get(r.shot_id) == r.sha256} & left if seen else set()
            if same:
                out.append(Watched(at.number, crits, frozenset(same)))
                left -= same
            at = self.version(pid, at.parent_number) if at.parent_number else None
        return out

    # ------------------------------------------------------------------ watching (watching.py)
    def critique(
        self,
        pid: str,
        ref: int | str | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
        scope: Scope | None = None,
    ) -> list[CritiqueRecord]:
        return self._watching.critique(pid, ref, progress, cancel, scope)

    def critiques(self, pid: str, ref: int | str | None = None) -> list[CritiqueRecord]:
        return self._watching.critiques(pid, ref)

    def panel_scores(self, pid: str, ref: int | str | None = None) -> dict[str, float]:
        return self._watching.panel_scores(pid, ref)

    def diversity(self, pid: str, ref: int | str | None = None):
        return self._watching.diversity(pid, ref)

    # ------------------------------------------------------------------ notes and proposals (refining.py)
    def add_note(
        self, pid: str, text: str, shot_id: str | None = None, ref: int | str | None = None, scope: Scope | None = None
    ) -> Note:
        return self._refining.add_note(pid, text, shot_id, ref, scope)

    def notes(self, pid: str, ref: int | str | None = None) -> list[Note]:
        return self._refining.notes(pid, ref)

    def edit_note(self, pid: str, note_id: str, text: str, ref: int | str | None = None) -> Note:
        return self._refining.edit_note(pid, note_id, text, ref)

    def delete_note(self, pid: str, note_id: str, ref: int | str | None = None) -> None:
        return self._refining.delete_note(pid, note_id, ref)

    def earlier_notes(self, pid: str, ref: int | str | None = None) -> list[EarlierNote]:
        return self._refining.earlier_notes(pid, ref)

    def refine(
        self,
        pid: str,
        ref: int | str | None = None,
        scope: Scope | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
    ) -> ProposalRecord:
        return self._refining.refine(pid, ref, scope, progress, cancel)

    def proposal(self, pid: str, proposal_id: str | None = None, ref: int | str | None = None) -> ProposalRecord:
        return self._refining.proposal(pid, proposal_id, ref)

    def accept(
        self,
        pid: str,
        proposal_id: str | None = None,
        only: list[int] | None = None,
        edits: dict[int, str] | None = None,
        ref: int | str | None = None,
        once: bool = False,
    ) -> AcceptResult:
        return self._refining.accept(pid, proposal_id, only, edits, ref, once)

    def usage(self, pid: str, ref: int | str | None = None) -> UsageSummary:
        return self._refining.usage(pid, ref)

    # ------------------------------------------------------------------ references and keyframes (keyframes.py)
    def add_reference(
        self, pid: str, name: str, image: Path, location: bool = False, base: int | str | None = None
    ) -> Version:
        return self._keyframes.add_reference(pid, name, image, location=location, base=base)

    def generate_reference(
        self,
        pid: str,
        name: str,
        location: bool = False,
        seed: int | None = None,
        base: int | str | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
    ) -> Version:
        return self._keyframes.generate_reference(
            pid, name, location=location, seed=seed, base=base, progress=progress, cancel=cancel
        )

    def clear_references(self, pid: str, name: str, location: bool = False, base: int | str | None = None) -> Version:
        return self._keyframes.clear_references(pid, name, location=location, base=base)

    def render_keyframes(
        self,
        pid: str,
        shots: list[str] | None = None,
        ref: int | str | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
    ) -> KeyframesResult:
        return self._keyframes.render_keyframes(pid, shots, ref, progress, cancel)

    def reroll_keyframe(
        self,
        pid: str,
        shot_id: str,
        ref: int | str | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
    ) -> KeyframesResult:
        return self._keyframes.reroll(pid, shot_id, ref, progress, cancel)

    def set_keyframe(self, pid: str, shot_id: str, image: Path, ref: int | str | None = None) -> Version:
        return self._keyframes.set_keyframe(pid, shot_id, image, ref)

    def pick_keyframe(self, pid: str, shot_id: str, keyframe_id: str, ref: int | str | None = None) -> Version:
        return self._keyframes.pick_keyframe(pid, shot_id, keyframe_id, ref)

    def clear_keyframe(self, pid: str, shot_id: str, ref: int | str | None = None) -> Version:
        return self._keyframes.clear_keyframe(pid, shot_id, ref)

    def shot_keyframes(self, pid: str, ref: int | str | None = None) -> list[ShotKeyframes]:
        return self._keyframes.shot_keyframes(pid, ref)

    def screen_keyframes(
        self,
        pid: str,
        ref: int | str | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
    ) -> list[CritiqueRecord]:
        return self._keyframes.screen(pid, ref, progress, cancel)

    def images_label(self) -> str:
        return self._keyframes.label()

    def image_path(self, sha256: str) -> Path:
        return self._keyframes.image_path(sha256)

    # ------------------------------------------------------------------ takes (takes.py)
    def render_takes(
        self,
        pid: str,
        shot_id: str,
        n: int = 1,
        ref: int | str | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
    ) -> ShotTakes:
        return self._takes.render_takes(pid, shot_id, n, ref, progress, cancel)

    def replace_take(
        self,
        pid: str,
        shot_id: str,
        ref: int | str | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
    ) -> PickResult:
        return self._takes.replace(pid, shot_id, ref, progress, cancel)

    def shot_takes(self, pid: str, shot_id: str, ref: int | str | None = None) -> ShotTakes:
        return self._takes.shot_takes(pid, shot_id, ref)

    def pick_take(self, pid: str, shot_id: str, take: str, ref: int | str | None = None) -> PickResult:
        return self._takes.pick(pid, shot_id, take, ref)

    def vote_takes(
        self,
        pid: str,
        shot_id: str,
        ref: int | str | None = None,
        progress: ProgressFn | None = None,
        cancel: CancelToken | None = None,
    ) -> TakeScreeningRecord:
        return self._takes.vote(pid, shot_id, ref, progress, cancel)

    def board_takes(self, pid: str, ref: int | str | None = None) -> dict[str, ShotTakes]:
        """Every shot's takes (only shots that have some), by shot id."""
        return self._takes.board(pid, ref)

    # ------------------------------------------------------------------ consistency (consistency.py)
    def consistency(self, pid: str, ref: int | str | None = None, source: Source = "auto") -> ConsistencyReport:
        return self._consistency.report(pid, ref, source)

    # ------------------------------------------------------------------ files
    def film_path(self, render: RenderRecord) -> Path:
        return self.media.path(render.film_sha256, "mp4")

    def clip_path(self, sha256: str) -> Path:
        return self._clips.path(sha256)

    def media_paths(self, render: RenderRecord) -> dict[str, Path]:
        """The render's sidecars (srt, vtt, narration, contact_sheet, otio) as files."""
        return {k: self.media.path(sha, RENDER_MEDIA_EXT[k]) for k, sha in render.media.items()}

    # ------------------------------------------------------------------ archives (storage/archives.py)
    def export_project(self, pid: str, out: Path, versions: str = "all", include_media: bool = True) -> Path:
        """Write a .chief.zip archive of the project."""
        from storage.archives import export_project

        self._room("export")
        return export_project(
            self.ctx.repo,
            self.media,
            pid,
            Path(out),
            versions=versions,
            include_media=include_media,
            redact=self._redactions(),
        )

    def import_project(self, path: Path, title: str | None = None):
        """A new project from an archive: checked fully, then written all or nothing."""
        from app.services import archive_media
        from storage.archives import import_project

        def check(archive) -> None:  # the rules every version made here passes, and its media checked as uploads are
            for bundle in archive.file.versions:
                self._projects.check_bundle(bundle)
            archive_media.check(archive, self.config.limits, self._loras.check)
            self._room("import", sum(path.stat().st_size for _, path in archive.media.values()))

        self._room("import")
        pid = import_project(self.ctx.repo, self.media, Path(path), title=title, check=check)
        return self.version(pid)

    def _room(self, kind: str, incoming: int = 0) -> None:
        """Refuse (QuotaReached, one line) a fork, an export, a hand-off or an import (`kind`) before it writes, when the
        acting account is at its disk quota or (`incoming` bytes) would go over it (app/server/quotas.py)."""
        from app.server.quotas import Quotas
        from storage.owners import LOCAL_OWNER, current

        quotas = Quotas.of(self.config)
        if quotas.disk_mb:
            actor = current()
            user = actor.name if actor is not None else LOCAL_OWNER
            if incoming:
                quotas.check_disk(self.ctx.repo, user, incoming)
            else:
                quotas.check(self.ctx.repo, user, kind, 0)

    def _redactions(self) -> list[tuple[str, str]]:
        """Local paths that must not leave the machine in an archive, and what replaces them."""
        subs = []
        for model in (self.config.model, self.config.i2v_model, self.config.vace_model, self.config.image_model):
            if model and Path(model).expanduser().exists():
                subs.append((str(Path(model).expanduser()), Path(model).name))
        subs += [(str(self.config.home), "$CHIEF_HOME"), (str(Path.home()), "~")]
        return subs
