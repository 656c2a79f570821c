"""The LLM critic: one persona watches the film like a viewer, part by part in order, and answers a typed Critique.

Each part (agents/watch.py: a scene, a window of shots, or short scenes together, sized to the endpoint's images
per request, context and answer budget) carries the viewer's running memory: what has happened, how engaged they
are, where they would have stopped, the issues so far. The last part's answer is the film-level Critique; the
shot notes of every part are kept. Limits are met by asking for less: an answer cut off at the output limit splits
its part; a request the endpoint refuses as too large (images, context) gets one smaller retry, then one line that
names the setting. A model that takes no images is noticed at its first refusal (the endpoint memory keeps it) and
the critic then reads the storyboard and a measured description of each shot's frames, labelled text-only.

Every part says what is heard in its shots (the transcript, the cue sheet, the mix measured over each shot). With
`critic_audio` each part also carries its window of the film's mix as `input_audio`; a model that refuses it is
noticed at its first refusal (remembered like images), that part is asked again without it, and no later part or
critic sends audio to that model again. The coverage says what was heard and how.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from pydantic import Field

from agents.base import AgentError, AnswerTooLong, FilmView, RequestTooLarge, Result
from agents.content import audio_part, image_part, video_part
from agents.json_answer import Closed as _Closed
from agents.llm import LLMClient, Progress
from agents.llm_config import env_name
from agents.watch import (
    CARRY_RESERVE,
    ISSUES_CARRIED,
    Carried,
    Input,
    Limits,
    Part,
    audio_window,
    frames_by_shot,
    heard_texts,
    part_text,
    plan_parts,
    split,
    tile_part,
    timecode,
)
from prompts import render
from storage.run import RunContext, WatchProgress
from storage.schema import (
    DIMENSION_MEANINGS,
    DIMENSIONS,
    Coverage,
    Critique,
    CritiqueIssue,
    Dimension,
    Persona,
    Scores,
    ShotNote,
    Unseen,
    Usage,
)

__all__ = ["CritiqueOut", "IssueOut", "LLMCritic", "WatchOut", "timecode", "to_critique"]

log = logging.getLogger(__name__)
REFERENCES_PER_CHARACTER = 2  # reference images a critic sees per character, the first time the character appears


class IssueOut(_Closed):
    summary: str
    urgency: int = Field(ge=1, le=5, description="5 = fix first")
    dimension: Dimension
    shot_ids: list[str]
    suggestion: str = Field(description="a concrete change to a prompt or the cut")


class CritiqueOut(_Closed):
    """What the model answers for the whole film (the last part); converted to storage.schema.Critique."""

    overall: float = Field(ge=0, le=10)
    scores: Scores
    shot_notes: list[ShotNote]
    top_issues: list[IssueOut] = Field(description="most urgent first")
    keep_watching: bool
    keep_watching_reason: str
    summary: str = Field(description="your reaction, in your own voice")


class Memory(_Closed):
    so_far: str = Field(
        max_length=1500, description="what has happened so far, as you understood it (at most 60 words)"
    )
    engagement: int = Field(ge=0, le=10, description="how engaged you are now")
    would_stop_at: str | None = Field(description="the shot id where you would have stopped watching, or null")


class WatchOut(_Closed):
    """What the model answers for a part before the last."""

    shot_notes: list[ShotNote]
    issues: list[IssueOut] = Field(description="issues in this part, most urgent first")
    memory: Memory


def to_critique(out: CritiqueOut, persona_id: str, known_shots: set[str], earlier: Sequence[ShotNote] = ()) -> Critique:
    """The schema type, with the notes of earlier parts first; notes about shots that do not exist dropped (and logged)."""
    notes = [n for n in [*earlier, *out.shot_notes] if n.shot_id in known_shots]
    issues = []
    for i in sorted(out.top_issues, key=lambda i: -i.urgency):
        ids = [s for s in i.shot_ids if s in known_shots]
        issues.append(
            CritiqueIssue(
                summary=i.summary, urgency=i.urgency, dimension=i.dimension, shot_ids=ids, suggestion=i.suggestion
            )
        )
    dropped = [n.shot_id for n in out.shot_notes if n.shot_id not in known_shots]
    dropped += [s for i in out.top_issues for s in i.shot_ids if s not in known_shots]
    if dropped:
        log.warning("critic %s: dropped references to unknown shot ids %s", persona_id, sorted(set(dropped)))
    return Critique(
        persona_id=persona_id,
        overall=out.overall,
        scores=out.scores,
        shot_notes=notes,
        top_issues=issues,
        keep_watching=out.keep_watching,
        keep_watching_reason=out.keep_watching_reason,
        summary=out.summary,
    )


class LLMCritic:
    """Critic role over an OpenAI-compatible model (agents.base.Critic). `video`: send each part as a clip."""

    def __init__(
        self, client: LLMClient, model: str | None = None, *, video: bool = False, video_seconds: float = 30.0
    ):
        self.client = client
        self.model = model or client.config.critic_model
        self.video, self.video_seconds = video, video_seconds
        self.audio = client.config.critic_audio
        self._images: int | None = None  # images per request the endpoint refused more than (learned this process)
        self._lock = threading.Lock()
        self._descriptions: dict[tuple, dict[str, str]] = {}

    @property
    def text_only(self) -> bool:
        """The model refused images (now or before: the endpoint memory keeps it): critics read instead of watch."""
        return self.client.memory.get(self.model).get("images") is False

    @property
    def audio_refused(self) -> bool:
        """Audio input is on and the model refused it (now or before: the endpoint memory keeps it)."""
        return self.audio and self.client.memory.get(self.model).get("audio") is False

    @property
    def hears_audio(self) -> bool:
        """Parts carry their sound as `input_audio`."""
        return self.audio and not self.audio_refused

    @property
    def mode(self) -> str:
        hearing = " (hears the sound)" if self.hears_audio else ""
        if self.audio_refused:
            hearing = " (the model refuses audio: transcript and cue sheet only)"
        if self.text_only:
            return (
                f"llm:{self.model} (text-only: storyboard and frame descriptions, the model takes no images){hearing}"
            )
        return f"llm:{self.model}" + (" (video)" if self.video else "") + hearing

    def critique(self, persona: Persona, film: FilmView, ctx: RunContext | None = None) -> Result[Critique]:
        watch = _Watch(self, persona, film, ctx or RunContext())
        try:
            return self._watch(watch, film, persona)
        except AgentError as e:
            e.usage = sum(watch.usage, Usage())  # what the failed watch cost, every part and retry
            raise

    def _watch(self, watch: _Watch, film: FilmView, persona: Persona) -> Result[Critique]:
        text_before = self.text_only
        try:
            return watch.run("text" if text_before else "video" if self.video and film.join_clips else "frames")
        except AgentError:
            if text_before or not self.text_only:
                raise
            log.warning(
                "critic %s (%s): the model takes no images; reading the film as text from now on",
                persona.id,
                self.model,
            )
            return watch.run("text")

    def limits(self, mode: Input) -> Limits:
        cfg = self.client.config
        ctx, _ = self.client.context_tokens(self.model)
        answer = self.client.max_tokens_for("critic", self.model)
        images = min(cfg.max_images_per_request, cfg.max_frames_per_call)
        with self._lock:
            images = min(images, self._images or images)
        return Limits(
            images=images,
            tokens=ctx - answer,
            answer=answer,
            image_tokens=cfg.image_cost(),
            video_seconds=self.video_seconds,
        )

    def learned(self, images: int) -> None:
        with self._lock:
            self._images = min(self._images or images, images)

    def descriptions(self, film: FilmView) -> dict[str, str]:
        """What each shot's frames show, measured offline (agents.offline.describe), once per film for the panel."""
        from agents.offline.describe import describe_frames

        key = tuple((f.shot_id, f.path) for f in film.frames) + tuple(sorted(film.clips.items()))
        with self._lock:
            if key not in self._descriptions:
                self._descriptions = {key: describe_frames(film)}  # the newest film only: bounded
            return self._descriptions[key]

    def system(self, persona: Persona) -> dict:
        return {
            "role": "system",
            "content": render(
                "critic_system.j2",
                persona=persona,
                tastes=persona.tastes.describe(),
                weights=", ".join(f"{d} {persona.weights.get(d, 1.0):g}" for d in DIMENSIONS),
                dimensions=[(d, DIMENSION_MEANINGS[d]) for d in DIMENSIONS],
            ),
        }


