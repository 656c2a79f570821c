"""Screening room: the film with its timeline strip; the panel's score at a glance and per persona; each critique
in one line (open it for the rest: how it watched, its scores, shot notes and issues; a shot link seeks the
player); your notes on this version (on the film, a shot or a scene), editable and deletable; earlier versions'
notes with whether this version answers them. The critics run as a job, on the film or on one scene."""

from __future__ import annotations

import gradio as gr

from app.ui import scenes
from app.ui.board_media import screening_label
from app.ui.common import Ctx, ask_to_stop, esc, follow, guard, media_url, need_project, one_line, progress_html, ver
from app.ui.player import cc_toggle, film_video
from app.ui.timeline import STEMS, drafts_note, shot_starts, strip, strip_html

WHOLE_FILM = "(whole film)"
SCENE = "scene:"  # the note picker's value for a scene: "scene:sc03"

# Event delegation: any [data-t] inside the critiques seeks the screening room's player to that time.
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
.glance { display: flex; gap: 14px; align-items: center; flex-wrap: wrap; margin-bottom: 8px; }
.glance .big { font-size: 2.2em; font-weight: 700; line-height: 1; }
.glance .big small { font-size: 0.4em; font-weight: 400; color: var(--body-text-color-subdued); }
.glance .chip { border: 1px solid var(--border-color-primary); border-radius: 12px; padding: 2px 9px; font-size: 0.85em; }
.glance .chip b { margin-left: 4px; }
.glance .chip.stops { border-style: dashed; }
details.critic-card { border: 1px solid var(--border-color-primary); border-radius: 6px; padding: 5px 9px; margin-bottom: 5px; }
details.critic-card summary { cursor: pointer; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
details.critic-card[open] summary { white-space: normal; }
details.critic-card .score { font-weight: 700; margin: 0 6px; }
.critic-card .dims { display: flex; flex-wrap: wrap; gap: 2px 12px; font-size: 0.85em; margin: 4px 0; }
.critic-card a.seek { cursor: pointer; font-family: var(--font-mono); }
.critic-card .coverage { font-size: 0.85em; color: var(--body-text-color-subdued); }
.critic-card ul.unseen { font-size: 0.85em; color: var(--error-text-color, #b91c1c); }
.glance .scope { font-size: 0.9em; }
.earlier li { margin-bottom: 3px; }
.earlier .yes { color: var(--color-accent); }
.earlier .no { color: var(--body-text-color-subdued); }
"""


def _tc(t: float) -> str:
    return f"{int(t // 60)}:{t % 60:04.1f}"


def glance_html(critiques: list) -> str:
    """The panel's mean score, how many keep watching, and each persona's score."""
    if not critiques:
        return ""
    mean = sum(c.critique.overall for c in critiques) / len(critiques)
    keep = sum(c.critique.keep_watching for c in critiques)
    scope = critiques[0].scope
    what = "" if scope.whole else f"<div class='scope'>watched {esc(scope.label())}</div>"
    text_only = any(c.coverage is not None and c.coverage.input == "text" for c in critiques)
    what += (
        (
            "<div class='scope text-only'>⚠ text only: the critic model takes no images; critics read the storyboard "
            "and a measured description of each shot's frames</div>"
        )
        if text_only
        else ""
    )
    chips = "".join(
        f"<span class='chip{'' if c.critique.keep_watching else ' stops'}' data-persona='{esc(c.persona_id)}'"
        f" title='{'keeps' if c.critique.keep_watching else 'stops'} watching'>{esc(c.persona_name)}"
        f"<b>{c.critique.overall:.1f}</b></span>"
        for c in critiques
    )
    return (
        f"<div class='glance' id='panel_glance'><div class='big' data-score='{mean:.1f}'>{mean:.1f}"
        f"<small>/10 panel</small></div><div>{keep} of {len(critiques)} keep watching</div>{what}{chips}</div>"
    )


def cards_html(critiques: list, starts: dict[str, float]) -> str:
    """One collapsed line per persona (name, score, summary); open it for scores, shot notes and issues."""
    if not critiques:
        return "<p class='no-critiques'>No critiques yet: render the film, then press <b>Run critics</b>.</p>"
    out = [screening_label(critiques), glance_html(critiques)]
    for item in critiques:
        c = item.critique
        keep = "keeps watching" if c.keep_watching else "stops watching"
        dims = "".join(f"<span>{esc(d.replace('_', ' '))}: <b>{s:.1f}</b></span>" for d, s in c.scores.scored().items())
        notes = "".join(
            f"<li><a class='seek' data-t='{starts.get(n.shot_id, 0.0):.2f}' data-shot='{esc(n.shot_id)}' "
            f"title='play from this shot'>{esc(n.shot_id)} @ {_tc(starts.get(n.shot_id, 0.0))}</a> {esc(n.note)}</li>"
            for n in c.shot_notes
        )
        issues = "".join(
            f"<li>[{i.urgency}] {esc(i.summary)}"
            + (f" → <i>{esc(i.suggestion)}</i>" if i.suggestion else "")
            + "".join(
                f" <a class='seek' data-t='{starts.get(s, 0.0):.2f}' data-shot='{esc(s)}'>{esc(s)}</a>"
                for s in i.shot_ids
                if s in starts
            )
            + "</li>"
            for i in c.top_issues
        )
        out.append(
            f"<details class='critic-card' data-persona='{esc(item.persona_id)}'>"
            f"<summary><b>{esc(item.persona_name)}</b><span class='score'>{c.overall:.1f}</span>{esc(c.summary)}</summary>"
            f"<div><i>{keep}: {esc(c.keep_watching_reason)}</i></div>{scenes.coverage_html(item)}"
            f"<div class='dims'>{dims}</div>"
            + (f"<b>Shot notes</b><ul class='shot-notes'>{notes}</ul>" if notes else "")
            + (f"<b>Top issues</b><ol class='issues'>{issues}</ol>" if issues else "")
            + "</details>"
        )
    return "\n".join(out)


def earlier_html(items) -> str:
    if not items:
        return ""
    rows = "".join(
        f"<li data-note='{esc(e.note.id)}'><span class='{'yes' if e.addressed else 'no'}'>"
        f"{'✓ addressed: ' if e.addressed else ''}{esc(e.how)}"
        f"</span> · v{e.version} · "
        f"{esc(e.note.shot_id or 'whole film')}: {esc(e.note.text)}</li>"
        for e in items
    )
    return f"<b>Notes on earlier versions</b><ul class='earlier'>{rows}</ul>"


def hearing(studio):
    """The strip's server function: `{"project", "version", "render", "stems"}` (a lane's checkbox or solo) -> the
    URL of the film with only those stems heard (the film itself for all three) and a line saying what plays, or
    `{"error": one line}`."""
    from app.errors import user_errors
    from storage.repository import NotFound

    def hear(data):
        data = data[0] if isinstance(data, list) and len(data) == 1 else data
        try:
            if not isinstance(data, dict):
                raise ValueError("the strip sent a request it cannot make: reload the page")
            stems = data.get("stems")
            if not isinstance(stems, list) or not stems or not set(stems) <= set(STEMS):
                raise ValueError(f"choose stems among {', '.join(STEMS)}")
            info = studio.render_info(str(data.get("project") or ""), int(data.get("version") or 0))
            if info is None or info.id != data.get("render"):
                raise ValueError("this film is not the version's latest render any more: reload the page")
            chosen = [n for n in STEMS if n in stems]
            if len(chosen) == len(STEMS):
                return {"url": media_url(studio.film_path(info)), "note": "Hearing the film's mix."}
            path = studio.stems_film(info, chosen)
            muted = [n for n in STEMS if n not in chosen]
            return {"url": media_url(path), "note": f"Hearing {' + '.join(chosen)} only ({', '.join(muted)} muted)."}
        except (ValueError, TypeError, RuntimeError, NotFound, *user_errors()) as e:
            return {"error": one_line(e)}

    return hear


def build(ctx: Ctx) -> None:
    studio, jobs = ctx.studio, ctx.jobs
    diversity_cache: dict[tuple, str] = {}
    notes_state = gr.State([])
    with gr.Row():
        with gr.Column(scale=3):
            film = gr.Video(label="Film", elem_id="screening_film", interactive=False, elem_classes=["film-player"])
            cc_toggle("screening_film")
            film_strip = strip("screening_strip", hearing(studio))
            gr.Markdown("### Your notes (the refiner follows them)")
            note_text = gr.Textbox(label="Note", lines=2, elem_id="note_text", placeholder="Make the storm scarier…")
            with gr.Row():
                note_shot = gr.Dropdown(
                    label="About", choices=[WHOLE_FILM], value=WHOLE_FILM, elem_id="note_shot", allow_custom_value=True
                )
                add_note_btn = gr.Button("Add note", elem_id="add_note_btn")

            @gr.render(inputs=[notes_state])
            def show_notes(notes):
                if not notes:
                    gr.Markdown("_No notes on this version yet._", elem_id="notes_list")
                    return
                with gr.Column(elem_id="notes_list"):
                    for i, n in enumerate(notes, 1):
                        with gr.Row(equal_height=True):
                            text = gr.Textbox(
                                value=n["text"],
                                label=n["about"],
                                lines=1,
                                scale=6,
                                interactive=True,
                                elem_id=f"note_{i}_text",
                                key=f"nt{n['id']}",
                            )
                            save = gr.Button(
                                "Save", scale=1, min_width=60, elem_id=f"note_{i}_save", key=f"ns{n['id']}"
                            )
                            delete = gr.Button(
                                "Delete", scale=1, min_width=60, elem_id=f"note_{i}_delete", key=f"nd{n['id']}"
                            )
                        save.click(
                            guard(lambda pid, v, t, nid=n["id"]: edit_note(pid, v, nid, t)),
                            [ctx.pid, ctx.version, text],
                            [notes_state, message],
                            api_visibility="private",
                        )
                        delete.click(
                            guard(lambda pid, v, nid=n["id"]: delete_note(pid, v, nid)),
                            [ctx.pid, ctx.version],
                            [notes_state, message],
                            api_visibility="private",
                        )

            earlier = gr.HTML(elem_id="earlier_notes", js_on_load=None)
            message = gr.Markdown(elem_id="notes_message")
        with gr.Column(scale=3):
            with gr.Row():
                critique_scene = scenes.picker("critique_scene", "Watch")
                critique_btn = gr.Button("Run critics", variant="primary", elem_id="critique_btn", scale=3)
                stop_btn = gr.Button("Stop", elem_id="critique_stop_btn", scale=1)
            progress = gr.HTML(value="", elem_id="critique_progress", js_on_load=None)
            diversity = gr.Markdown(elem_id="diversity")
            cards = gr.HTML(value="", elem_id="critic_cards", js_on_load=SEEK_JS, css_template=CARD_CSS)

    def diversity_text(pid, number, crits) -> str:
        if len(crits) < 2:
            return ""
        key = (pid, number, tuple(c.id for c in crits))
        if key not in diversity_cache:
            rep = studio.diversity(pid, number)
            if rep is None:
                text = ""
            elif rep.collapsed:
                text = (
                    f"⚠ **The panel agrees too much** (similarity {rep.mean_pairwise_cosine:.2f} ≥ "
                    f"{rep.threshold:.2f}): add different personas in Settings for a wider view."
                )
            else:
                text = f"Panel diversity: similarity {rep.mean_pairwise_cosine:.2f} (below {rep.threshold:.2f}: distinct voices)."
            diversity_cache[key] = text
        return diversity_cache[key]

    def note_rows(pid, v) -> list[dict]:
        return [
            {
                "id": n.id,
                "text": n.text,
                "about": f"about {n.about()}" if n.shot_id or not n.scope.whole else "whole film",
            }
            for n in studio.notes(pid, ver(v))
        ]

    def cards_view(pid, v) -> str:
        version = studio.version(pid, ver(v))
        return cards_html(
            studio.critiques(pid, version.number),
            shot_starts(version.storyboard, studio.render_info(pid, version.number)),
        )

    @guard
    def load(pid, v):
        if not pid:
            yield (
                "",
                film_video(studio, "", None),
                "",
                "",
                "",
                "",
                [],
                gr.Dropdown(choices=[WHOLE_FILM], value=WHOLE_FILM),
                "",
            )
            return
        version = studio.version(pid, ver(v))
        info = studio.render_info(pid, version.number)
        board = version.storyboard
        choices = (
            [WHOLE_FILM]
            + [(f"scene {sc.scene_id} · {sc.title}", SCENE + sc.scene_id) for sc in board.scenes]
            + [s.shot_id for s in board.shots()]
        )
        starts = shot_starts(board, info)  # the film's times, as the strip's: a title card shifts every shot
        html = cards_html(studio.critiques(pid, version.number), starts)
        job = jobs.active(pid, "critique")
        # not rendered yet: the last rendered ancestor's film stays on screen, labelled, until this version's exists
        last = studio.last_film(pid, version.number) if info is None else None
        shown, shown_board = (
            (last.render, studio.version(pid, last.render.version).storyboard) if last else (info, board)
        )
        yield (
            progress_html(job),
            film_video(
                studio,
                pid,
                shown,
                last.render.version if last else version.number,
                label=(f"Film — {last.describe()}: render to watch v{version.number}" if last else "Film")
                + (f" — {drafts_note(shown)}" if shown is not None and drafts_note(shown) else ""),
            ),
            strip_html(studio, shown_board, shown, "#screening_film video", controls=True, project=pid),
            html,
            gr.skip(),
            earlier_html(studio.earlier_notes(pid, version.number)),
            note_rows(pid, v),
            gr.Dropdown(choices=choices, value=WHOLE_FILM),
            "",
        )
        if job is not None:
            yield from follow(
                jobs,
                job,
                lambda j: (progress_html(j) if j.running else gr.skip(), *[gr.skip()] * 8),
                lambda j: (progress_html(j), gr.skip(), gr.skip(), cards_view(pid, v), *[gr.skip()] * 5),
            )

    @guard
    def critique(pid, v, scene_id=scenes.WHOLE):
        from agents.diversity import warm

        warm()  # the panel's diversity needs the sentence model: it loads while the critics watch
        pid, _, job = scenes.start(
            jobs,
            studio,
            "critique",
            pid,
            v,
            scene_id,
            lambda n, scope, p, c: studio.critique(pid, n, p, c, scope),
            "critics watching",
        )
        # "done" shows with the cards, never before them; the diversity line follows (load_diversity, chained)
        yield from follow(
            jobs,
            job,
            lambda j: (progress_html(j) if j.running else gr.skip(), gr.skip(), gr.skip()),
            lambda j: (progress_html(j), cards_view(pid, v), gr.skip()),
        )

    @guard
    def stop(pid):
        job = jobs.active(pid or "", "critique")
        return ask_to_stop(jobs, job)

    @guard
    def add_note(pid, v, text, shot):
        pid = need_project(pid)
        if not (text or "").strip():
            raise gr.Error("write the note first")
        if shot and shot.startswith(SCENE):
            studio.add_note(pid, text, None, ver(v), scope=studio.scope(pid, ver(v), scene=shot[len(SCENE) :]))
        else:
            studio.add_note(pid, text, None if shot in (None, "", WHOLE_FILM) else shot, ver(v))
        return "", note_rows(pid, v), "Note added."

    def edit_note(pid, v, note_id, text):
        pid = need_project(pid)
        if not (text or "").strip():
            raise gr.Error("a note cannot be empty: delete it instead")
        studio.edit_note(pid, note_id, text, ver(v))
        return note_rows(pid, v), "Note saved."

    def delete_note(pid, v, note_id):
        pid = need_project(pid)
        studio.delete_note(pid, note_id, ver(v))
        return note_rows(pid, v), "Note deleted."

    outs = [progress, film, film_strip, cards, diversity, earlier, notes_state, note_shot, message]

    @guard
    def load_diversity(pid, v):
        """Panel diversity loads sentence embeddings: it follows the screen instead of holding it up."""
        if not pid:
            return ""
        number = studio.version(pid, ver(v)).number
        return diversity_text(pid, number, studio.critiques(pid, number))

    ctx.tabs["screening"].select(load, [ctx.pid, ctx.version], outs, api_name="screening").then(
        load_diversity, [ctx.pid, ctx.version], diversity, api_visibility="private", show_progress="hidden"
    ).then(
        guard(scenes.refresh(studio)),
        [ctx.pid, ctx.version, critique_scene],
        critique_scene,
        api_visibility="private",
        show_progress="hidden",
    )
    ev = critique_btn.click(
        critique,
        [ctx.pid, ctx.version, critique_scene],
        [progress, cards, diversity],
        api_name="critique",
        show_progress="hidden",
    ).then(load_diversity, [ctx.pid, ctx.version], diversity, api_visibility="private", show_progress="hidden")
    ctx.refresh_status(ev)
    stop_btn.click(stop, ctx.pid, progress, api_visibility="private", show_progress="hidden")
    add_note_btn.click(
        add_note, [ctx.pid, ctx.version, note_text, note_shot], [note_text, notes_state, message], api_name="add_note"
    )
