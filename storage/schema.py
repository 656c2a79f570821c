"""What a project *is*: the pydantic schema shared by every layer.

A version's storyboard is stored as JSON of `Storyboard`; critiques, notes and proposals
are stored as JSON of their models. Agents return these types, online or offline.
"""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

Camera = Literal[
    "static", "pan_left", "pan_right", "tilt_up", "tilt_down", "zoom_in", "zoom_out", "dolly_in", "handheld"
]
CAMERA_MOVES: tuple[str, ...] = get_args(Camera)
# Fields of a shot that an edit may change (the refiner and the creator's hand edits).
# `dialogue` is set as a script (see `lines_from_script`); `music` is the cue of the shot's scene.
ShotField = Literal[
    "prompt",
    "negative_prompt",
    "duration",
    "seed",
    "camera",
    "narration",
    "dialogue",
    "sounds",
    "music",
    "continuity",
    "description",
]
EDITABLE_SHOT_FIELDS: tuple[str, ...] = get_args(ShotField)


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(4)}"


def utcnow() -> datetime:
    return datetime.now(UTC)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Scores(Strict):
    """A critic's score on each named dimension (0..10). The one definition of the critique dimensions:
    `DIMENSIONS`, the `Dimension` type and the LLM critic's answer schema all come from these fields."""

    story_clarity: float = Field(ge=0, le=10, description="can you follow what happens and why")
    visual_quality: float = Field(
        ge=0, le=10, description="how good the images look: composition, light, detail, artefacts"
    )
    character_consistency: float = Field(
        ge=0, le=10, description="do characters look and act the same from shot to shot"
    )
    pacing: float = Field(
        ge=0, le=10, description="is the rhythm of the cuts and the length of the shots right for you"
    )
    emotional_impact: float = Field(ge=0, le=10, description="did it make you feel something")
    intent_faithfulness: float = Field(
        ge=0, le=10, description="does it deliver what the creator says they meant to make"
    )
    # None: not scored — a critique from before films had sound, or a film with nothing to hear
    sound: float | None = Field(
        default=None,
        ge=0,
        le=10,
        description="lines clear, mix balanced, music fits, ambience carries (null: no sound)",
    )

    def get(self, dimension: str) -> float | None:
        """The score on `dimension` (None: `sound` not scored)."""
        v = getattr(self, dimension)
        return None if v is None else float(v)

    def scored(self) -> dict[str, float]:
        """Dimension -> score, for the dimensions that were scored, in order."""
        return {d: v for d, v in self.model_dump().items() if v is not None}


Dimension = Literal[
    "story_clarity", "visual_quality", "character_consistency", "pacing", "emotional_impact", "intent_faithfulness",
    "sound",
]  # fmt: skip
DIMENSIONS: tuple[str, ...] = get_args(Dimension)
assert DIMENSIONS == tuple(Scores.model_fields), "Dimension names the fields of Scores, in order"
DIMENSION_MEANINGS: dict[str, str] = {d: f.description or "" for d, f in Scores.model_fields.items()}


class Tastes(Strict):
    """A viewer's measurable tastes (one set of defaults, used by the offline critic and shown to LLM critics).
    Every taste but `shot_seconds` is on a 0 (not at all) to 1 (very much) scale."""

    shot_seconds: float = Field(default=5.0, gt=0, le=60, description="preferred average shot length in seconds")
    motion: float = Field(default=0.5, ge=0, le=1, description="wants things to move on screen")
    brightness: float = Field(default=0.5, ge=0, le=1, description="prefers bright images")
    contrast: float = Field(default=0.5, ge=0, le=1, description="prefers strong contrast")
    captions: float = Field(default=0.5, ge=0, le=1, description="relies on narration, dialogue and captions")
    flash_sensitivity: float = Field(default=0.3, ge=0, le=1, description="is bothered by flashing light")
    continuity: float = Field(default=0.5, ge=0, le=1, description="notices breaks in continuity")
    patience: float = Field(default=0.5, ge=0, le=1, description="gives a slow film time")

    def describe(self) -> str:
        """'preferred average shot length 2 s; on a 0 (not at all) to 1 (very much) scale: motion 0.9, …'"""
        rest = ", ".join(f"{k.replace('_', ' ')} {v:g}" for k, v in self.model_dump().items() if k != "shot_seconds")
        return (
            f"preferred average shot length {self.shot_seconds:g} s; on a 0 (not at all) to 1 (very much) scale: {rest}"
        )


# A still in the media store, by its sha256 (a PNG): references and keyframes are versioned with the storyboard.
ImageSha = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
MAX_REFERENCES = 8


class CharacterVoice(Strict):
    """How a character sounds (generation.audio.voices.Voice): `engine` piper (`model` a Piper .onnx path, empty:
    the installed voice; `speaker` a speaker id) or speech (an OpenAI-compatible endpoint; `speaker` its voice)."""

    engine: Literal["piper", "speech"] = "piper"
    model: str = Field(default="", max_length=500)
    speaker: str = Field(default="", max_length=80)
    pitch: float = Field(default=0.0, ge=-12, le=12, description="semitones")
    pace: float = Field(default=1.0, ge=0.5, le=2.0, description="> 1 faster")


class Character(Strict):
    name: str = Field(min_length=1, max_length=80)
    description: str = Field(
        min_length=1, max_length=1000, description="How the character looks, every time they appear."
    )
    references: list[ImageSha] = Field(
        default_factory=list,
        max_length=MAX_REFERENCES,
        description="reference images of the character (media sha256, PNG)",
    )
    voice: CharacterVoice | None = Field(
        default=None, description="how the character's lines sound; None: cast from the name (`chief voice` shows it)"
    )