class _Watch:
    """One persona watching one film: its parts, its memory, its cost."""

    def __init__(self, critic: LLMCritic, persona: Persona, film: FilmView, ctx: RunContext):
        self.c, self.persona, self.film, self.ctx = critic, persona, film, ctx
        self.role = f"critic {persona.id}"
        self.deadline = critic.client.deadline(ctx)  # this critic's whole watch: every part, retry and repair
        self.usage: list[Usage] = []
        self.frames = frames_by_shot(film)
        self.heard = heard_texts(film)
        self.audio_seconds = 0.0  # of the mix sent with the parts that were answered
        self.audio_refused = False  # the model refused audio during this watch

    def run(self, mode: Input) -> Result[Critique]:
        c, film = self.c, self.film
        limits = c.limits(mode)
        if c.hears_audio and film.hearing is not None and film.hearing.audio:
            limits.audio_seconds = c.client.config.max_audio_seconds
        system = c.system(self.persona)
        descriptions = c.descriptions(film) if mode == "text" else None
        first = part_text(
            film, self.persona, Part([0]), 1, 1, Carried(), mode, True, descriptions, self.heard, c.hears_audio
        )
        base = c.client.estimate_tokens([system, {"role": "user", "content": first}])
        self.audio_seconds = 0.0
        parts = plan_parts(film, mode, limits, base, REFERENCES_PER_CHARACTER)
        carried, shrunk, i = Carried(), set(), 0
        final_out: CritiqueOut | None = None
        while i < len(parts):
            part, final = parts[i], i == len(parts) - 1
            window = audio_window(film, part, limits.audio_seconds) if c.hears_audio else None
            messages = [
                system,
                {
                    "role": "user",
                    "content": self.content(part, i + 1, len(parts), carried, mode, final, descriptions, window),
                },
            ]
            self.emit(chunk=i + 1, chunks=len(parts), status="watching")
            try:
                out = self.ask(messages, CritiqueOut if final else WatchOut, i + 1, len(parts))
            except AnswerTooLong as e:
                if len(part.shots) == 1:
                    raise AgentError(
                        f"{self.role} ({c.model}): even the answer about one shot was cut off ({e}); "
                        f"raise {env_name('critic_max_tokens')} (or the server's own output limit)"
                    ) from None
                parts[i : i + 1] = split(part)  # ask for less: half the shots, so half the notes
                continue
            except RequestTooLarge as e:
                if e.limit in shrunk or len(part.shots) == 1:
                    raise AgentError(f"{self.role}: a smaller request was refused too: {e}") from None
                shrunk.add(e.limit)
                if e.limit == "images":
                    limits.images = max(1, self.pictures(part, mode) // 2)
                    c.learned(limits.images)
                else:  # plan the part that was refused at half its size, or to the context the server stated
                    limits.tokens = base + CARRY_RESERVE + (c.client.estimate_tokens(messages) - base) // 2
                    if e.tokens:
                        limits.tokens = min(limits.tokens, e.tokens - limits.answer)
                parts = parts[:i] + plan_parts(film, mode, limits, base, REFERENCES_PER_CHARACTER, start=part.shots[0])
                self.emit(chunk=i + 1, chunks=len(parts), status="smaller", note=f"refused as too large: {e.limit}")
                continue
            except AgentError:
                if window is None or not c.audio_refused:
                    raise
                # the model refused the sound (the endpoint memory now says so): this part again, as words only;
                # no later part or critic sends audio to this model again
                log.warning(
                    "critic %s (%s): the model takes no audio; hearing the transcript and cue sheet from now on",
                    self.persona.id,
                    c.model,
                )
                self.audio_refused = True
                self.emit(chunk=i + 1, chunks=len(parts), status="watching", note="the model refuses audio: as text")
                continue
            if window is not None:
                self.audio_seconds += window[1] - window[0]
            if isinstance(out, CritiqueOut):  # the final part's answer (asked as CritiqueOut)
                final_out = out
            else:
                self.remember(carried, out, part)
            i += 1
        known = {s.shot_id for s in film.storyboard.shots()}
        if final_out is None:  # the loop ends after the final part
            raise RuntimeError("the critic watched no final part")
        critique = to_critique(final_out, self.persona.id, known, carried.notes)
        usage = sum(self.usage, Usage())
        return Result(
            value=critique,
            usage=usage,
            model=c.model,
            coverage=self.coverage(mode, len(parts), usage, carried, descriptions),
        )

    def ask(self, messages: list[dict], result_type, n: int, parts: int):
        def on_tokens(p: Progress) -> None:
            self.emit(
                chunk=n,
                chunks=parts,
                tokens=p.tokens,
                tokens_per_s=round(p.tokens_per_s, 1),
                note=p.note,
            )

        try:
            out, usage = self.c.client.structured(
                self.role,
                self.c.model,
                messages,
                result_type,
                on_length="raise",
                on_progress=on_tokens,
                cancel=self.ctx.cancel,
                deadline=self.deadline,
            )
        except AgentError as e:
            self.usage.append(getattr(e, "usage", Usage()))
            raise
        self.usage.append(usage)
        return out

    def emit(self, **event) -> None:
        self.ctx.progress(WatchProgress(persona=self.persona.id, **event))

    def pictures(self, part: Part, mode: Input) -> int:
        if mode != "frames":
            return len(part.first_refs) * REFERENCES_PER_CHARACTER
        shots = self.film.storyboard.shots()
        return (
            sum(1 for i in part.shots if self.frames.get(shots[i].shot_id))
            + len(part.first_refs) * REFERENCES_PER_CHARACTER
        )

    def remember(self, carried: Carried, out: WatchOut, part: Part) -> None:
        """The memory a viewer carries into the next part: theirs, the notes so far, the most urgent issues."""
        shots = self.film.storyboard.shots()
        ids = {shots[i].shot_id for i in part.shots}
        carried.so_far = " ".join(out.memory.so_far.split()[:80])
        carried.engagement = out.memory.engagement
        known = {s.shot_id for s in shots}
        if carried.stopped_at is None and out.memory.would_stop_at in known:
            carried.stopped_at = out.memory.would_stop_at
        carried.notes += [n for n in out.shot_notes if n.shot_id in ids]
        lines = [
            (
                i.urgency,
                f"[{i.urgency}] {i.summary}"
                + (
                    f" ({', '.join(s for s in i.shot_ids if s in known)})"
                    if any(s in known for s in i.shot_ids)
                    else ""
                ),
            )
            for i in out.issues
        ]
        carried.issues = sorted([*carried.issues, *lines], key=lambda t: -t[0])[:ISSUES_CARRIED]

    def content(
        self,
        part: Part,
        n: int,
        parts: int,
        carried: Carried,
        mode: Input,
        final: bool,
        descriptions: dict[str, str] | None,
        window: tuple[float, float] | None = None,
    ) -> str | list[dict]:
        """The user message of one part: its text, then its sound (`window` of the film's mix, when the critic hears
        audio), then each shot's picture (or the part's clip), then references."""
        cfg, film = self.c.client.config, self.film
        text = part_text(
            film, self.persona, part, n, parts, carried, mode, final, descriptions, self.heard, window is not None
        )
        content: list[dict] = [{"type": "text", "text": text}]
        shots = film.storyboard.shots()
        spans = {s.shot_id: (a, b) for s, a, b in film.whole.timeline()}
        if window is not None and film.hearing is not None and film.hearing.audio:
            ids = [shots[i].shot_id for i in part.shots]
            a, b = window
            try:
                sound = audio_part(film.hearing.audio, a, b)
            except OSError as e:
                raise AgentError(f"{self.role} ({self.c.model}): could not cut the film's sound: {e}") from None
            content += [
                {
                    "type": "text",
                    "text": f"[sound of shots {ids[0]}-{ids[-1]} · {timecode(a)}-{timecode(b)} · {b - a:.1f} s]",
                },
                sound,
            ]
        try:
            if mode == "frames":
                for i in part.shots:
                    sid = shots[i].shot_id
                    frames = self.frames.get(sid, [])
                    if not frames:
                        continue
                    picture, order = tile_part([f.path for f in frames], cfg.image_detail, cfg.max_image_side)
                    a, b = spans[sid]
                    many = f"{len(frames)} frames, {order}" if len(frames) > 1 else "1 frame"
                    content += [
                        {"type": "text", "text": f"[shot {sid} · {timecode(a)}-{timecode(b)} · {many}]"},
                        picture,
                    ]
            elif mode == "video":
                ids = [shots[i].shot_id for i in part.shots]
                if film.join_clips is None:  # run() chooses video input only with join_clips
                    raise AgentError(f"{self.role}: video input needs the film's clips joined")
                clip = film.join_clips(ids)
                content += [
                    {
                        "type": "text",
                        "text": f"[shots {ids[0]}-{ids[-1]} · {timecode(spans[ids[0]][0])}-"
                        f"{timecode(spans[ids[-1]][1])}]",
                    },
                    video_part(clip),
                ]
            if part.first_refs and mode != "text":
                content.append({"type": "text", "text": render("critic_references.j2", names=part.first_refs)})
            for name in part.first_refs if mode != "text" else ():
                for path in film.references.get(name, [])[:REFERENCES_PER_CHARACTER]:
                    content += [
                        {"type": "text", "text": f"[reference · {name}]"},
                        image_part(path, cfg.image_detail, cfg.max_image_side),
                    ]
        except OSError as e:
            raise AgentError(f"{self.role} ({self.c.model}): could not read a frame: {e}") from None
        if all(p["type"] == "text" for p in content):  # text-only: a string (llama-cpp-python refuses a list)
            return "\n\n".join(p["text"] for p in content)
        return content

    def coverage(
        self, mode: Input, parts: int, usage: Usage, carried: Carried, descriptions: dict[str, str] | None
    ) -> Coverage:
        shots = self.film.storyboard.shots()
        want = self.film.frames_per_shot or max((len(f) for f in self.frames.values()), default=0)
        unseen, counts = [], []
        for s in shots:
            n = len(self.frames.get(s.shot_id, []))
            counts.append(n)
            if mode == "frames" and n < max(1, want):
                unseen.append(
                    Unseen(
                        shot_id=s.shot_id,
                        why=f"only {n} frame{'s' if n != 1 else ''} could be cut from its clip"
                        if n
                        else "no frame could be cut from its clip",
                    )
                )
            if mode == "video" and s.shot_id not in self.film.clips:
                unseen.append(Unseen(shot_id=s.shot_id, why="no clip"))
            if mode == "text" and s.shot_id not in (descriptions or {}):
                unseen.append(Unseen(shot_id=s.shot_id, why="its frames could not be described"))
        hearing = self.film.hearing
        heard = sum(1 for s in shots if hearing is not None and hearing.of(s.shot_id) is not None)
        how = "none" if hearing is None else "audio" if self.audio_seconds > 0 else "text"
        return Coverage(
            hearing=how,
            heard=heard,
            audio_seconds=round(self.audio_seconds, 3),
            audio_refused=self.audio_refused or self.c.audio_refused,
            input=mode,
            shots=len(shots),
            seen=len(shots) - len(unseen),
            frames_per_shot=want if mode == "frames" else 0,
            min_frames=min(counts) if mode == "frames" else 0,
            chunks=parts,
            requests=usage.calls,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            unseen=unseen,
            stopped_at=carried.stopped_at,
        )
