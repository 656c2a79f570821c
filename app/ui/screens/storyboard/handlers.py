"""The Storyboard's handlers: one class whose methods the page's events call with the components' values (a test
calls them the same way, no browser). Quick changes return the new values; long work (keyframes, takes, a shot's
render, the panel's screenings) runs as a job the method follows, yielding the progress line and then the outcome."""

from __future__ import annotations

import gradio as gr

from app.server.jobs import DONE, Task
from app.services.keyframes import MAX_UPLOAD_BYTES
from app.ui.board_media import CardAction, card_media, draw_confirmations, outcome, pick_message, uploaded_file
from app.ui.common import (
    ask_to_stop,
    branch_note,
    follow,
    mapped,
    md,
    media_url,
    need_project,
    notice,
    progress_html,
    ver,
)
from app.ui.screens.storyboard.board import (
    ALL_SCENES,
    BOARD_KINDS,
    FILM_TRACK,
    NO_FILM_TRACK,
    NOT_CONFIRMED,
    Finalize,
    TrackAction,
    board_json,
    film_options,
    json_to_board,
    loaded_board,
    scene_label,
    scene_starts,
    with_thumbs,
)
from app.ui.widgets import default_tier, saved_message, tier_note
from generation.audio.upload import UploadLimits
from storage.records import ShotRender

N_OPTIONS = 12  # the film options' controls (title card … channels), in `film_options`' order
SKIPS = (gr.skip(),) * 4