class Location(Strict):
    name: str = Field(min_length=1, max_length=80)
    description: str = Field(min_length=1, max_length=1000, description="How the place looks, every time we are there.")
    references: list[ImageSha] = Field(
        default_factory=list, max_length=MAX_REFERENCES, description="reference images of the place (media sha256, PNG)"
    )


WORDS_PER_SECOND = 2.5  # how fast a line is said: a line of more words than 2.5 x its shot's seconds is too long
_SPEAKER = re.compile(r"^\s*([^\s:()][^:()\n]{0,78}?)\s*(?:\(([^()\n]{0,200})\))?\s*:\s*(.*)$")


# The audio description (a described track, WCAG 2.2 SC 1.2.5) is voiced in the gaps between lines: this far from
# any line, the mix ducked under it with ramps this long (the ramps lie in the gap too).
DESCRIPTION_MARGIN = 0.25
DESCRIPTION_RAMP = 0.15


def fit_gap(start: float, end: float, busy: list[tuple[float, float]], seconds: float) -> tuple[float | None, float]:
    """Where a description `seconds` long is said within [start, end] without coming within DESCRIPTION_MARGIN of a
    `busy` span (a line, another description), its ramps included: (its start, or None when it fits no gap; the
    longest gap's room for words, in seconds). The earliest gap that holds it wins."""
    spans = sorted((a - DESCRIPTION_MARGIN, b + DESCRIPTION_MARGIN) for a, b in busy if b > start and a < end)
    gaps, t = [], start
    for a, b in spans:
        if a > t:
            gaps.append((t, min(a, end)))
        t = max(t, b)
    if t < end:
        gaps.append((t, end))
    room = [b - a - 2 * DESCRIPTION_RAMP for a, b in gaps]
    at = next((a + DESCRIPTION_RAMP for (a, _), r in zip(gaps, room) if r >= seconds), None)
    return at, max([0.0, *room])


class Line(Strict):
    """One spoken line of a shot. The speaker is off screen when `character` is not among the shot's characters."""

    character: str = Field(default="", max_length=80, description="who says it (a character's name); '' unattributed")
    line: str = Field(min_length=1, max_length=2000, description="what is said, in the story's language")
    delivery: str = Field(default="", max_length=200, description='how it is said, in words: "whispered"')

    @field_validator("character", "line", "delivery", mode="before")
    @classmethod
    def _one_line(cls, v):
        return " ".join(v.split()) if isinstance(v, str) else v

    def words(self) -> int:
        return len(self.line.split())

    def voiced(self) -> bool:
        """False for a signed line (its delivery starts with "signed"): captioned on screen, never spoken aloud."""
        return not self.delivery.lower().startswith("signed")

    def seconds(self) -> float:
        """How long the line takes to say, at WORDS_PER_SECOND."""
        return self.words() / WORDS_PER_SECOND


def lines_from_script(text: str, characters: list[str] | tuple[str, ...] = ()) -> list[Line]:
    """Lines from dialogue as text (a storyboard from before lines, an edit's value). One line per text line:
    "NAME: text" or "NAME (delivery): text" is said by NAME (at most 80 characters before the colon, no
    parentheses or colon in it); ": text" is explicitly unattributed; any other text is said by the shot's
    single character, or is unattributed when the shot has none or several."""
    only = characters[0] if len(characters) == 1 else ""
    out = []
    for raw in text.splitlines():
        if not raw.strip():
            continue
        if raw.lstrip().startswith(":"):
            out.append(Line(line=raw.lstrip()[1:].strip()))
        elif (m := _SPEAKER.match(raw)) and m.group(3).strip() and _named(m.group(1), characters):
            out.append(Line(character=m.group(1), delivery=m.group(2) or "", line=m.group(3)))
        else:
            out.append(Line(character=only, line=raw))
    return out


def _named(who: str, characters) -> bool:
    """Whether the text before a colon names a speaker: one of the shot's characters, or up to four capitalised
    words ("Mara", "Old Tom"; not "the captain said")."""
    words = who.split()
    return who in characters or (len(words) <= 4 and all(w[0].isupper() for w in words))


def script(lines: list[Line]) -> str:
    """Lines as text, one per line ("NAME (delivery): text"; ": text" when unattributed): `lines_from_script`
    reads it back to the same lines."""
    rows = []
    for ln in lines:
        who = ln.character + (f" ({ln.delivery})" if ln.delivery else "")
        rows.append(f"{who}: {ln.line}" if who else f": {ln.line}")
    return "\n".join(rows)


