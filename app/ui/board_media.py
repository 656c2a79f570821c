"""What a storyboard card shows besides its fields, and what its image-first buttons ask for.

Each card carries its approved keyframe (shown instead of the clip's thumbnail), a short strip of the shot's
earlier keyframe candidates, and its takes side by side with the panel's latest votes (`card_media`). A card's
button sends a `CardAction` (typed and checked here, never trusted as it came); `outcome` words what a finished
action did and says which version the page follows. Uploaded files are accepted only from Gradio's upload folder
(`uploaded_file`), so a page cannot name any other file on the server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from app.services.takes import MAX_TAKES_PER_ACTION
from app.ui.common import md, media_url, named

MAX_CANDIDATES = 6  # keyframe candidates shown under a card's picture (the approved one always among them)
ID = r"^[A-Za-z0-9_\-]{1,64}$"


class CardAction(BaseModel):
    """One button of a card: what to do to which shot."""

    shot_id: str = Field(pattern=ID)
    action: Literal["draw", "reroll", "upload", "pick", "clear", "takes", "replace", "use", "vote"]
    n: int = Field(1, ge=1, le=MAX_TAKES_PER_ACTION)  # takes to render
    keyframe_id: str = Field("", pattern=r"^[A-Za-z0-9_\-]{0,64}$")
    take_id: str = Field("", pattern=r"^[A-Za-z0-9_\-]{0,64}$")
    path: str = Field("", max_length=4096)  # an uploaded file, as Gradio's upload answered

    @classmethod
    def of(cls, data: Any) -> CardAction:
        try:
            return cls.model_validate(data if isinstance(data, dict) else {})
        except ValidationError:
            raise ValueError("the storyboard sent an action it cannot ask for: reload the page") from None


def uploaded_file(path: str) -> Path:
    """A file the page uploaded through Gradio (inside its upload folder); anything else is refused."""
    from gradio.utils import get_upload_folder, is_in_or_equal

    if not path or not is_in_or_equal(path, get_upload_folder()) or not Path(path).is_file():
        raise ValueError("that upload is not there any more: choose the file again")
    return Path(path)


def candidates_json(studio, card) -> list[dict]:
    """A shot's keyframe candidates for the strip, newest first, one per picture, the approved one kept."""
    seen, out = set(), []
    for k in card.candidates:
        if k.sha256 in seen:
            continue
        seen.add(k.sha256)
        out.append(
            {
                "id": k.id,
                "url": media_url(studio.image_path(k.sha256)),
                "on": k.sha256 == card.approved,
                "source": k.source,
                "seed": k.seed,
                "version": k.version,
            }
        )
    shown = out[:MAX_CANDIDATES]
    if card.approved and not any(c["on"] for c in shown):
        shown[-1:] = [c for c in out if c["on"]][:1]
    return shown if len(out) > 1 or not card.approved else []  # one approved still needs no strip


def takes_json(studio, state) -> dict:
    """A shot's takes side by side (thumbnail, clip, which is in use, which reuse their clip), each with the
    personas who voted for it in the panel's latest screening of the shot (and why), and the personas who had no
    preference (with their scores)."""
    screening = state.votes
    voters: dict[str, list[dict]] = {t.id: [] for t in state.takes}
    undecided = []
    for v in screening.votes if screening else ():
        name = v.persona_name or v.persona_id
        if v.take_id is None:
            undecided.append({"name": name, "scores": [v.scores[t.id] for t in state.takes if t.id in v.scores]})
            continue
        voters.setdefault(v.take_id, []).append({"name": name, "reason": v.reason, "score": v.scores.get(v.take_id)})
    items = [
        {
            "id": t.id,
            "number": t.number,
            "seed": t.seed,
            "thumb": media_url(studio.thumbnail(t.sha256)),
            "clip": media_url(studio.clip_path(t.sha256)),
            "current": t.id in state.current,
            "picked": t.id == state.picked,
            "voters": voters[t.id],
        }
        for t in state.takes
    ]
    return {
        "items": items,
        "voted": len(screening.votes) if screening else 0,
        "no_preference": undecided,
        "votes_version": screening.version if screening else None,
        "can_vote": len(state.current) >= 2,
    }


def card_media(studio, pid: str, number: int, cached=None) -> dict[str, dict]:
    """shot_id -> what its card shows besides its fields: keyframe URL, candidate strip, takes, and what a new
    keyframe would re-render (`affects`, asked before ✦ Draw / ⟳ New keyframe runs). `cached`: the board's cached
    clips when the caller has them already (`Studio.cached_shots`)."""
    takes = studio.board_takes(pid, number)
    effects = studio.keyframe_effects(pid, number, cached)
    return {
        card.shot_id: {
            "keyframe": media_url(studio.image_path(card.approved)) if card.approved else "",
            "candidates": candidates_json(studio, card),
            "takes": takes_json(studio, takes[card.shot_id]) if card.shot_id in takes else None,
            "affects": affects_json(effects[card.shot_id]),
        }
        for card in studio.shot_keyframes(pid, number)
    }