class StoryboardHandlers:
    """What the Storyboard's controls do, over the Studio and the server's jobs."""

    def __init__(self, studio, jobs):
        self.studio, self.jobs = studio, jobs

    def default_tier(self, pid, v):
        """The Draft/Final switch set to the version's default tier, and its note."""
        return default_tier(self.studio, pid, v)

    def policy(self) -> str:
        return getattr(self.studio.config, "seed_policy", "random")

    def thumbs_of(self, board) -> tuple[dict[str, str], dict[str, str]]:
        """Each shot's clip thumbnail and its tier, as it stands (its final when cached, else its draft)."""
        clips = self.studio.shot_clips(board)
        return (
            {sid: media_url(self.studio.thumbnail(c.sha256)) for sid, (c, _) in clips.items()},
            {sid: t for sid, (_, t) in clips.items()},
        )

    def editor_value(
        self, pid: str, number: int, open_takes: str | None = None, saved_from: int | None = None, carried_from: int = 0
    ) -> str:
        board = self.studio.version(pid, number).storyboard
        clips = self.studio.shot_clips(board)
        media = card_media(self.studio, pid, number, {sid: c for sid, (c, _) in clips.items()})
        return board_json(
            board,
            {sid: media_url(self.studio.thumbnail(c.sha256)) for sid, (c, _) in clips.items()},
            self.policy(),
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

    def stills_line(self) -> str:
        return (
            f"Keyframes and references are drawn by **{md(self.studio.images_label())}**; takes and clips by "
            f"**{md(self.studio.status().backend_label)}**."
        )

    def followed(self, pid: str, number: int, job, draft: str | None = None):
        """Follow a board job to its end; then show what it made (the page follows a new version)."""

        def frame(j):
            return progress_html(j), j.id, *SKIPS

        def final(j):
            if j.state != DONE:
                return progress_html(j), j.id, *SKIPS
            made, text, open_takes = outcome(j.result)
            text += branch_note(self.studio, pid, made) if made is not None else ""
            if isinstance(j.result, ShotRender):
                board = (
                    json_to_board(self.studio.version(pid, number).storyboard, draft, fresh_ids=False)
                    if draft
                    else None
                )
                value = with_thumbs(draft, *self.thumbs_of(board)) if draft else self.editor_value(pid, number)
                return progress_html(j), j.id, gr.skip(), value, text, str(self.studio.clip_path(j.result.sha256))
            return (
                progress_html(j),
                j.id,
                made if made is not None else gr.skip(),
                self.editor_value(pid, made or number, open_takes),
                text,
                gr.skip(),
            )

        yield from follow(self.jobs, job, frame, final)

    def start(self, kind: str, pid: str, number: int, fn, label: str, draft: str | None = None):
        job, started = self.jobs.start(kind, pid, fn, label=label, version=number)
        if not started:
            notice(f"{job.label} is running: wait for it or press Stop")
        yield from self.followed(pid, number, job, draft if started else None)

    def saved_only(self, version, value, what: str = "keyframes and takes are made from") -> None:
        """Keyframes and takes are made from the saved version: a board with unsaved edits is refused."""
        if value and json_to_board(version.storyboard, value) != version.storyboard:
            raise ValueError(f"save the storyboard first: {what} the saved version (v{version.number})")

    @staticmethod
    def kept_note(carried: int, number: int) -> str:
        return f" Your unsaved edits stay unsaved, over v{number}: Save makes them a version." if carried else ""

    def unsaved(self, version, value) -> int:
        """`version`'s number when the board holds unsaved edits over it (a track placed meanwhile keeps them on,
        over the version it makes), else 0."""
        return version.number if value and json_to_board(version.storyboard, value) != version.storyboard else 0

    @staticmethod
    def film_track_shown(board):
        """The film options' track line and its ✕: shown while a track of the creator's plays under the film."""
        on = bool(board.film.music_track)
        return FILM_TRACK if on else NO_FILM_TRACK, gr.Button(visible=on)

    def load(self, pid, v):
        """The board of the version, and the job this screen runs for the project, if any (then its outcome)."""
        if not pid:
            yield (
                None,
                gr.Dropdown(choices=[ALL_SCENES], value=ALL_SCENES),
                "",
                *[gr.skip()] * (N_OPTIONS + 1),
                "",
                "",
                gr.skip(),
                gr.skip(),
                "",
                gr.Button(visible=False),
            )
            return
        version = self.studio.version(pid, ver(v))
        b = version.storyboard
        scenes = [(scene_label(i, sc, start), sc.scene_id) for i, (sc, start) in enumerate(scene_starts(b), 1)]
        f = b.film
        job = next((j for j in map(lambda k: self.jobs.active(pid, k), BOARD_KINDS) if j is not None), None)
        yield (
            self.editor_value(pid, version.number),
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
            self.stills_line(),
            progress_html(job),
            job.id if job else "",
            gr.skip(),
            gr.skip(),
            *self.film_track_shown(b),
        )
        if job is not None:

            def shown(line):
                prog, job_id, number, value, text, shot_clip = line
                return (
                    value,
                    gr.skip(),
                    text,
                    *[gr.skip()] * (N_OPTIONS + 1),
                    prog,
                    job_id,
                    number,
                    shot_clip,
                    *SKIPS[:2],
                )

            yield from mapped(self.followed(pid, version.number, job), shown)

    def save_board(
        self,
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
        base = self.studio.version(pid, ver(v))
        loaded = loaded_board(base.storyboard, value)
        board = json_to_board(loaded, value)
        board = self.studio.with_film_options(
            board, film_options(tc, ts, cf, bs, loud, music, effects, duck, caps, described, tier, channels)
        )
        board = type(board).model_validate(board.model_dump())
        nv, branched, made = self.studio.save_merged(pid, base.number, loaded, board, "storyboard edit")
        if not made:
            return (
                nv.number if nv.number != base.number else gr.skip(),
                self.editor_value(pid, nv.number, saved_from=base.number),
                (f"Nothing changed since v{nv.number}: no new version."),
            )
        return nv.number, self.editor_value(pid, nv.number, saved_from=base.number), saved_message(nv, branched)

    def play(self, pid, v, value, evt: gr.EventData):
        pid = need_project(pid)
        board = json_to_board(self.studio.version(pid, ver(v)).storyboard, value, fresh_ids=False)
        found = self.studio.shot_clips(board).get(evt.shot_id)  # its final when cached, else its draft
        if found is None:
            notice(f"shot {evt.shot_id} has no clip as it stands: press ⟳ Render shot")
            return gr.skip()
        return str(self.studio.clip_path(found[0].sha256))

    def render_shot(self, pid, v, value, tier, evt: gr.EventData):
        """⟳ Render shot: the shot as the card has it (saved or not), at the switch's tier; nothing is saved."""
        pid = need_project(pid)
        version = self.studio.version(pid, ver(v))
        shot_id = CardAction.of({"shot_id": evt.shot_id, "action": "draw"}).shot_id
        tier = tier if tier in ("draft", "final") else version.storyboard.film.tier
        board = json_to_board(version.storyboard, value, fresh_ids=False)
        yield from self.start(
            "render",
            pid,
            version.number,
            Task("render_shot", (board, shot_id), {"tier": tier}),
            f"render shot {shot_id} ({tier})",
            draft=value,
        )

    def finalize(self, pid, v, value, evt: gr.EventData):
        """A card's or a scene header's Finalize: that shot (or scene) rendered at the final tier with the draft's
        seed, keyframe and take (the saved version's: unsaved edits are refused), and the film cut again from every
        shot's latest clip, so the Render screen and the Screening room show it at once."""
        a = Finalize.of(getattr(evt, "_data", None))
        pid = need_project(pid)
        version = self.studio.version(pid, ver(v))
        self.saved_only(version, value, "Finalize renders")
        n = version.number
        scope = self.studio.scope(pid, n, scene=a.scene_id or None, shots=a.shot_id or None)
        yield from self.start(
            "render",
            pid,
            n,
            Task("render", (pid, n), {"scope": scope, "tier": "final"}),
            f"finalise {scope.label()} of v{n}",
        )

    def card_action(self, pid, v, value, evt: gr.EventData):
        """A card's keyframe or takes button: quick changes at once, renders and screenings as a job."""
        a = CardAction.of(getattr(evt, "_data", None))
        pid = need_project(pid)
        version = self.studio.version(pid, ver(v))
        self.saved_only(version, value)
        n, sid = version.number, a.shot_id

        def now(number: int, text: str, open_takes: str | None = None):
            text += branch_note(self.studio, pid, number)
            return "", "", number, self.editor_value(pid, number, open_takes), text, gr.skip()

        if a.action == "upload":
            nv = self.studio.set_keyframe(pid, sid, uploaded_file(a.path), n)
            yield now(nv.number, f"v{nv.number}: shot {sid}'s keyframe is the uploaded picture.")
        elif a.action == "pick":
            nv = self.studio.pick_keyframe(pid, sid, a.keyframe_id, n)
            yield now(nv.number, f"v{nv.number}: shot {sid} uses an earlier keyframe again.")
        elif a.action == "clear":
            nv = self.studio.clear_keyframe(pid, sid, n)
            yield now(nv.number, f"v{nv.number}: shot {sid} has no keyframe: it renders from its prompt again.")
        elif a.action == "use":
            res = self.studio.pick_take(pid, sid, a.take_id, n)
            yield now(res.version.number, pick_message(res), sid)
        elif a.action == "draw":
            yield from self.start(
                "keyframes",
                pid,
                n,
                Task("render_keyframes", (pid, [sid], n)),
                f"keyframe of {sid}",
            )
        elif a.action == "reroll":
            yield from self.start(
                "keyframes",
                pid,
                n,
                Task("reroll_keyframe", (pid, sid, n)),
                f"new keyframe for {sid}",
            )
        elif a.action == "takes":
            yield from self.start(
                "takes",
                pid,
                n,
                Task("render_takes", (pid, sid, a.n, n)),
                f"{a.n} take(s) of {sid}",
            )
        elif a.action == "replace":
            yield from self.start("takes", pid, n, Task("replace_take", (pid, sid, n)), f"a new take for {sid}")
        elif a.action == "vote":
            yield from self.start(
                "critique",
                pid,
                n,
                Task("vote_takes", (pid, sid, n)),
                f"the panel watching {sid}'s takes",
            )

    def scene_track(self, pid, v, value, evt: gr.EventData):
        """A scene header's track button: the uploaded file placed over the scene (checked on the server: a
        refusal is one line and saves nothing), or taken away."""
        a = TrackAction.of(getattr(evt, "_data", None))
        pid = need_project(pid)
        version = self.studio.version(pid, ver(v))
        if a.scene_id not in {sc.scene_id for sc in version.storyboard.scenes}:
            raise ValueError(f"save the storyboard first: scene {a.scene_id} is new (not in v{version.number} yet)")
        carried = self.unsaved(version, value)  # the track goes on the saved version; unsaved edits stay unsaved
        upload = uploaded_file(a.path) if a.action == "upload" else None
        nv, made = self.studio.set_music_track(pid, a.scene_id, upload, version.number)
        if not made:
            text = f"v{nv.number}: nothing changed (scene {a.scene_id} already {'plays that track' if upload else 'has no track'})."
        elif upload is not None:
            text = f"v{nv.number}: scene {a.scene_id} plays the uploaded track instead of its cue."
        else:
            text = f"v{nv.number}: scene {a.scene_id} has no track: its cue plays again."
        text += branch_note(self.studio, pid, nv.number) + self.kept_note(carried, nv.number)
        return "", "", nv.number, self.editor_value(pid, nv.number, carried_from=carried), text, gr.skip()

    def keep_tier(self, pid, v, value, tier):
        """The board's Draft/Final switch flipped by the creator: the project's tier from now on, kept in its film
        options (a new version; unsaved edits on the board stay unsaved, carried over to it), and the film options'
        default tier shown as the switch is, so the next Save keeps it too."""
        if not pid or tier not in ("draft", "final"):
            return gr.skip(), gr.skip(), gr.skip(), gr.skip()
        version = self.studio.version(pid, ver(v))
        carried = self.unsaved(version, value)
        nv, made = self.studio.set_film_options(pid, {"tier": tier}, version.number)
        if not made:
            return gr.skip(), gr.skip(), gr.skip(), tier_note(self.studio, tier)
        editor = self.editor_value(pid, nv.number, carried_from=carried)
        return nv.number, editor, gr.Radio(value=tier), tier_note(self.studio, tier)

    def film_track(self, pid, v, value, path=None):
        """The film options' track: the uploaded file under the whole film (`path` None: taken away), through the
        scene button's path (`self.studio.set_music_track`, the same checks: a refusal is one line, nothing saved)."""
        pid = need_project(pid)
        version = self.studio.version(pid, ver(v))
        carried = self.unsaved(version, value)  # the track goes on the saved version; unsaved edits stay unsaved
        upload = uploaded_file(str(path)) if path is not None else None
        nv, made = self.studio.set_music_track(pid, None, upload, version.number)
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
        text += branch_note(self.studio, pid, nv.number) + self.kept_note(carried, nv.number)
        board = nv.storyboard
        return (
            "",
            "",
            nv.number,
            self.editor_value(pid, nv.number, carried_from=carried),
            text,
            gr.skip(),
            *self.film_track_shown(board),
        )

    def draw_keyframes(self, pid, v, value, scene):
        """Keyframes for every shot without one (of the chosen scene, or the whole board), as one job."""
        if value == NOT_CONFIRMED:  # the creator said no when asked what it re-renders: nothing changes
            yield *(gr.skip(),) * 4, "Not drawn: nothing changed.", gr.skip()
            return
        pid = need_project(pid)
        version = self.studio.version(pid, ver(v))
        self.saved_only(version, value)
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
        yield from self.start(
            "keyframes",
            pid,
            n,
            Task("render_keyframes", (pid, shots, n)),
            f"keyframes for {len(shots)} shot(s)",
        )

    def screen_keyframes(self, pid, v):
        pid = need_project(pid)
        version = self.studio.version(pid, ver(v))
        n = version.number
        missing = [s.shot_id for s in version.storyboard.shots() if not s.keyframe]
        if missing:
            raise ValueError(
                f"{len(missing)} shot(s) have no keyframe yet ({', '.join(missing[:5])}): press ✦ Draw keyframes first"
            )
        yield from self.start(
            "critique",
            pid,
            n,
            Task("screen_keyframes", (pid, n)),
            f"the panel screening v{n}'s keyframes",
        )

    def stop_job(self, pid, job_id):
        job = self.jobs.get(job_id or "")
        if job is None or job.project != pid:
            job = next((j for j in map(lambda k: self.jobs.active(pid or "", k), BOARD_KINDS) if j is not None), None)
        return ask_to_stop(self.jobs, job)