class Shot(Strict):
    shot_id: str = Field(default_factory=lambda: new_id("sh"), pattern=r"^[A-Za-z0-9_\-]{1,40}$")
    prompt: str = Field(min_length=1, max_length=2000)
    negative_prompt: str = Field(default="", max_length=1000)
    duration: float = Field(default=5.0, gt=0, le=60, description="seconds")
    seed: int = Field(default=0, ge=0, lt=2**32)
    camera: Camera = "static"
    narration: str = Field(default="", max_length=2000, description="voice-over, spoken and subtitled")
    dialogue: list[Line] = Field(
        default_factory=list,
        max_length=50,
        description="the lines said in the shot, in order (the speaker may be off screen); subtitled",
    )
    sounds: str = Field(default="", max_length=1000, description="effects and ambience, in words")
    description: str = Field(
        default="",
        max_length=500,
        description="what is seen, in a short sentence, for the audio description (voiced between the lines)",
    )
    characters: list[str] = Field(default_factory=list, description="names from the character bible seen in this shot")
    locked: bool = Field(default=False, description="the refiner never touches a locked shot")
    continuity: bool = Field(default=False, description="condition on the previous shot's last frame")
    keyframe: ImageSha | None = Field(
        default=None,
        description=(
            "the approved keyframe (media sha256, PNG): the clip starts from it, instead of the previous shot's last frame"
        ),
    )

    @model_validator(mode="before")
    @classmethod
    def _text_dialogue(cls, data):
        """Dialogue stored as text (before lines) read as lines: see `lines_from_script`."""
        if isinstance(data, dict) and isinstance(data.get("dialogue"), str):
            chars = data.get("characters")
            names = [c for c in chars if isinstance(c, str)] if isinstance(chars, list) else []
            return {**data, "dialogue": lines_from_script(data["dialogue"], names)}
        return data

    @field_validator("description", mode="before")
    @classmethod
    def _one_line_description(cls, v):
        return " ".join(v.split()) if isinstance(v, str) else v

    @field_validator("sounds", mode="before")
    @classmethod
    def _sounds_listed(cls, v):
        """Sounds written as a list (`sounds: [wind, rain]`) read as the words they are, one phrase each, joined
        as the sounds' own grammar separates them ("wind, rain"); a list holding anything but text is refused."""
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            return ", ".join(p for p in (" ".join(x.split()) for x in v) if p)
        return v

    def off_screen(self, line: Line) -> bool:
        """True when the line's speaker is named and not seen in the shot."""
        return bool(line.character) and line.character not in self.characters

    def spoken(self) -> str:
        """The words of its lines, in order (what is said on screen or off)."""
        return " ".join(ln.line for ln in self.dialogue)

    def subtitles(self) -> list[str]:
        """The shot's subtitles in order: one per line (an off-screen speaker named: "MARA: ..."), else its
        narration, else none."""
        if not self.dialogue:
            return [self.narration] if self.narration.strip() else []
        return [f"{ln.character}: {ln.line}" if self.off_screen(ln) else ln.line for ln in self.dialogue]

    def speech(self) -> list[tuple[float, float]]:
        """Where the shot is expected to speak, in seconds from its start, at WORDS_PER_SECOND: each line from the
        start of its subtitle window (the window shared by word count, as the voices are placed), else the
        narration from the start."""
        if not self.dialogue:
            return [(0.0, len(self.narration.split()) / WORDS_PER_SECOND)] if self.narration.strip() else []
        words = [max(1, len(t.split())) for t in self.subtitles()]
        out, t = [], 0.0
        for ln, n in zip(self.dialogue, words):
            out.append((t, t + ln.seconds()))
            t += self.duration * n / sum(words)
        return out

    def long_lines(self) -> list[int]:
        """1-based numbers of the lines that cannot be said within the shot (words / 2.5 > duration)."""
        return [n for n, ln in enumerate(self.dialogue, 1) if ln.seconds() > self.duration]


class Scene(Strict):
    scene_id: str = Field(default_factory=lambda: new_id("sc"), pattern=r"^[A-Za-z0-9_\-]{1,40}$")
    title: str = Field(default="", max_length=200)
    description: str = Field(default="", max_length=2000, description="what happens in the scene")
    purpose: str = Field(default="", max_length=500, description="the scene's place in the plot (its beat)")
    location: str = Field(default="", max_length=80, description="a location name from the storyboard's locations")
    music: str = Field(
        default="", max_length=1000, description="the scene's music cue in words (mood, tempo, instruments); '' none"
    )
    music_level: float = Field(
        default=0.0,
        ge=-40,
        le=12,
        description="dB added to the film's music level for this scene's cue (0: as the film)",
    )
    effects_level: float = Field(
        default=0.0, ge=-40, le=12, description="dB added to the film's effects level for this scene's shots' sounds"
    )
    music_track: str = Field(
        default="",
        pattern=r"^([0-9a-f]{64})?$",
        description="a creator's uploaded track played over the scene instead of its cue (media sha256 of a 48 kHz FLAC)",
    )
    shots: list[Shot] = Field(min_length=1)


class FilmOptions(Strict):
    """How the clips are cut together. Stored with the version, so a film can be made again exactly."""

    title_card: bool = Field(default=False, description="open with a card showing the title")
    title_seconds: float = Field(default=2.0, ge=0.5, le=10, description="how long the title card stays")
    crossfade: float = Field(default=0.0, ge=0, le=2, description="seconds of crossfade between shots (0: hard cuts)")
    burn_subtitles: bool = Field(default=False, description="draw narration and dialogue into the picture")
    loudness: Literal["web", "ebu"] = Field(default="web", description="the mix's target: web -14 LUFS, ebu -23 LUFS")
    music_level: float = Field(default=-8.0, ge=-60, le=12, description="music stem level in dB before the mix")
    effects_level: float = Field(default=-14.0, ge=-60, le=12, description="effects stem level in dB before the mix")
    ducking: bool = Field(default=True, description="duck the music under speech")
    channels: Literal["stereo", "mono"] = Field(
        default="stereo",
        description="the mix: stereo (dialogue centred, music and effects wide) or mono (one channel, for a mono "
        "delivery)",
    )
    captions: Literal["plain", "sdh"] = Field(
        default="sdh",
        description="subtitles: plain (the lines, an off-screen speaker named) or sdh (for viewers who cannot hear: "
        "speakers named where it is unclear who talks, and the sounds and music that matter)",
    )
    audio_description: bool = Field(
        default=False, description="add a second audio track: the mix with each shot's description voiced between lines"
    )
    music_track: str = Field(
        default="",
        pattern=r"^([0-9a-f]{64})?$",
        description="a creator's uploaded track under the whole film, from its start: no scene's cue or track plays",
    )
    tier: Tier = Field(
        default="final",
        description="the render tier a render uses unless it asks for another: draft (fast, the family's draft "
        "recipe) or final (full quality)",
    )


