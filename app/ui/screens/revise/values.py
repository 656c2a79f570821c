"""The Revise screen's values: the refiner's proposal as the review's JSON (`review_json`: each edit with its word
diff, what it touches in words, its sources by name), and the creator's decisions read back (`decisions`)."""

from __future__ import annotations

import json
import re

from app.ui.widgets import diff_segments

CSS = """
.review .bar { display: flex; gap: 8px; align-items: center; margin-bottom: 8px; }
.review .bar .summary { flex: 1; }
.review button { font: inherit; font-size: 0.9em; border: 1px solid var(--border-color-primary); border-radius: 5px;
  padding: 3px 10px; background: var(--button-secondary-background-fill); color: var(--body-text-color); cursor: pointer; }
.review button:disabled { opacity: 0.5; cursor: default; }
.review .commit { margin-top: 10px; padding: 8px 16px; font-weight: 600; background: var(--button-primary-background-fill);
  color: var(--button-primary-text-color); }
.edit-row { display: grid; grid-template-columns: 28px 120px 1fr; gap: 10px; align-items: start; padding: 6px 0;
  border-bottom: 1px solid var(--border-color-primary); }
.edit-row.rejected { opacity: 0.45; }
.edit-row .thumb { width: 120px; aspect-ratio: 16 / 9; background: #1b1b1b; border-radius: 4px; overflow: hidden; }
.edit-row .thumb img { width: 100%; height: 100%; object-fit: cover; }
.edit-row .pick input { width: 18px; height: 18px; margin-top: 4px; }
.edit-row .head { display: flex; gap: 8px; align-items: baseline; }
.edit-row .edit-btn { font-size: 0.8em; padding: 0 8px; }
.edit-row .diff { margin: 2px 0; }
.edit-row del { background: #fdd; color: #600; text-decoration: line-through; }
.edit-row ins { background: #dfd; color: #060; text-decoration: none; }
.edit-row textarea { width: 100%; box-sizing: border-box; font: inherit; margin: 2px 0; }
.edit-row .why { font-size: 0.85em; color: var(--body-text-color-subdued); }
.review .answers { margin: 0 0 8px; padding-left: 18px; }
.review .answers li.not-changed, .review .answers li.not-answered { color: var(--body-text-color-subdued); }
.review .answers .request { font-style: italic; }
.edit-row .flag { font-size: 0.85em; color: #a33; }
.review .unchanged { font-size: 0.85em; color: var(--body-text-color-subdued); margin-top: 4px; }
"""


def target(e, board=None) -> str:
    """What an edit touches, in words (a sound edit as `storage.edits.describe` says it)."""
    from storage.edits import describe
    from storage.schema import SOUND_OPS

    if e.op in SOUND_OPS or (e.op == "set" and e.field == "sounds"):
        return describe(e, board)
    return {
        "set": lambda: f"shot {e.shot_id} · {e.field.replace('_', ' ')}",
        "add_shot": lambda: f"new shot after {e.shot_id}" if e.shot_id else "new first shot",
        "remove_shot": lambda: f"remove shot {e.shot_id}",
        "move_shot": lambda: f"move shot {e.shot_id} " + (f"after {e.new}" if e.new else "to the start"),
        "set_character": lambda: f"character {e.character}",
        "set_story": lambda: f"story · {e.field.replace('_', ' ')}",
    }[e.op]()


NOTE_ID = re.compile(r"n_[0-9a-f]{1,32}")


def source_names(sources: list[str], notes: dict[str, str], personas: dict[str, str]) -> list[str]:
    """Note ids become your note's words, persona ids their names; an id neither knows (a note elsewhere, a persona
    no longer on the panel, whatever an LLM made up) is "a note" or "a critic", never the internal id."""
    out = []
    for s in sources:
        if s in notes:
            text = notes[s]
            out.append(f"your note “{text if len(text) <= 80 else text[:77] + '…'}”")
        elif s in personas:
            out.append(personas[s])
        else:
            out.append("a note" if NOTE_ID.fullmatch(s) else "a critic")
    return list(dict.fromkeys(out))


