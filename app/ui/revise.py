"""Revise screen: the refiner's proposal as a review. First each request of your notes and its answer (the edits
made, or why none); then one compact row per edit, your notes' edits first and ticked, the critics' after and
unticked unless they agree with a note, a warning on one that takes the idea's key thing out. One row per edit (the shot's thumbnail, a word diff,
why, and its sources by name: your notes' words, the personas' names; a sound edit in words, "Scene 3 “The storm”:
music −6 dB", "Keeper's voice: lower, slower"), accept or reject each or all, edit a new
value in place, and commit once: Commit is disabled while nothing is accepted and after committing, and the
server refuses a proposal already committed, so a second click never makes a second version. The refiner runs as
a job (its answer streams in: tokens so far), on the scenes the notes and critiques are about or on one scene.

The review is one client-side component (`revise.js`) over the proposal as JSON (`review_json`)."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path

import gradio as gr

from app.ui import scenes
from app.ui.common import Ctx, esc, follow, guard, md, need_project, progress_html, thumbs, ver

HERE = Path(__file__).parent
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


def word_diff(old: str | None, new: str | None) -> str:
    """Old vs new as HTML with <del>/<ins> per word (escaped)."""
    out = []
    for op, text in diff_segments(old, new):
        out.append({"-": f"<del>{esc(text)}</del>", "+": f"<ins>{esc(text)}</ins>"}.get(op, esc(text)))
    return " ".join(out)


def diff_segments(old: str | None, new: str | None) -> list[tuple[str, str]]:
    """Old vs new as word runs: ("=", kept), ("-", removed), ("+", added)."""
    a, b = (old or "").split(), (new or "").split()
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("=", " ".join(a[i1:i2])))
        if op in ("delete", "replace"):
            out.append(("-", " ".join(a[i1:i2])))
        if op in ("insert", "replace"):
            out.append(("+", " ".join(b[j1:j2])))
    return out


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


def build(ctx: Ctx) -> None:
    studio = ctx.studio
    jobs = ctx.jobs
    with gr.Row():
        refine_scene = scenes.picker("refine_scene", "Revise (whole film: the scenes your notes and the critics name)")
        refine_btn = gr.Button("Ask the refiner for a proposal", variant="primary", elem_id="refine_btn", scale=2)
    progress = gr.HTML(value="", elem_id="refine_progress", js_on_load=None)
    message = gr.Markdown(elem_id="revise_message")
    review = gr.HTML(
        value=None,
        html_template="<div class='review'></div>",
        elem_id="review",
        js_on_load=(HERE / "revise.js").read_text(),
        css_template=CSS,
    )

    def review_value(pid, record) -> str:
        v = studio.version(pid, record.version)
        notes = {n.id: n.text for n in studio.notes(pid, record.version)}
        personas = {pid_: p.name for pid_, p in studio.personas_of(v).items()}
        return review_json(
            record, notes, personas, thumbs(studio, studio.render_info(pid, record.version)), v.storyboard
        )

    def outcome(record) -> str:
        if record.accepted_as:
            return f"This proposal on v{record.version} was committed as v{record.accepted_as}."
        return (
            f"Proposal on v{record.version} ({md(record.mode)}), scope {md(record.scope.label())}: "
            f"{len(record.proposal.edits)} edit(s) to review."
        )

    def final(pid):
        def show(j):
            if j.state == "done":
                return review_value(pid, j.result), outcome(j.result), ""
            return gr.skip(), gr.skip(), progress_html(j)

        return show

    @guard
    def load_proposal(pid, v):
        """The version's latest proposal; while the refiner is writing one (a reloaded page), its progress."""
        from storage.repository import NotFound

        if not pid:
            yield None, "", ""
            return
        job = jobs.active(pid, "refine")
        if job is not None:
            yield from follow(jobs, job, lambda j: (gr.skip(), gr.skip(), progress_html(j)), final(pid))
            return
        try:
            record = studio.proposal(pid, ref=ver(v))
        except NotFound:
            yield None, "", ""
            return
        yield review_value(pid, record), outcome(record), ""

    @guard
    def ask_refiner(pid, v, scene_id=scenes.WHOLE):
        pid, _, job = scenes.start(
            jobs,
            studio,
            "refine",
            pid,
            v,
            scene_id,
            lambda n, scope, p, c: studio.refine(pid, n, scope, p, c),
            "refiner on",
        )
        yield from follow(jobs, job, lambda j: (gr.skip(), gr.skip(), progress_html(j)), final(pid))

    @guard
    def commit(pid, value):
        from app.errors import StudioError, one_line

        pid = need_project(pid)
        proposal_id, only, texts = decisions(value)
        try:
            if not only:
                raise StudioError("accept at least one edit (or leave the proposal as it is)")
            res = studio.accept(pid, proposal_id, only=only, edits=texts, once=True)
        except StudioError as e:  # one message; the review shows the proposal as it now stands
            data = json.loads(review_value(pid, studio.proposal(pid, proposal_id)))
            if data["accepted_as"] is None:
                data["edits"] = json.loads(value)["edits"]  # keep the creator's decisions for another try
            return gr.skip(), json.dumps(data), f"Nothing committed: {md(one_line(e))}"
        nv = res.version
        msg = (
            f"Committed v{nv.number} from v{nv.parent_number}: accepted edit(s) {', '.join(map(str, res.applied))}"
            + (f", {len(texts)} edited by hand" if texts else "")
            + "."
        )
        if res.branched:
            msg += f" **Branched:** v{nv.parent_number} already had a newer version, so this is a new branch."
        return nv.number, review_value(pid, studio.proposal(pid, proposal_id)), msg

    @guard
    def accept_api(pid: str, proposal_id: str, accept: list, edits: dict) -> dict:
        """API: accept edit numbers `accept` (1-based), with `edits` {number: new text}; returns the new version."""
        res = studio.accept(
            need_project(pid),
            proposal_id or None,
            only=[int(x) for x in accept] or None,
            edits={int(k): str(t) for k, t in (edits or {}).items()},
        )
        return res.model_dump(mode="json")

    @guard
    def refine_api(pid: str, version: float | None, scene: str = "") -> dict:
        """API: the refiner's proposal for a version (JSON), for one scene when `scene` names one."""
        pid = need_project(pid)
        number = studio.version(pid, ver(version)).number
        return studio.refine(pid, number, scenes.scope_of(studio, pid, number, scene)).model_dump(mode="json")

    ctx.tabs["revise"].select(
        load_proposal, [ctx.pid, ctx.version], [review, message, progress], api_visibility="private"
    ).then(
        guard(scenes.refresh(studio)),
        [ctx.pid, ctx.version, refine_scene],
        refine_scene,
        api_visibility="private",
        show_progress="hidden",
    )
    ev = refine_btn.click(
        ask_refiner,
        [ctx.pid, ctx.version, refine_scene],
        [review, message, progress],
        api_visibility="private",
        show_progress="hidden",
    )
    ctx.refresh_status(ev)
    review.commit(commit, [ctx.pid, review], [ctx.version, review, message], api_visibility="private")
    gr.api(accept_api, api_name="accept")
    gr.api(refine_api, api_name="refine")
