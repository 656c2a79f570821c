"""The Story screen's bible as values: the cards' typed requests (`RefAction`, `VoiceChange`), the cards' JSON
(`refs_json`), a card's edit applied to the bible (`edited_bible`), a voice in words, the consistency table, and the
cards' server function (a voice previewed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from app.services.planning import what_they_are
from app.ui.common import esc, media_url


class VoiceChange(BaseModel):
    """A voice as a card's controls set it (storage.schema.CharacterVoice checks the values)."""

    engine: Literal["piper", "speech"] | None = None
    speaker: str | None = Field(default=None, max_length=80)
    pitch: float | None = None
    pace: float | None = None

    def changes(self) -> dict:
        return self.model_dump(exclude_none=True)


class RefAction(BaseModel):
    """One button of a character's or location's card."""

    name: str = Field(min_length=1, max_length=80)
    location: bool = False
    action: Literal["upload", "generate", "clear", "voice", "describe", "add", "remove"]
    path: str = Field("", max_length=4096)
    voice: VoiceChange = Field(default_factory=VoiceChange)
    new_name: str = Field("", max_length=80)  # describe (a rename when it differs) and add
    description: str = Field("", max_length=1000)

    @classmethod
    def of(cls, data) -> RefAction:
        try:
            return cls.model_validate(data if isinstance(data, dict) else {})
        except ValidationError:
            raise ValueError("the references panel sent an action it cannot ask for: reload the page") from None


def voice_words(cast) -> str:
    """A character's voice in words: "Piper, pitch +3, pace 1.1 — cast from the name" (`cast`: app.services.audio.Cast)."""
    v = cast.voice
    if v.engine == "piper":
        who = (
            "Piper" + (f" ({Path(v.model).stem})" if v.model else "") + (f", speaker {v.speaker}" if v.speaker else "")
        )
    else:
        who = f"speech endpoint, voice {v.speaker or '(its default)'}"
    pitch = f", pitch {round(v.pitch, 1):+g}" if v.pitch else ", natural pitch" if v.engine == "piper" else ""
    return f"{who}{pitch}, pace {round(v.pace, 2):g} — {'chosen' if cast.stored else 'cast from the name'}"


def refs_json(
    studio, board, note: str = "", project: str = "", version: int | None = None, effects: dict | None = None
) -> str:
    """The bible's cards: characters (what they are, voice) and locations with their reference thumbnails, what
    draws generated references, and the version the cards show (`project`, `version`: a preview speaks in it);
    `effects` (`Studio.reference_effects`): what adding or clearing a reference would re-render, asked before it
    runs."""
    from app.services.keyframes import MAX_UPLOAD_BYTES
    from storage.schema import MAX_REFERENCES

    voices = studio.voice_cast(board) if board.characters else {}

    def subject(item, location: bool) -> dict:
        out = {
            "name": item.name,
            "location": location,
            "description": item.description,
            "refs": [media_url(studio.image_path(sha)) for sha in item.references],
            "affects": {
                k: {"text": a.describe(), "shots": a.shots}
                for k, a in (effects or {}).get((item.name, location), {}).items()
            },
        }
        if not location:
            cast = voices[item.name]
            out["what"] = what_they_are(item.description)
            out["voice"] = {
                "words": voice_words(cast),
                "engine": cast.voice.engine,
                "speaker": cast.voice.speaker,
                "pitch": round(cast.voice.pitch, 1),
                "pace": round(cast.voice.pace, 2),  # a cast pace is 1 / a length scale: 1.0526 reads as 1.05
            }
        return out

    return json.dumps(
        {
            "subjects": [subject(c, False) for c in board.characters] + [subject(loc, True) for loc in board.locations],
            "max_upload": MAX_UPLOAD_BYTES,
            "max_refs": MAX_REFERENCES,
            "note": note,
            "images": studio.images_label(),
            "speech": bool(studio.config.speech_base_url),
            "project": project,
            "version": version,
        }
    )


