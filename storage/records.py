"""What the repository stores and returns: the persisted entities around a storyboard.

These are the one representation of each entity: the repository returns them, services pass them
around, `--json` prints their `model_dump`, and an archive holds their JSON. Media are referenced by
sha256 (the media store turns a sha into a path); no local path is ever part of a record.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, get_args

from pydantic import Field

from storage.schema import Coverage, Critique, Note, Persona, Proposal, Scope, Storyboard, Strict, Usage

Sha = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
# How a version came to be: planned, a hand-written storyboard, an edit, an accepted proposal, a fork, a new panel,
# a reference image, a keyframe change, a picked take.
VersionKind = Literal["plan", "import", "edit", "accept", "fork", "panel", "reference", "keyframe", "pick"]
# What a panel run watched: the film, or the keyframe storyboard (one still per shot, before any video).
Screening = Literal["film", "keyframes"]
# The kinds of file the media store holds, by extension.
MediaExt = Literal["mp4", "png", "jpg", "srt", "vtt", "wav", "otio", "flac", "safetensors"]
MEDIA_EXTS: tuple[str, ...] = get_args(MediaExt)
# The kinds of a render's sidecar media.
SidecarKind = Literal["srt", "vtt", "narration", "contact_sheet", "otio", "dialogue", "music", "effects"]
# A render's sidecar media: kind -> file extension in the media store.
RENDER_MEDIA_EXT: dict[SidecarKind, MediaExt] = {
    "srt": "srt",
    "vtt": "vtt",
    "narration": "wav",
    "contact_sheet": "jpg",
    "otio": "otio",
    "dialogue": "wav",  # the film's stems, levelled (the music ducked) before the mix's normalisation
    "music": "wav",
    "effects": "wav",
}


class Project(Strict):
    id: str
    title: str = Field(min_length=1, max_length=200)
    idea: str = Field(default="", max_length=20000)
    created_at: datetime
    current_version: int = Field(ge=1, description="the version commands act on by default")
    trashed_at: datetime | None = None
    versions: int = Field(default=0, ge=0, description="how many versions the project has")

    @property
    def trashed(self) -> bool:
        return self.trashed_at is not None


class Version(Strict):
    """A full snapshot: the storyboard, the critics' panel and the project's own personas."""

    id: str
    project_id: str
    number: int = Field(ge=1)
    parent_number: int | None = None
    kind: VersionKind
    message: str = ""
    created_at: datetime
    storyboard: Storyboard
    panel: list[str]
    personas: list[Persona] = Field(default_factory=list)
    draft: bool = Field(
        default=False,
        description="the creator's open working draft: small actions amend it in place until it is rendered, "
        "critiqued, saved over or branched from",
    )


class VersionNode(Strict):
    """A version in the tree, without its storyboard: what is attached to it, and whether it is current."""

    number: int
    id: str
    parent: int | None
    kind: VersionKind
    message: str
    created_at: datetime
    current: bool
    draft: bool = False
    renders: int = 0
    critiques: int = 0
    notes: int = 0
    proposals: int = 0


class ClipsAffected(Strict):
    """What an action would do to a version's clips, said before it runs: the shots whose clip key changes (so
    they render again), of how many, and which of them have a clip now (work that will be redone)."""

    action: str  # "Drawing keyframes for 13 shots"
    shots: list[str]
    rendered: list[str]
    total: int

    def describe(self) -> str:
        now = f"{len(self.rendered)} of them rendered now" if self.rendered else "none of them rendered yet"
        return f"{self.action} will re-render {len(self.shots)} of {self.total} clips ({now})"


class MediaRecord(Strict):
    sha256: Sha
    ext: MediaExt
    size: int = Field(ge=0)


class ClipRecord(Strict):
    """The clip cache: a content key (everything that determines the pixels) -> a stored clip."""

    key: Sha
    sha256: Sha
    backend: str
    model: str = ""
    num_frames: int = Field(ge=1)
    fps: int = Field(ge=1)
    width: int = Field(ge=1)
    height: int = Field(ge=1)
    seconds: float = Field(default=0.0, ge=0, description="render time")
    last_frame_sha256: Sha | None = None


class FrameRef(Strict):
    index: int = Field(ge=0, description="frame number in the clip")
    sha256: Sha


class ClipMediaRecord(Strict):
    """Pictures cut from a clip once and kept (by the clip's sha256): a thumbnail, or `k` sampled frames."""

    clip_sha256: Sha
    kind: str = Field(pattern=r"^(thumb|frames:[0-9]{1,2})$")
    fps: float = Field(gt=0)
    frames: list[FrameRef] = Field(min_length=1)


class ShotRender(Strict):
    """One shot of a render: which clip it used and whether it was rendered, reused, or (a scoped render, for a
    shot outside its scope that changed since) the clip an earlier render used."""

    shot_id: str
    key: Sha
    sha256: Sha
    status: Literal["rendered", "reused", "earlier"]
    duration: float = Field(gt=0)
    num_frames: int = Field(ge=1)
    fps: int = Field(ge=1)
    tier: Literal["draft", "final"] = "final"  # the recipe its clip was rendered with


class RenderAudio(Strict):
    """The film's sound as a render made it: what was voiced or reused, and the mix's loudness as ebur128 measured
    it (never the target echoed back)."""

    lines_voiced: int = Field(ge=0)
    lines_reused: int = Field(ge=0)
    cues_made: int = Field(ge=0, description="music cues and effects made now")
    cues_reused: int = Field(ge=0)
    loudness_lufs: float
    true_peak_dbtp: float
    lra_lu: float
    target: Literal["web", "ebu"]
    label: str = Field(description='what made it: "Piper voices, temp score, temp effects"')
    parts_mixed: int = Field(default=0, ge=0, description="parts of the mix (a scene, or 30 s of one) mixed now")
    parts_reused: int = Field(default=0, ge=0, description="parts of the mix the cache held")
    descriptions_said: int | None = Field(
        default=None, ge=0, description="descriptions said on the described track (None: the film has no such track)"
    )
    descriptions_voiced: int = Field(default=0, ge=0, description="of those, voiced now (the rest from the cache)")
    descriptions_flagged: list[str] = Field(
        default_factory=list, description="descriptions that fit no gap between their shot's lines: left out"
    )
    described_lufs: float | None = Field(default=None, description="the described track's integrated loudness")

    def describe(self) -> str:
        """One line for the CLI and the web app: what made the sound, what was made anew, what the mix measured,
        and the described track's descriptions (those left out named)."""
        described = (
            ""
            if self.descriptions_said is None
            else f"; described track: {self.descriptions_said} description(s) said (voiced {self.descriptions_voiced}"
            f"), {self.described_lufs:.1f} LUFS"
            + (f"; {len(self.descriptions_flagged)} left out: " + "; ".join(self.descriptions_flagged))
            * bool(self.descriptions_flagged)
        )
        return (
            f"{self.label}; lines voiced {self.lines_voiced}, reused {self.lines_reused}; cues made {self.cues_made}, "
            f"reused {self.cues_reused}; parts mixed {self.parts_mixed}, reused {self.parts_reused}; {self.loudness_lufs:.1f} LUFS, true peak {self.true_peak_dbtp:.1f} dBTP, "
            f"LRA {self.lra_lu:.1f} LU (target {self.target})" + described
        )


class RenderRecord(Strict):
    """A finished render of a version: its clips in film order, the assembled film and its sidecars."""

    id: str
    version: int
    created_at: datetime
    backend: str
    model: str = ""
    label: str = ""
    shots: list[ShotRender]
    rendered: int = Field(ge=0)
    reused: int = Field(ge=0)
    seconds: float = Field(ge=0, description="wall time of the render")
    film_sha256: Sha
    media: dict[SidecarKind, Sha] = Field(default_factory=dict)
    stream_copied: bool = False
    audio: RenderAudio | None = Field(default=None, description="the film's sound; None: the film is silent")

    def shot(self, shot_id: str) -> ShotRender | None:
        return next((s for s in self.shots if s.shot_id == shot_id), None)


class CritiqueRecord(Strict):
    """One persona's critique in one panel run (`batch`) on a render of a version."""

    id: str
    version: int
    render_id: str | None = Field(description="the render watched; None for a keyframe screening")
    screening: Screening = "film"
    persona_id: str
    persona_name: str = ""
    batch: str
    mode: str
    created_at: datetime
    critique: Critique
    usage: Usage = Field(default_factory=Usage)
    scope: Scope = Field(default_factory=Scope, description="what was watched: the whole film, scenes or shots")
    coverage: Coverage | None = Field(default=None, description="how it was watched (None: recorded before coverage)")


class KeyframeRecord(Strict):
    """A keyframe candidate of a shot: generated (seed, model) or uploaded. Every candidate is kept; the approved
    one is the shot's `keyframe` in a version."""

    id: str
    version: int = Field(description="the version it was made on")
    shot_id: str
    sha256: Sha
    source: Literal["generated", "uploaded"]
    seed: int | None = None
    backend: str = ""
    model: str = ""
    label: str = ""
    key: Sha | None = Field(default=None, description="image key of a generated still: the same request reuses it")
    width: int = Field(ge=1)
    height: int = Field(ge=1)
    created_at: datetime


class TakeRecord(Strict):
    """A take of a shot: its clip rendered with one seed (from the keyframe it started from). Every take is kept;
    picking one sets the shot's seed and keyframe in a child version, whose render reuses this clip."""

    id: str
    version: int = Field(description="the version it was rendered on")
    shot_id: str
    number: int = Field(ge=1, description="1, 2, ... per shot")
    seed: int = Field(ge=0, lt=2**32)
    keyframe_sha256: Sha | None = None
    key: Sha = Field(description="the clip key")
    sha256: Sha = Field(description="the clip")
    backend: str
    model: str = ""
    created_at: datetime


class TakeVote(Strict):
    """One persona's vote in a take screening: the take they liked best (None: no preference, their scores barely
    differed) and the score they gave each take."""

    persona_id: str
    persona_name: str = ""
    take_id: str | None = Field(description="the take voted for; None: no preference (rows before it always name one)")
    scores: dict[str, float] = Field(description="take id -> the persona's overall score (0..10)")
    reason: str = ""


class TakeScreeningRecord(Strict):
    """The panel watching the takes of one shot, each persona voting for one."""

    id: str
    version: int
    shot_id: str
    created_at: datetime
    mode: str
    takes: list[str] = Field(description="the take ids shown")
    votes: list[TakeVote]
    usage: Usage = Field(default_factory=Usage)


class ProposalRecord(Strict):
    id: str
    version: int
    created_at: datetime
    mode: str
    proposal: Proposal
    usage: Usage = Field(default_factory=Usage)
    scope: Scope = Field(default_factory=Scope, description="the shots its edits may touch")
    accepted_as: int | None = Field(default=None, description="the version that accepting it made")


class UsageRecord(Usage):
    """What one action's agent calls cost, attached to a version."""

    role: str
    mode: str
    created_at: datetime | None = None


class VersionBundle(Strict):
    """A version and everything attached to it: the unit an archive holds."""

    version: Version
    renders: list[RenderRecord] = Field(default_factory=list)
    notes: list[Note] = Field(default_factory=list)
    critiques: list[CritiqueRecord] = Field(default_factory=list)
    proposals: list[ProposalRecord] = Field(default_factory=list)
    usage: list[UsageRecord] = Field(default_factory=list)
    keyframes: list[KeyframeRecord] = Field(default_factory=list)
    takes: list[TakeRecord] = Field(default_factory=list)
    take_screenings: list[TakeScreeningRecord] = Field(default_factory=list)


class LastFilm(Strict):
    """The film of the nearest ancestor that has one, shown while a version is not rendered: `changed` are the
    version's shots whose clip is not that film's."""

    render: RenderRecord
    version: int  # the version that is not rendered
    changed: list[str]

    def describe(self) -> str:
        n = len(self.changed)
        return (
            f"film of v{self.render.version} — v{self.version} is not rendered yet "
            f"({n} shot{'' if n == 1 else 's'} changed)"
        )


__all__ = [
    "ClipsAffected",
    "LastFilm",
    "RENDER_MEDIA_EXT",
    "MEDIA_EXTS",
    "ClipMediaRecord",
    "RenderAudio",
    "ClipRecord",
    "CritiqueRecord",
    "FrameRef",
    "KeyframeRecord",
    "MediaRecord",
    "Note",
    "Project",
    "ProposalRecord",
    "RenderRecord",
    "Screening",
    "SessionRecord",
    "ShotRender",
    "TakeRecord",
    "TakeScreeningRecord",
    "TakeVote",
    "UsageRecord",
    "Version",
    "VersionBundle",
    "VersionKind",
    "VersionNode",
]


JobState = Literal["queued", "running", "done", "failed", "stopped", "lost"]


class JobRecord(Strict):
    """A job of the web server's queue as written to the `jobs` table (app/server/jobs.py): `chief queue` lists these, the
    queue's estimates read the durations of finished ones, and a user's time in the queue is `started_at -
    queued_at`. "lost": the server that ran it stopped before it ended."""

    id: str
    owner: str
    kind: str
    project: str = ""
    version: int | None = None
    label: str = ""
    state: JobState
    message: str = ""
    server: str = ""
    queued_at: datetime
    started_at: datetime | None = None
    ended_at: datetime | None = None


class SessionRecord(Strict):
    """A signed-in web session as the `sessions` table keeps it (app/server/sessions.py): `id` is the sha256 of the
    browser's token, `stamp` the account's credentials when it signed in, `seen_at` its last request (epoch seconds)."""

    id: str
    account: str
    stamp: str
    created_at: datetime
    seen_at: float