MAX_LORAS = 16
Tier = Literal["draft", "final"]


class Lora(Strict):
    """A creator's LoRA (a .safetensors file in the media store): a character's, on the shots they are in, or a
    style's, on every shot."""

    name: str = Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9][A-Za-z0-9 _.-]*$")
    sha256: ImageSha = Field(description="the LoRA file (media sha256, safetensors)")
    scale: float = Field(default=1.0, ge=-4, le=4, description="its weight")
    character: str | None = Field(default=None, max_length=80, description="whose shots it acts on; None: every shot")


class Storyboard(Strict):
    """A full snapshot of the film's plan. One per version."""

    title: str = Field(min_length=1, max_length=200)
    logline: str = Field(default="", max_length=2000)
    style_guide: str = Field(default="", max_length=4000)
    characters: list[Character] = Field(default_factory=list)
    locations: list[Location] = Field(default_factory=list)
    scenes: list[Scene] = Field(min_length=1)
    fps: int | None = Field(default=None, ge=1, le=60, description="None: the backend's default")
    width: int | None = Field(default=None, ge=16, le=4096)
    height: int | None = Field(default=None, ge=16, le=4096)
    film: FilmOptions = Field(default_factory=FilmOptions)
    loras: list[Lora] = Field(default_factory=list, max_length=MAX_LORAS, description="the creator's LoRAs")

    @model_validator(mode="after")
    def _unique_ids(self) -> Storyboard:
        seen: set[str] = set()
        for shot in self.shots():
            if shot.shot_id in seen:
                raise ValueError(f"duplicate shot_id {shot.shot_id!r}")
            seen.add(shot.shot_id)
        names = [c.name for c in self.characters]
        if len(set(names)) != len(names):
            raise ValueError("duplicate character name in the character bible")
        places = [loc.name for loc in self.locations]
        if len(set(places)) != len(places):
            raise ValueError("duplicate location name")
        loras = [lo.name for lo in self.loras]
        if len(set(loras)) != len(loras):
            raise ValueError("duplicate LoRA name")
        return self

    def loras_for(self, shot: Shot) -> list[Lora]:
        """The LoRAs that act on a shot: every style LoRA, and the LoRAs of the characters in it."""
        return [lo for lo in self.loras if lo.character is None or lo.character in shot.characters]

    def lora_files(self) -> set[str]:
        """Every LoRA file the storyboard uses (media sha256 of safetensors files)."""
        return {lo.sha256 for lo in self.loras}

    def scene_of(self, shot_id: str) -> Scene:
        for scene in self.scenes:
            if any(s.shot_id == shot_id for s in scene.shots):
                return scene
        raise KeyError(f"no shot {shot_id!r} in this storyboard")

    def shots(self) -> list[Shot]:
        return [shot for scene in self.scenes for shot in scene.shots]

    def shot(self, shot_id: str) -> Shot:
        for shot in self.shots():
            if shot.shot_id == shot_id:
                return shot
        raise KeyError(f"no shot {shot_id!r} in this storyboard")

    def duration(self) -> float:
        return sum(s.duration for s in self.shots())

    def line_warnings(self) -> list[str]:
        """One warning per line that cannot be said within its shot (flagged before a render, never cut)."""
        return [
            f"shot {s.shot_id} line {n}: {s.dialogue[n - 1].words()} words take {s.dialogue[n - 1].seconds():.1f} s "
            f"to say, longer than the {s.duration:g}-s shot (shorten the line or lengthen the shot)"
            for s in self.shots()
            for n in s.long_lines()
        ]

    def description_warnings(self) -> list[str]:
        """With the described track on: one warning per description that does not fit a gap between its shot's
        lines, estimated at WORDS_PER_SECOND for lines and descriptions alike (a line said from the start of its
        subtitle window, the narration from the shot's start). The render measures the voices and flags again; a
        description that does not fit is left out, never said over a line."""
        if not self.film.audio_description:
            return []
        out = []
        for shot, start, end in self.timeline():
            if not shot.description:
                continue
            need = len(shot.description.split()) / WORDS_PER_SECOND
            at, room = fit_gap(start, end, [(start + a, start + b) for a, b in shot.speech()], need)
            if at is None:
                out.append(
                    f"shot {shot.shot_id} description: {len(shot.description.split())} words take about {need:.1f} s "
                    f"to say; the longest gap between its lines holds {room:.1f} s (shorten the description or the "
                    "lines, or lengthen the shot)"
                )
        return out

    def images(self) -> set[str]:
        """Every still the storyboard refers to: reference images and approved keyframes (media sha256)."""
        return {
            *(sha for item in [*self.characters, *self.locations] for sha in item.references),
            *(s.keyframe for s in self.shots() if s.keyframe),
        }

    def tracks(self) -> set[str]:
        """Every uploaded music track the storyboard plays (media sha256 of FLAC files)."""
        return {t for t in [self.film.music_track, *(sc.music_track for sc in self.scenes)] if t}

    def timeline(self) -> list[tuple[Shot, float, float]]:
        """(shot, start, end) in seconds, in film order."""
        out, t = [], 0.0
        for shot in self.shots():
            out.append((shot, t, t + shot.duration))
            t += shot.duration
        return out

    def restricted(self, shot_ids: list[str] | set[str]) -> Storyboard:
        """The storyboard with only these shots (scenes left empty are dropped): what a scoped action watches."""
        keep = set(shot_ids)
        scenes = [
            sc.model_copy(update={"shots": [s for s in sc.shots if s.shot_id in keep]})
            for sc in self.scenes
            if any(s.shot_id in keep for s in sc.shots)
        ]
        if not scenes:
            raise ValueError("no shot of this storyboard is in the scope")
        return self.model_copy(update={"scenes": scenes})


