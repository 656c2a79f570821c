"""Revise screen: the refiner's proposal as a diff per edit; accept, reject or edit each; commit a new version."""

from __future__ import annotations

import difflib

import gradio as gr

from app.ui.common import Ctx, esc, guard, md, need_project, ver

ACCEPT, REJECT = "accept", "reject"


def word_diff(old: str | None, new: str | None) -> str:
    """Old vs new as HTML with <del>/<ins> per word."""
    a, b = (old or "").split(), (new or "").split()
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(esc(" ".join(a[i1:i2])))
        if op in ("delete", "replace"):
            out.append(f"<del>{esc(' '.join(a[i1:i2]))}</del>")
        if op in ("insert", "replace"):
            out.append(f"<ins>{esc(' '.join(b[j1:j2]))}</ins>")
    return " ".join(out)


def proposal_state(info: dict) -> dict:
    """A proposal as plain JSON for the session state."""
    p = info.proposal
    return {"id": info.id, "version": info.version, "mode": info.mode, "summary": p.summary,
            "accepted_as": info.accepted_as, "edits": [e.model_dump(mode="json") for e in p.edits],
            "not_changed": [u.model_dump(mode="json") for u in p.not_changed]}


def edit_html(n: int, e: dict) -> str:
    target = e.get("shot_id") or e.get("character") or e.get("field") or ""
    what = f"{e['op']} {target}" + (f" · {e['field']}" if e["op"] == "set" else "")
    body = word_diff(e.get("old"), e.get("new")) if e["op"] in ("set", "set_character", "set_story") else \
        esc(e.get("new") or "")
    return (f"<div class='edit' data-edit='{n}'><b>{n}. {esc(what)}</b>"
            f"<div class='old'><span>old:</span> {esc(e.get('old') or '—')}</div>"
            f"<div class='new'><span>new:</span> {esc(e.get('new') or '—')}</div>"
            f"<div class='diff'>{body}</div>"
            f"<div class='why'><i>{esc(e['rationale'])}</i> · sources: {esc(', '.join(e.get('sources') or []) or '—')}</div></div>")


def commit(studio, pid: str, state: dict, decisions: list[str], texts: list[str]):
    """Accepted edits (with in-place changes) become the next version. Returns (AcceptResult, message)."""
    only, edits = [], {}
    for n, (e, d, t) in enumerate(zip(state["edits"], decisions, texts), 1):
        if d != ACCEPT:
            continue
        only.append(n)
        if e.get("new") is not None and t is not None and t.strip() and t.strip() != (e["new"] or "").strip():
            edits[n] = t.strip()
    if not only:
        raise gr.Error("accept at least one edit (or leave the proposal as it is)")
    res = studio.accept(pid, state["id"], only=only, edits=edits)
    v = res.version
    msg = (f"Committed v{v.number} from v{v.parent_number}: accepted edit(s) {', '.join(map(str, res.applied))}"
           + (f", {len(edits)} edited by hand" if edits else "") + ".")
    if res.branched:
        msg += f" **Branched:** v{v.parent_number} already had a newer version, so this is a new branch."
    return res, msg


DIFF_CSS = """
del { background: #fdd; text-decoration: line-through; }
ins { background: #dfd; text-decoration: none; }
.old span, .new span { display: inline-block; width: 2.5em; color: #888; }
"""


def build(ctx: Ctx) -> None:
    studio = ctx.studio
    state = gr.State(None)
    with gr.Row():
        refine_btn = gr.Button("Ask the refiner for a proposal", variant="primary", elem_id="refine_btn")
    summary = gr.Markdown(elem_id="proposal_summary")
    message = gr.Markdown(elem_id="revise_message")

    @gr.render(inputs=[state, ctx.pid])
    def show(prop, pid):
        if not prop:
            gr.Markdown("_No proposal yet: add notes or run the critics, then ask the refiner._")
            return
        decisions, texts = [], []
        with gr.Column(elem_id="revise_edits"):
            for n, e in enumerate(prop["edits"], 1):
                with gr.Group():
                    gr.HTML(edit_html(n, e), elem_id=f"edit_{n}_diff", js_on_load=None, css_template=DIFF_CSS)
                    with gr.Row():
                        decisions.append(gr.Radio([ACCEPT, REJECT], value=ACCEPT, show_label=False, interactive=True,
                                                  elem_id=f"edit_{n}_decision", scale=1, key=f"d{prop['id']}{n}"))
                        texts.append(gr.Textbox(value=e.get("new") or "", label="new value (edit in place)",
                                                interactive=e.get("new") is not None and e["op"] != "move_shot",
                                                elem_id=f"edit_{n}_new", scale=4, key=f"t{prop['id']}{n}"))
            for u in prop["not_changed"]:
                gr.Markdown(f"- not changed: {md(u['what'])} — {md(u['why'])}")
        commit_btn = gr.Button("Commit accepted edits (new version)", variant="primary", elem_id="commit_btn")
        k = len(decisions)

        @guard
        def do_commit(pid_value, *values):
            res, msg = commit(studio, need_project(pid_value), prop, list(values[:k]), list(values[k:]))
            return res.version.number, msg
        commit_btn.click(do_commit, [ctx.pid, *decisions, *texts], [ctx.version, message],
                         api_visibility="private")

    def summary_text(prop) -> str:
        if not prop:
            return ""
        accepted = f" · accepted as v{prop['accepted_as']}" if prop["accepted_as"] else ""
        return (f"**Proposal {prop['id']}** on v{prop['version']} ({md(prop['mode'])}){accepted}: {md(prop['summary'])} "
                f"— {len(prop['edits'])} edit(s)")

    @guard
    def load_proposal(pid, v):
        from storage.repository import NotFound

        if not pid:
            return None, "", ""
        try:
            prop = proposal_state(studio.proposal(pid, ref=ver(v)))
        except NotFound:
            return None, "", ""
        return prop, summary_text(prop), ""

    @guard
    def ask_refiner(pid, v):
        prop = proposal_state(studio.refine(need_project(pid), ver(v)))
        return prop, summary_text(prop), ""

    @guard
    def accept_api(pid: str, proposal_id: str, accept: list, edits: dict) -> dict:
        """API: accept edit numbers `accept` (1-based), with `edits` {number: new text}; returns the new version."""
        res = studio.accept(need_project(pid), proposal_id or None, only=[int(x) for x in accept] or None,
                            edits={int(k): str(t) for k, t in (edits or {}).items()})
        return res.model_dump(mode="json")

    outs = [state, summary, message]
    ctx.tabs["revise"].select(load_proposal, [ctx.pid, ctx.version], outs, api_visibility="private")
    ev = refine_btn.click(ask_refiner, [ctx.pid, ctx.version], outs, api_visibility="private")
    ctx.refresh_status(ev)
    gr.api(accept_api, api_name="accept")

    @guard
    def refine_api(pid: str, version: float | None) -> dict:
        """API: the refiner's proposal for a version (JSON)."""
        return studio.refine(need_project(pid), ver(version)).model_dump(mode="json")
    gr.api(refine_api, api_name="refine")