def edited_bible(board, a: RefAction):
    """`board` with the card's change to the character bible: a description (and a rename, carried into the shots
    that show them and the lines they say, with their references and voice), a new character, or one removed (only
    when no shot shows them). Raises ValueError in one line."""
    from storage.schema import Character, Storyboard

    chars = list(board.characters)
    names = [c.name for c in chars]
    new, desc = a.new_name.strip(), a.description.strip()
    if a.action == "add":
        if not new or not desc:
            raise ValueError("a new character needs a name and a description")
        if new in names:
            raise ValueError(f"{new} is in the bible already")
        return board.model_copy(update={"characters": [*chars, Character(name=new, description=desc)]})
    if a.name not in names:
        raise ValueError(f"no character {a.name!r} in this version (characters: {', '.join(names) or 'none'})")
    if a.action == "remove":
        shown = [s.shot_id for s in board.shots() if a.name in s.characters]
        if shown:
            raise ValueError(
                f"{a.name} is in {len(shown)} shot(s) ({', '.join(shown[:5])}): take them out of those shots first"
            )
        return board.model_copy(update={"characters": [c for c in chars if c.name != a.name]})
    if not new or not desc:
        raise ValueError("a character needs a name and a description")
    if new != a.name and new in names:
        raise ValueError(f"{new} is in the bible already")
    data = board.model_dump()
    for c in data["characters"]:
        if c["name"] == a.name:
            c.update(name=new, description=desc)
    if new != a.name:
        for scene in data["scenes"]:
            for shot in scene["shots"]:
                shot["characters"] = [new if n == a.name else n for n in shot["characters"]]
                for line in shot["dialogue"]:
                    line["character"] = new if line["character"] == a.name else line["character"]
    return Storyboard.model_validate(data)


SEEN_IN = {"clip": "its clip", "keyframe": "its keyframe", "none": "no picture yet"}


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _bar(x: float | None) -> str:
    if x is None:
        return "<td class='num'>—</td>"
    return (
        f"<td class='num' data-value='{x:.4f}'><span class='bar' style='width:{max(0.0, min(x, 1.0)) * 100:.0f}%'>"
        f"</span>{x:.3f}</td>"
    )


def consistency_html(report) -> str:
    """The per-character table (worst shots first when measured); says plainly when nothing was measured."""
    if report.measured:
        head = (
            f"<p class='method' id='consistency_method'>Measured with <b>{esc(report.model)}</b> on "
            f"v{report.version}: {esc(report.method)}.</p>"
        )
    else:
        # in a creator's words; the setting that changes it, for whoever runs the server, in the tooltip
        head = (
            f"<p class='not-measured' id='consistency_not_measured' title='{esc(report.note)}'>Not measured yet: "
            "no model that compares how characters look is set up on this server.</p>"
        )
    if not report.characters:
        return head + "<p>No characters in the bible yet.</p>"
    tables = []
    for c in report.characters:
        rows = (
            "".join(
                f"<tr data-shot='{esc(a.shot_id)}'><td>{esc(a.shot_id)}</td><td>{SEEN_IN[a.source]}</td>"
                + (_bar(a.to_reference) + _bar(a.to_others) if report.measured else "<td>—</td><td>—</td>")
                + "</tr>"
                for a in c.appearances
            )
            or "<tr><td colspan='4'>in no shot</td></tr>"
        )
        means = (
            f" · like the references {_num(c.mean_to_reference)} · like their other shots {_num(c.mean_to_others)}"
            if report.measured
            else ""
        )
        tables.append(
            f"<table class='consistency' data-character='{esc(c.name)}'><caption><b>{esc(c.name)}</b> · "
            f"{c.references} reference(s){means}</caption><tr><th>shot</th><th>seen in</th>"
            f"<th>like the references</th><th>like their other shots</th></tr>{rows}</table>"
        )
    order = " Worst shots first." if report.measured else ""
    return head + f"<p class='hint'>Each shot a character appears in.{order}</p>" + "".join(tables)


CSS = """
.consistency { border-collapse: collapse; margin: 6px 0 14px 0; font-size: 0.9em; min-width: 420px; }
.consistency caption { text-align: left; padding: 2px 0; }
.consistency th, .consistency td { border-bottom: 1px solid var(--border-color-primary); padding: 2px 8px; text-align: left; }
.consistency td.num { position: relative; min-width: 110px; font-variant-numeric: tabular-nums; }
.consistency .bar { position: absolute; left: 0; top: 20%; height: 60%; background: var(--color-accent-soft); z-index: -1; }
.not-measured { font-weight: 600; }
"""


def previewing(studio):
    """The cards' server function: `{"project", "version", "name", "voice"}` (a card's ▶) -> `{"url", "words"}` of
    a line in that voice (the controls' values tried, not stored), or `{"error": one line}`."""
    from app.errors import user_errors
    from app.ui.common import one_line
    from storage.repository import NotFound

    def preview_voice(data):
        data = data[0] if isinstance(data, list) and len(data) == 1 else data
        try:
            if not isinstance(data, dict) or not data.get("project"):
                raise ValueError("the card sent a request it cannot make: reload the page")
            try:
                change = VoiceChange.model_validate(data.get("voice") or {})
            except ValidationError:
                raise ValueError("pitch and pace must be numbers") from None
            path = studio.voice_sample(str(data["project"]), str(data.get("name") or ""), change.changes(),
                                       int(data.get("version") or 0) or None)  # fmt: skip
            return {"url": media_url(path)}
        except (TypeError, RuntimeError, NotFound, *user_errors()) as e:
            return {"error": one_line(e)}

    return preview_voice