class Scope(Strict):
    """What an action covered: the whole film (nothing named), whole scenes, or a range of shots.

    Scenes are kept by id (a scene's shots are the version's); a range keeps its shot ids in film order."""

    scenes: list[str] = Field(default_factory=list, description="scene ids (every shot of each)")
    shots: list[str] = Field(default_factory=list, description="shot ids, in film order")

    @property
    def whole(self) -> bool:
        return not self.scenes and not self.shots

    def shot_ids(self, board: Storyboard) -> list[str]:
        """The shots in scope on `board`, in film order (every shot for the whole film)."""
        if self.whole:
            return [s.shot_id for s in board.shots()]
        named = set(self.shots)
        scenes = set(self.scenes)
        return [s.shot_id for sc in board.scenes for s in sc.shots if sc.scene_id in scenes or s.shot_id in named]

    def scene_ids(self, board: Storyboard) -> list[str]:
        """The scenes with at least one shot in scope, in film order."""
        ids = set(self.shot_ids(board))
        return [sc.scene_id for sc in board.scenes if any(s.shot_id in ids for s in sc.shots)]

    def label(self) -> str:
        if self.whole:
            return "whole film"
        if self.scenes and not self.shots:
            return ("scene " if len(self.scenes) == 1 else "scenes ") + ", ".join(self.scenes)
        if self.shots and not self.scenes:
            return f"shot {self.shots[0]}" if len(self.shots) == 1 else f"shots {self.shots[0]}–{self.shots[-1]}"
        return f"scenes {', '.join(self.scenes)} and shots {', '.join(self.shots)}"


def parse_scope(board: Storyboard, scene: str | None = None, shots: str | None = None) -> Scope:
    """A Scope from what a creator typed: `scene` a scene id (or its number, 1-based); `shots` a range
    "s010-s020" (film order, both ends included) or a list "s003,s007". Unknown ids are refused."""
    if scene and shots:
        raise ValueError("give a scene or a range of shots, not both")
    if scene:
        scene = scene.strip()
        ids = [sc.scene_id for sc in board.scenes]
        if scene not in ids and scene.isdigit() and 1 <= int(scene) <= len(ids):
            scene = ids[int(scene) - 1]
        if scene not in ids:
            raise ValueError(f"no scene {scene!r}: scenes are {', '.join(ids[:12])}{' …' if len(ids) > 12 else ''}")
        return Scope(scenes=[scene])
    if shots:
        order = [s.shot_id for s in board.shots()]
        wanted: set[str] = set()
        for item in (x for x in shots.replace(" ", "").split(",") if x):
            if item in order:
                wanted.add(item)
                continue
            first, last = item.split("..", 1) if ".." in item else _split_dash(item, order)
            for sid in (first, last):
                if sid not in order:
                    raise ValueError(f"no shot {sid!r} in this storyboard")
            i, j = sorted((order.index(first), order.index(last)))
            wanted.update(order[i : j + 1])
        if not wanted:
            raise ValueError("name at least one shot")
        return Scope(shots=[s for s in order if s in wanted])
    return Scope()


def _split_dash(text: str, order: list[str]) -> tuple[str, str]:
    """'s010-s020' into its two ends; shot ids may hold dashes themselves, so try every dash."""
    for i, ch in enumerate(text):
        if ch == "-" and text[:i] in order and text[i + 1 :] in order:
            return text[:i], text[i + 1 :]
    raise ValueError(f"no shot {text!r} in this storyboard (a range is FIRST-LAST or FIRST..LAST)")


