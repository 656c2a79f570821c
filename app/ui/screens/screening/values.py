"""The Screening room's values: the panel's score at a glance, each critique as a card (a shot link seeks the
player), earlier versions' notes and whether this version answers them, and the strip's server function (the film
with only some stems heard)."""

from __future__ import annotations

from app.ui import scenes
from app.ui.board_media import screening_label
from app.ui.common import esc, media_url, one_line
from app.ui.timeline import STEMS

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
