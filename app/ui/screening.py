"""Screening room: the film beside one card per critic; clicking a shot note seeks the player to that shot."""

from __future__ import annotations

import gradio as gr

from app.ui.common import Ctx, esc, guard, md, need_project, ver

WHOLE_FILM = "(whole film)"

# Event delegation: any [data-t] inside the cards seeks the screening room's player to that time.
SEEK_JS = """
element.addEventListener('click', (ev) => {
  const a = ev.target.closest('[data-t]');
  if (!a) return;
  ev.preventDefault();
  const v = document.querySelector('#screening_film video');
  if (!v) return;
  const t = parseFloat(a.dataset.t);
  const seek = () => { v.currentTime = t; };
  if (v.readyState >= 1) seek(); else v.addEventListener('loadedmetadata', seek, { once: true });
  v.dataset.seekedTo = String(t);
});
"""

CARD_CSS = """
.critic-card { border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 10px 12px; margin-bottom: 10px; }
.critic-card h4 { margin: 0 0 4px 0; }
.critic-card .scores { display: flex; flex-wrap: wrap; gap: 4px 12px; font-size: 0.85em; margin: 4px 0; }
.critic-card a.seek { cursor: pointer; font-family: monospace; }
.critic-card .keep { color: var(--color-accent); }
"""


def _tc(t: float) -> str:
    return f"{int(t // 60)}:{t % 60:04.1f}"


def cards_html(critiques: list[dict], starts: dict[str, float]) -> str:
    """One card per persona: overall, scores, per-shot notes (links that seek), top issues."""
    if not critiques:
        return "<p class='no-critiques'>No critiques yet: render the film, then press <b>Run critics</b>.</p>"
    out = []
    for item in critiques:
        c = item.critique
        keep = "keeps watching" if c.keep_watching else "stops watching"
        scores = "".join(f"<span>{esc(d.replace('_', ' '))}: <b>{s:.1f}</b></span>" for d, s in c.scores.model_dump().items())
        notes = "".join(
            f"<li><a class='seek' data-t='{starts.get(n.shot_id, 0.0):.2f}' data-shot='{esc(n.shot_id)}' "
            f"title='play from this shot'>{esc(n.shot_id)} @ {_tc(starts.get(n.shot_id, 0.0))}</a> {esc(n.note)}</li>"
            for n in c.shot_notes)
        issues = "".join(
            f"<li>[{i.urgency}] {esc(i.summary)}"
            + (f" → <i>{esc(i.suggestion)}</i>" if i.suggestion else "")
            + "".join(f" <a class='seek' data-t='{starts.get(s, 0.0):.2f}' data-shot='{esc(s)}'>{esc(s)}</a>"
                      for s in i.shot_ids if s in starts)
            + "</li>" for i in c.top_issues)
        out.append(
            f"<div class='critic-card' data-persona='{esc(item.persona_id)}'>"
            f"<h4>{esc(item.persona_name)} — {c.overall:.1f}/10 — <span class='keep'>{keep}</span></h4>"
            f"<div>{esc(c.summary)}</div><div class='scores'>{scores}</div>"
            f"<div><i>{esc(c.keep_watching_reason)}</i></div>"
            + (f"<b>Shot notes</b><ul class='shot-notes'>{notes}</ul>" if notes else "")
            + (f"<b>Top issues</b><ol class='issues'>{issues}</ol>" if issues else "")
            + "</div>")
    return "\n".join(out)


def notes_md(notes) -> str:
    if not notes:
        return "_No notes on this version yet._"
    return "\n".join(f"- {'**' + md(n.shot_id) + '**: ' if n.shot_id else '**whole film**: '}{md(n.text)}"
                     for n in notes)


def build(ctx: Ctx) -> None:
    studio = ctx.studio
    diversity_cache: dict[tuple, str] = {}
    with gr.Row():
        with gr.Column(scale=3):
            film = gr.Video(label="Film", elem_id="screening_film", interactive=False)
            gr.Markdown("### Your notes (the refiner follows them)")
            note_text = gr.Textbox(label="Note", lines=2, elem_id="note_text",
                                   placeholder="Make the storm scarier…")
            with gr.Row():
                note_shot = gr.Dropdown(label="About", choices=[WHOLE_FILM], value=WHOLE_FILM, elem_id="note_shot",
                                        allow_custom_value=True)
                add_note_btn = gr.Button("Add note", elem_id="add_note_btn")
            notes_list = gr.Markdown(elem_id="notes_list")
        with gr.Column(scale=3):
            critique_btn = gr.Button("Run critics", variant="primary", elem_id="critique_btn")
            diversity = gr.Markdown(elem_id="diversity")
            cards = gr.HTML(value="", elem_id="critic_cards", js_on_load=SEEK_JS, css_template=CARD_CSS,
                            max_height=900)

    def diversity_text(pid, number, crits) -> str:
        if len(crits) < 2:
            return ""
        key = (pid, number, tuple(c.id for c in crits))
        if key not in diversity_cache:
            rep = studio.diversity(pid, number)
            if rep is None:
                text = ""
            elif rep.collapsed:
                text = (f"⚠ **The panel agrees too much** (similarity {rep.mean_pairwise_cosine:.2f} ≥ "
                        f"{rep.threshold:.2f}): add different personas in Settings for a wider view.")
            else:
                text = f"Panel diversity: similarity {rep.mean_pairwise_cosine:.2f} (below {rep.threshold:.2f}: distinct voices)."
            diversity_cache[key] = text
        return diversity_cache[key]

    def screen(pid, v):
        version = studio.version(pid, ver(v))
        starts = {s.shot_id: start for s, start, _ in version.storyboard.timeline()}
        crits = studio.critiques(pid, version.number)
        return crits, starts, version

    @guard
    def load(pid, v):
        if not pid:
            return None, "", "", "", gr.Dropdown(choices=[WHOLE_FILM], value=WHOLE_FILM)
        crits, starts, version = screen(pid, v)
        info = studio.render_info(pid, version.number)
        choices = [WHOLE_FILM] + list(starts)
        return (str(studio.film_path(info)) if info else None, cards_html(crits, starts), diversity_text(pid, version.number, crits),
                notes_md(studio.notes(pid, version.number)), gr.Dropdown(choices=choices, value=WHOLE_FILM))

    @guard
    def critique(pid, v, progress=gr.Progress()):
        pid = need_project(pid)
        progress(0, desc="critics watching")

        def on(e):
            if e.get("stage") == "critique":
                progress((e["done"], e["total"]), desc=f"{e['persona']} finished", unit="critics")
        studio.critique(pid, ver(v), progress=on)
        crits, starts, version = screen(pid, v)
        return cards_html(crits, starts), diversity_text(pid, version.number, crits)

    @guard
    def add_note(pid, v, text, shot):
        pid = need_project(pid)
        if not (text or "").strip():
            raise gr.Error("write the note first")
        studio.add_note(pid, text, None if shot in (None, "", WHOLE_FILM) else shot, ver(v))
        return "", notes_md(studio.notes(pid, ver(v)))

    ctx.tabs["screening"].select(load, [ctx.pid, ctx.version], [film, cards, diversity, notes_list, note_shot],
                                 api_name="screening")
    ev = critique_btn.click(critique, [ctx.pid, ctx.version], [cards, diversity], api_name="critique",
                            show_progress_on=[diversity])
    ctx.refresh_status(ev)
    add_note_btn.click(add_note, [ctx.pid, ctx.version, note_text, note_shot], [note_text, notes_list],
                       api_name="add_note")