class Limits(Strict):
    """What one storyboard may ask for. The schema's own bounds are what can be stored at all; these
    caps, each with its reason, are what CHIEF agrees to plan, import or render (a setting raises them)."""

    max_shots: int = Field(
        300,
        ge=1,
        le=100_000,
        description=(
            "Most shots in one storyboard: a 10-minute film cut every 2 s has 300; more is a runaway plan or a "
            "hostile file."
        ),
    )
    max_film_minutes: float = Field(
        20.0,
        gt=0,
        le=24 * 60,
        description=("Longest film, in minutes: CHIEF makes 1- to 10-minute films; twice that leaves room."),
    )
    max_shot_seconds: float = Field(
        20.0,
        gt=0,
        le=60,
        description=(
            "Longest shot, in seconds: video models make 2-10 s clips; a longer shot is one render of many minutes."
        ),
    )
    max_shot_lines: int = Field(
        12,
        ge=1,
        le=50,
        description=(
            "Most spoken lines in one shot: a 20-second shot holds about 50 words, a dozen short lines at most; more "
            "is a runaway plan or a hostile file."
        ),
    )
    max_fps: int = Field(
        30,
        ge=1,
        le=60,
        description=(
            "Highest frame rate: video models generate 8-30 fps; 60 doubles every render for no model that uses it."
        ),
    )
    max_frame_side: int = Field(
        1920,
        ge=16,
        le=4096,
        description=(
            "Widest and tallest frame, in pixels: models are trained at 480p-1080p; 4096x4096 is 8 times the pixels "
            "of 1080p, minutes per step and tens of GB of memory."
        ),
    )

    def problem(self, board: Storyboard) -> tuple[str, str] | None:
        """(the cap, what in `board` breaks it), or None when `board` is within every cap."""
        shots = board.shots()
        longest = max(shots, key=lambda s: s.duration)
        talky = max(shots, key=lambda s: len(s.dialogue))
        checks = [
            ("max_shots", len(shots) > self.max_shots, f"{len(shots)} shots"),
            (
                "max_film_minutes",
                board.duration() > self.max_film_minutes * 60,
                f"a {board.duration() / 60:.1f}-minute film",
            ),
            (
                "max_shot_seconds",
                longest.duration > self.max_shot_seconds,
                f"shot {longest.shot_id} lasts {longest.duration:g} s",
            ),
            (
                "max_shot_lines",
                len(talky.dialogue) > self.max_shot_lines,
                f"shot {talky.shot_id} has {len(talky.dialogue)} lines",
            ),
            ("max_fps", (board.fps or 0) > self.max_fps, f"{board.fps} fps"),
            (
                "max_frame_side",
                max(board.width or 0, board.height or 0) > self.max_frame_side,
                f"{board.width or '(default)'}x{board.height or '(default)'} frames",
            ),
        ]
        return next(((cap, what) for cap, broken, what in checks if broken), None)


MAX_PERSONA_BYTES = 256 * 1024  # a persona with every list full of evidence is a few KB (files, pastes, archives)


class Persona(Strict):
    """An audience member on the critics' panel (prompts/personas/*.yaml, or per project)."""

    id: str = Field(pattern=r"^[a-z0-9_\-]{1,40}$")
    name: str
    who: str = Field(description="who they are")
    viewing_history: list[str] = Field(default_factory=list)
    loves: list[str] = Field(default_factory=list)
    hates: list[str] = Field(default_factory=list)
    notices_first: str = ""
    voice: str = Field(default="", description="how they talk")
    weights: dict[str, float] = Field(default_factory=lambda: {d: 1.0 for d in DIMENSIONS})
    tastes: Tastes = Field(default_factory=Tastes)
    source: Literal["builtin", "custom", "built"] = "builtin"
    evidence: dict[str, list[str]] = Field(default_factory=dict, description="trait -> source comments")
    calibration: dict[str, float] | None = None

    @field_validator("weights")
    @classmethod
    def _known_dimensions(cls, v: dict[str, float]) -> dict[str, float]:
        unknown = set(v) - set(DIMENSIONS)
        if unknown:
            raise ValueError(f"unknown critique dimension(s): {sorted(unknown)}")
        return {d: float(v.get(d, 1.0)) for d in DIMENSIONS}


class ShotNote(Strict):
    shot_id: str
    note: str


class CritiqueIssue(Strict):
    summary: str
    urgency: int = Field(ge=1, le=5, description="5 = fix first")
    dimension: Dimension
    shot_ids: list[str] = Field(default_factory=list)
    suggestion: str = Field(default="", description="a concrete change to the prompt or the cut")


class Critique(Strict):
    """One persona's reaction to one film."""

    persona_id: str
    overall: float = Field(ge=0, le=10)
    scores: Scores
    shot_notes: list[ShotNote] = Field(default_factory=list)
    top_issues: list[CritiqueIssue] = Field(default_factory=list, description="most urgent first")
    keep_watching: bool
    keep_watching_reason: str
    summary: str = Field(description="the reaction in the persona's own voice")


class Note(Strict):
    """The creator's note on a version: an instruction the refiner must follow. It is about one shot (`shot_id`),
    some scenes or a range of shots (`scope`), or the whole film (neither)."""

    id: str = Field(default_factory=lambda: new_id("n"))
    text: str = Field(min_length=1, max_length=4000)
    shot_id: str | None = None
    scope: Scope = Field(default_factory=Scope)
    created_at: datetime | None = None

    def about(self) -> str:
        return f"shot {self.shot_id}" if self.shot_id else self.scope.label()


StoryField = Literal["title", "logline", "style_guide"]
STORY_FIELDS: tuple[str, ...] = get_args(StoryField)


class _EditBase(Strict):
    rationale: str = Field(max_length=4000)
    sources: list[str] = Field(default_factory=list, description="note ids and persona ids")

    @model_validator(mode="before")
    @classmethod
    def _drop_unused(cls, data):
        """Edits stored before the union carried every field, unused ones as null: drop those."""
        return {k: v for k, v in data.items() if v is not None} if isinstance(data, dict) else data


class SetShot(_EditBase):
    """Shot `shot_id`'s `field` from `old` to `new` (numbers and booleans as text)."""

    op: Literal["set"] = "set"
    shot_id: str
    field: ShotField
    old: str | None = None
    new: str = Field(max_length=4000)

    @property
    def target(self) -> str:
        return f"{self.shot_id} {self.field}"


