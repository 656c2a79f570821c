"""The timeline strip under a player: the film's shots as thumbnails sized by their length; a click seeks the
player to that shot, and the shot playing is highlighted. Used by the Render tab and the Screening room."""

from __future__ import annotations

import gradio as gr

from app.ui.common import esc, thumbs

# Event delegation on the strip; the player is found by the strip's data-video selector each time (Gradio
# replaces the <video> element when the film changes).
STRIP_JS = """
const player = () => document.querySelector(element.querySelector('.strip')?.dataset.video || '#none');
element.addEventListener('click', (ev) => {
  const cell = ev.target.closest('[data-t]');
  const v = player();
  if (!cell || !v) return;
  const t = parseFloat(cell.dataset.t) + 0.01;
  const seek = () => { v.currentTime = t; };
  if (v.readyState >= 1) seek(); else v.addEventListener('loadedmetadata', seek, { once: true });
  element.querySelector('.strip').dataset.seekedTo = cell.dataset.shot;
  mark(t);
});
function mark(t) {
  element.querySelectorAll('[data-t]').forEach((c) => {
    const on = t >= parseFloat(c.dataset.t) && t < parseFloat(c.dataset.end);
    c.classList.toggle('playing', on);
  });
}
document.addEventListener('timeupdate', (ev) => {
  if (ev.target === player()) mark(ev.target.currentTime);
}, true);
"""

STRIP_CSS = """
.strip { display: flex; gap: 2px; width: 100%; height: 64px; margin-top: 4px; }
.strip .cell { position: relative; min-width: 18px; height: 100%; cursor: pointer; overflow: hidden; border-radius: 3px;
  background: #222 center / cover no-repeat; border: 2px solid transparent; box-sizing: border-box; }
.strip .cell.playing { border-color: var(--color-accent); }
.strip .cell span { position: absolute; left: 2px; bottom: 1px; font-size: 10px; color: #fff;
  text-shadow: 0 0 3px #000; white-space: nowrap; }
.strip .title-card { background: #000; color: #ddd; font-size: 10px; display: flex; align-items: center; justify-content: center; }
"""


def film_times(board, render) -> tuple[float, list[float], list[float]]:
    """(the title card's seconds, each clip's length, each clip's start) in the film `render` assembled for
    `board`: the times the player seeks to, shifted by a title card and crossfades like the assembly's."""
    from generation.assembly import timeline

    opts = board.film
    lengths = [r.num_frames / r.fps for r in render.shots]
    title = opts.title_seconds if opts.title_card else 0.0
    return title, lengths, timeline(lengths, title_seconds=title, crossfade=opts.crossfade)


def shot_starts(board, render) -> dict[str, float]:
    """shot id -> where the shot starts in the film the page plays (`render`); with no film, the storyboard's
    nominal times."""
    if render is None:
        return {s.shot_id: start for s, start, _ in board.timeline()}
    return dict(zip((r.shot_id for r in render.shots), film_times(board, render)[2]))


def strip_html(studio, board, render, video: str) -> str:
    """The strip for `render` of `board` (cells in film time, so a title card and crossfades line up)."""
    if render is None:
        return ""
    title, lengths, starts = film_times(board, render)
    ends = [s + n for s, n in zip(starts, lengths)]
    urls = thumbs(studio, render)
    cells = []
    if title:
        cells.append(
            f"<div class='cell title-card' data-t='0' data-end='{starts[0]:.3f}' data-shot='title' "
            f"style='flex: {title:.3f}'>title</div>"
        )
    for r, start, end, n in zip(render.shots, starts, ends, lengths):
        cells.append(
            f"<div class='cell' data-t='{start:.3f}' data-end='{end:.3f}' data-shot='{esc(r.shot_id)}' "
            f"title='{esc(r.shot_id)} · {n:.1f}s' style='flex: {n:.3f}; background-image: "
            f'url("{esc(urls[r.shot_id])}")\'><span>{esc(r.shot_id)}</span></div>'
        )
    return f"<div class='strip' data-video='{esc(video)}'>{''.join(cells)}</div>"


def strip(elem_id: str) -> gr.HTML:
    return gr.HTML(value="", elem_id=elem_id, js_on_load=STRIP_JS, css_template=STRIP_CSS)