def sound_diff(e) -> list[tuple[str, str]]:
    """A sound edit's old vs new as word runs: the line as script, the voice or the level in words."""
    from storage.edits import db_words, describe_voice, voice_after
    from storage.schema import Line, lines_from_script, script

    if e.op == "set_line":
        was = (lines_from_script(e.old) or [Line(line="-")])[0] if e.old else Line(line="-")
        now = was.model_copy(
            update={"line": e.new or was.line, "delivery": e.delivery if e.delivery is not None else was.delivery}
        )
        return diff_segments(e.old, script([now]))
    if e.op == "add_line":
        return [("+", script([Line(character=e.character, line=e.new, delivery=e.delivery)]))]
    if e.op == "remove_line":
        return [("-", e.old or f"line {e.line}")]
    if e.op == "set_voice":
        return diff_segments(describe_voice(e.old) if e.old else "", describe_voice(voice_after(e, None)))
    if e.op == "set_level":
        return ([("-", db_words(e.old))] if e.old is not None else []) + [("+", db_words(e.new))]
    return diff_segments(e.old, e.new or "(no music)")  # set_music


def in_words(text: str, personas: dict[str, str]) -> str:
    """An agent's sentence with persona ids as the personas' names ("only teen_scroller raised it" -> "only Maya,
    …"), and any other internal id as what it is."""
    if personas:
        known = re.compile(r"\b(" + "|".join(map(re.escape, sorted(personas, key=len, reverse=True))) + r")\b")
        text = known.sub(lambda m: personas[m.group(1)], text)
    return re.sub(rf"\b{NOTE_ID.pattern}\b", "a note", text)


def review_json(
    record, notes: dict[str, str], personas: dict[str, str], shot_thumbs: dict[str, str], board=None
) -> str:
    """A ProposalRecord as the review's JSON: each edit with its diff, sources by name and the decision. `board`:
    the version it was made on (scene numbers and titles for sound edits)."""
    from storage.schema import SOUND_OPS

    edits = []
    for n, e in enumerate(record.proposal.edits, 1):
        old, new = getattr(e, "old", None), getattr(e, "new", None)
        new = f"{new:g}" if isinstance(new, float) else new  # a level, edited as text
        diff = (
            sound_diff(e)
            if e.op in SOUND_OPS
            else diff_segments(old, new)
            if e.op in ("set", "set_character", "set_story")
            else [("+" if e.op == "add_shot" else "=", new or "")]
            if e.op != "remove_shot"
            else [("-", e.shot_id)]
        )
        edits.append(
            {
                "n": n,
                "op": e.op,
                "target": target(e, board),
                "thumb": shot_thumbs.get(getattr(e, "shot_id", None) or "", ""),
                "diff": diff,
                "new": new,
                "text": None,
                "accept": record.proposal.is_ticked(n),  # the creator's requests; critics' edits are unticked
                "flag": next((in_words(f.why, personas) for f in record.proposal.flags if f.edit == n), ""),
                "editable": new is not None and e.op not in ("move_shot",),
                "rationale": in_words(e.rationale, personas),
                "sources": source_names(e.sources, notes, personas),
            }
        )
    return json.dumps(
        {
            "id": record.id,
            "version": record.version,
            "summary": in_words(record.proposal.summary, personas),
            "accepted_as": record.accepted_as,
            "edits": edits,
            "answers": [
                {"request": a.request, "status": a.status, "answer": in_words(a.answer, personas), "edits": a.edits}
                for a in record.proposal.answers
            ],
            "not_changed": [
                {"what": in_words(u.what, personas), "why": in_words(u.why, personas)}
                for u in record.proposal.not_changed
            ],
        }
    )


def decisions(value: str) -> tuple[str, list[int], dict[int, str]]:
    """(proposal id, accepted edit numbers, edited new values) from the review's JSON."""
    from storage.parsing import parse_json

    data = parse_json(value or "null", "the review") or {}  # any client can send it: a ParseError is one line
    if not isinstance(data, dict) or not data.get("id"):
        raise ValueError("no proposal to commit: ask the refiner first")
    only, texts = [], {}
    for e in data.get("edits", []):
        if not e.get("accept"):
            continue
        only.append(int(e["n"]))
        text = (e.get("text") or "").strip()
        if e.get("editable") and text and text != (e.get("new") or "").strip():
            texts[int(e["n"])] = text
    return data["id"], only, texts