class AddShot(_EditBase):
    """A new shot whose prompt is `new`, inserted after `shot_id` (None: at the start of the film)."""

    op: Literal["add_shot"] = "add_shot"
    shot_id: str | None = None
    new: str = Field(min_length=1, max_length=2000)

    @property
    def target(self) -> str:
        return f"new shot after {self.shot_id}" if self.shot_id else "new first shot"


class RemoveShot(_EditBase):
    op: Literal["remove_shot"] = "remove_shot"
    shot_id: str

    @property
    def target(self) -> str:
        return self.shot_id


class MoveShot(_EditBase):
    """Move `shot_id` to just after the shot whose id is `new` ("": to the start)."""

    op: Literal["move_shot"] = "move_shot"
    shot_id: str
    new: str = ""

    @property
    def target(self) -> str:
        return f"{self.shot_id} after {self.new}" if self.new else f"{self.shot_id} to the start"


class SetCharacter(_EditBase):
    """Character `character`'s description from `old` to `new` (a new character when old is None)."""

    op: Literal["set_character"] = "set_character"
    character: str = Field(min_length=1, max_length=80)
    old: str | None = None
    new: str = Field(min_length=1, max_length=1000)

    @property
    def target(self) -> str:
        return self.character


class SetStory(_EditBase):
    """The storyboard's `field` (title, logline, style guide) from `old` to `new`."""

    op: Literal["set_story"] = "set_story"
    field: StoryField
    old: str | None = None
    new: str = Field(max_length=4000)

    @property
    def target(self) -> str:
        return self.field


def _text(v):
    """Text an edit carries into the sound (a line, a delivery, a cue, a speaker): one line, no control characters."""
    return " ".join("".join(ch if ch.isprintable() else " " for ch in v).split()) if isinstance(v, str) else v


class SetLine(_EditBase):
    """Line `line` (1-based) of shot `shot_id`: its words `new` and/or its `delivery` (None keeps each); `old` is
    the line as it was, as script ("NAME (delivery): words")."""

    op: Literal["set_line"] = "set_line"
    shot_id: str
    line: int = Field(ge=1, le=50)
    old: str | None = None
    new: str | None = Field(default=None, min_length=1, max_length=2000)
    delivery: str | None = Field(default=None, max_length=200)

    @field_validator("new", "delivery", mode="before")
    @classmethod
    def _one_line(cls, v):
        return _text(v)

    @property
    def target(self) -> str:
        return f"{self.shot_id} line {self.line}"


class AddLine(_EditBase):
    """A new line said by `character` ('' unattributed) in shot `shot_id`, as its line number `line` (None: last)."""

    op: Literal["add_line"] = "add_line"
    shot_id: str
    line: int | None = Field(default=None, ge=1, le=50)
    character: str = Field(default="", max_length=80)
    new: str = Field(min_length=1, max_length=2000)
    delivery: str = Field(default="", max_length=200)

    @field_validator("character", "new", "delivery", mode="before")
    @classmethod
    def _one_line(cls, v):
        return _text(v)

    @property
    def target(self) -> str:
        return f"{self.shot_id} new line" + (f" {self.line}" if self.line else "")


class RemoveLine(_EditBase):
    """Line `line` (1-based) of shot `shot_id` taken out (`old`: the line, as script)."""

    op: Literal["remove_line"] = "remove_line"
    shot_id: str
    line: int = Field(ge=1, le=50)
    old: str | None = None

    @property
    def target(self) -> str:
        return f"{self.shot_id} line {self.line}"


class SetVoice(_EditBase):
    """Character `character`'s voice: `pitch` (semitones), `pace` (> 1 faster) and `speaker`, each None to keep;
    `old` is the voice they had (stored, or cast from the names), which the change is made over."""

    op: Literal["set_voice"] = "set_voice"
    character: str = Field(min_length=1, max_length=80)
    old: CharacterVoice | None = None
    pitch: float | None = Field(default=None, ge=-12, le=12)
    pace: float | None = Field(default=None, ge=0.5, le=2.0)
    speaker: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_\-]{0,80}$")

    @property
    def target(self) -> str:
        return f"{self.character} voice"


class SetMusic(_EditBase):
    """Scene `scene_id`'s music cue from `old` to `new` ('' : no music)."""

    op: Literal["set_music"] = "set_music"
    scene_id: str
    old: str | None = None
    new: str = Field(max_length=1000)

    @field_validator("new", mode="before")
    @classmethod
    def _one_line(cls, v):
        return _text(v)

    @property
    def target(self) -> str:
        return f"{self.scene_id} music"


LevelField = Literal["music_level", "effects_level"]


class SetLevel(_EditBase):
    """A level in dB from `old` to `new`: of scene `scene_id` (added to the film's, -40..12), or of the film
    (`scene_id` None: the film option, -60..12)."""

    op: Literal["set_level"] = "set_level"
    scene_id: str | None = None
    field: LevelField
    old: float | None = None
    new: float = Field(ge=-60, le=12)

    @model_validator(mode="after")
    def _scene_range(self) -> SetLevel:
        if self.scene_id is not None and self.new < -40:
            raise ValueError("a scene's level is within -40..12 dB of the film's")
        return self

    @property
    def target(self) -> str:
        return f"{self.scene_id or 'film'} {self.field}"