def affects_json(a) -> dict:
    """A ClipsAffected for the page: the sentence it confirms with (plain text: the browser's confirm shows text),
    and the shots, so a board-wide drawing can join its cards' (`draw_confirmations`)."""
    return {"text": a.describe(), "shots": a.shots, "rendered": a.rendered}


def draw_confirmations(board, media: dict[str, dict], all_scenes: str) -> dict[str, str]:
    """What ✦ Draw keyframes asks before it runs, per scene picked (and `all_scenes`): the cards' `affects` of the
    shots it would draw (those without a keyframe) joined — a shot given a keyframe starts its own chain, so a
    drawing of several shots re-renders the union of what each would (the Studio's `clips_affected` over the whole
    board says the same; tests/ui/test_draft_versions.py holds them equal)."""
    from app.services.clips import ClipsAffected

    def text(shots) -> str | None:
        chosen = [s.shot_id for s in shots if not s.keyframe]
        if not chosen:
            return None
        hit = {sid for c in chosen for sid in media[c]["affects"]["shots"]}
        ren = {sid for c in chosen for sid in media[c]["affects"]["rendered"]}
        order = [s.shot_id for s in board.shots()]
        return ClipsAffected(
            action=f"Drawing keyframes for {len(chosen)} shot{'' if len(chosen) == 1 else 's'}",
            shots=[s for s in order if s in hit],
            rendered=[s for s in order if s in ren],
            total=len(order),
        ).describe()

    out = {sc.scene_id: text(sc.shots) for sc in board.scenes}
    out[all_scenes] = text(board.shots())
    return {k: v for k, v in out.items() if v}


def outcome(result) -> tuple[int | None, str, str | None]:
    """What a finished card or board action did: (the version the page follows, or None; the message; the shot
    whose takes to show open)."""
    from app.services.keyframes import KeyframesResult
    from app.services.takes import PickResult, ShotTakes
    from storage.records import RenderRecord, ShotRender, TakeScreeningRecord, Version

    if isinstance(result, KeyframesResult):
        shots = ", ".join(k.shot_id for k in result.keyframes)
        return (
            result.version.number,
            f"{named(result.version)}: keyframes approved for {md(shots)} (drew "
            f"{result.rendered}, reused {result.reused}) · {md(result.label)}",
            None,
        )
    if isinstance(result, PickResult):
        return result.version.number, pick_message(result), result.take.shot_id
    if isinstance(result, ShotTakes):
        n = len(result.takes)
        return (
            None,
            (
                f"Shot {result.shot_id} has {n} take(s): hover to play, **Use** one to make it the shot's "
                "(a new version)."
            ),
            result.shot_id,
        )
    if isinstance(result, TakeScreeningRecord):
        from app.services.takes import NO_PREFERENCE_SPREAD

        undecided = sum(v.take_id is None for v in result.votes)
        return (
            None,
            (
                f"The panel watched {len(result.takes)} takes of {result.shot_id}: "
                f"{len(result.votes) - undecided} vote(s), {undecided} with no preference (scores within "
                f"{NO_PREFERENCE_SPREAD}); see beside the takes."
            ),
            result.shot_id,
        )
    if isinstance(result, list) and result:  # a panel run: the keyframe screening (or the film's, from elsewhere)
        mean = sum(c.critique.overall for c in result) / len(result)
        what = "screened the keyframes of" if result[0].screening == "keyframes" else "watched"
        return (
            None,
            (f"The panel {what} v{result[0].version}: {mean:.1f}/10. Read them in the **Screening room**."),
            None,
        )
    if isinstance(result, ShotRender):
        return (
            None,
            f"Shot {result.shot_id} rendered as it stands on the board, **{result.tier}** "
            "(not saved: Save makes a version).",
            None,
        )
    if isinstance(result, RenderRecord):  # a Finalize: which shots of the film are drafts still
        from app.ui.timeline import drafts_note

        drafts = drafts_note(result)
        return (
            None,
            f"v{result.version} rendered: {result.rendered} shot(s) rendered, {result.reused} reused; "
            + (f"{md(drafts)}." if drafts else "every shot final."),
            None,
        )
    if isinstance(result, Version):  # its message may carry a name someone typed: not shown in Markdown
        return result.number, f"{named(result)} made.", None
    return None, "Done.", None


def pick_message(res) -> str:
    t = res.take
    return (
        f"{named(res.version)}: shot {t.shot_id} uses take #{t.number} (seed {t.seed}); "
        + ("its clip must be rendered again." if res.rerenders else "its clip is cached: nothing re-renders.")
        + (f" Continuity shots after it re-render: {', '.join(res.downstream)}." if res.downstream else "")
    )


def screening_label(critiques) -> str:
    """A line over the Screening room's critiques when they screened keyframes, not the film."""
    if not critiques or critiques[0].screening != "keyframes":
        return ""
    return (
        "<p class='screening-kind' id='screening_kind'><b>Keyframe screening</b>: the panel saw one still per "
        "shot, before any motion was rendered.</p>"
    )