Edit = Annotated[
    SetShot
    | AddShot
    | RemoveShot
    | MoveShot
    | SetCharacter
    | SetStory
    | SetLine
    | AddLine
    | RemoveLine
    | SetVoice
    | SetMusic
    | SetLevel,
    Field(discriminator="op"),
]
EDIT = TypeAdapter(Edit)
EDIT_OPS: tuple[str, ...] = (
    "set",
    "add_shot",
    "remove_shot",
    "move_shot",
    "set_character",
    "set_story",
    "set_line",
    "add_line",
    "remove_line",
    "set_voice",
    "set_music",
    "set_level",
)
SOUND_OPS: tuple[str, ...] = ("set_line", "add_line", "remove_line", "set_voice", "set_music", "set_level")
LEVEL_FIELDS: tuple[str, ...] = get_args(LevelField)


class Unchanged(Strict):
    what: str
    why: str


class Answer(Strict):
    """One request of a creator's note (a note asking two things is two requests) and what the refiner did about it:
    the edits that answer it (1-based numbers into the proposal's edits) and the answer in words, or why none."""

    note_id: str = ""
    request: str = Field(max_length=4000)
    edits: list[int] = Field(default_factory=list)
    answer: str = Field(default="", max_length=4000)
    status: Literal["changed", "not changed", "not answered"] = "not answered"


class EditFlag(Strict):
    """A warning on one edit (1-based), e.g. it takes the idea's key object out of the film."""

    edit: int = Field(ge=1)
    why: str = Field(max_length=1000)


class Proposal(Strict):
    """The refiner's proposal for the next version. The creator decides each edit: the ones in `ticked` (1-based)
    are accepted by default (the creator's requests, and critics' edits that agree with a note); None, as proposals
    stored before it read, ticks all. `answers`: each request of the notes, answered; `flags`: warnings on edits."""

    summary: str = ""
    edits: list[Edit] = Field(default_factory=list)
    not_changed: list[Unchanged] = Field(default_factory=list)
    answers: list[Answer] = Field(default_factory=list)
    ticked: list[int] | None = None
    flags: list[EditFlag] = Field(default_factory=list)

    def is_ticked(self, n: int) -> bool:
        return self.ticked is None or n in self.ticked


class Unseen(Strict):
    shot_id: str
    why: str


class Coverage(Strict):
    """How one critic watched: what it was shown of every shot in scope, in how many requests, at what cost.

    `input` is what the critic saw: "frames" (images), "video" (clips), "text" (the storyboard and a description
    of each shot's frames, for a model that takes no images) or "offline" (the embedded critic measured them)."""

    input: Literal["frames", "video", "text", "offline"]
    shots: int = Field(ge=0, description="shots in scope")
    seen: int = Field(ge=0, description="shots seen with at least frames_per_shot frames (or in a clip)")
    frames_per_shot: int = Field(ge=0, description="frames each shot was meant to be seen with")
    min_frames: int = Field(default=0, ge=0, description="the fewest frames any shot in scope was shown with")
    chunks: int = Field(default=1, ge=0, description="parts the critic watched in order, carrying its memory")
    requests: int = Field(default=0, ge=0)
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    unseen: list[Unseen] = Field(default_factory=list, description="shots not seen as meant, and why")
    stopped_at: str | None = Field(default=None, description="the shot where they would have stopped watching")
    hearing: Literal["", "none", "text", "audio"] = Field(
        default="",
        description='how the critic heard the film: "text" the transcript, cue sheet and measured mix of each shot; '
        '"audio" the mix itself as well; "none" the film had no sound; "" not recorded (older critiques)',
    )
    heard: int = Field(default=0, ge=0, description="shots in scope whose sound the critic was given")
    audio_seconds: float = Field(default=0.0, ge=0, description="seconds of the film's mix sent as audio input")
    audio_refused: bool = Field(default=False, description="audio was to be sent and the model refused it")

    def hearing_line(self) -> str:
        """'heard 12/12 shots: audio, 60 s + transcript and cue sheet' ("" when not recorded)."""
        if self.hearing == "none":
            return "heard nothing: the film has no sound"
        if not self.hearing:
            return ""
        how = "transcript and cue sheet"
        if self.hearing == "audio":
            how = f"audio, {self.audio_seconds:.0f} s + {how}"
        elif self.audio_refused:
            how += " (the model refused audio)"
        return f"heard {self.heard}/{self.shots} shots: {how}"

    def line(self) -> str:
        """'watched 120/120 shots · 3 frames each · heard 120/120 shots: transcript and cue sheet · 15 chunks ·
        41,200 tokens' (what the UI and CLI show)."""
        how = {
            "frames": f"{self.frames_per_shot} frames each",
            "video": "as video clips",
            "text": "TEXT ONLY: the storyboard and a measured description of the frames, no images",
            "offline": "measured offline",
        }[self.input]
        parts = [f"{'read' if self.input == 'text' else 'watched'} {self.seen}/{self.shots} shots", how]
        if self.hearing_line():
            parts.append(self.hearing_line())
        if self.input != "offline":
            parts.append(f"{self.chunks} chunk{'s' if self.chunks != 1 else ''}")
            parts.append(f"{self.prompt_tokens + self.completion_tokens:,} tokens")
        if self.stopped_at:
            parts.append(f"would have stopped at {self.stopped_at}")
        return " · ".join(parts)


class Usage(Strict):
    """Cost of one agent call (or a sum of them)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            seconds=round(self.seconds + other.seconds, 3),
        )


def first_error(e: ValidationError) -> str:
    """A validation error in one line: where the first problem is, what it is, and how many more."""
    first = e.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
    more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
    return f"{loc}: {first['msg']}{more}"


def slug(text: str, n: int = 40) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:n] or "untitled"
