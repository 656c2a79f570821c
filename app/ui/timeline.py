"""The timeline strip under a player: the film's shots as thumbnails sized by their length; a click seeks the
player to that shot, and the shot playing is highlighted. Under the shots, the sound's three lanes (dialogue, music,
effects) drawn from the render's stems; in the Screening room each lane can be heard alone or muted. Used by the
Render tab and the Screening room.

A lane is the stem's peaks (the largest |sample| of each of at most LANE_COLUMNS columns, read a column at a time,
kept by the stem's sha256), drawn as one SVG polygon on a dB scale from FLOOR_DB to 0 dBFS so ducked music shows; a
film without sound shows one line of text (NO_SOUND) instead. Solo and mute are a file the server mixes (`Studio.stems_film`, over
generation/audio/stems.py), played like the film."""

from __future__ import annotations

import functools
import wave
from pathlib import Path

import gradio as gr
import numpy as np

from app.ui.common import esc, thumbs

STEMS = ("dialogue", "music", "effects")
LANE_COLUMNS = 600  # columns per lane whatever the film's length: a 10-minute film draws 600 (a column is 1 s)
FLOOR_DB = -60.0  # the lanes' scale: peaks in dBFS from here (the bottom) to 0 (the full height)
NO_SOUND = "No sound in this film: no line, narration, music or sounds to hear."

# The cells have no gap between them (a transparent border draws one), so a shot's cell spans exactly its time on
# the lanes below. Event delegation on the strip; the player is found by the strip's data-video selector each time (Gradio
# replaces the <video> element when the film changes). A lane's checkbox or its "solo" asks the server (the
# component's `hear` function) for the film with only the chosen stems, and swaps it into the player at the same
# time, playing if it played.
STRIP_JS = """
const player = () => document.querySelector(element.querySelector('.strip')?.dataset.video || '#none');
element.addEventListener('click', (ev) => {
  const solo = ev.target.closest('button.solo');
  if (solo) { choose([solo.dataset.stem]); return; }
  if (ev.target.closest('.lane .name')) return;
  const cell = ev.target.closest('[data-t]');
  const v = player();
  if (!cell || !v) return;
  const lane = ev.target.closest('.lane svg');
  let t = parseFloat(cell.dataset.t) + 0.01;
  if (lane) {
    const r = lane.getBoundingClientRect();
    t = Math.max(0, Math.min(1, (ev.clientX - r.left) / r.width)) * parseFloat(lane.dataset.seconds);
  }
  const seek = () => { v.currentTime = t; };
  if (v.readyState >= 1) seek(); else v.addEventListener('loadedmetadata', seek, { once: true });
  element.querySelector('.strip').dataset.seekedTo = cell.dataset.shot || '';
  mark(t);
});
element.addEventListener('change', (ev) => {
  if (!ev.target.matches('input.hear')) return;
  choose([...element.querySelectorAll('input.hear:checked')].map((b) => b.dataset.stem));
});
function say(text) {
  const n = element.querySelector('.hearing');
  if (n) n.textContent = text;
}
async function choose(stems) {
  const box = element.querySelector('.lanes');
  const v = player();
  if (!box || !v) return;
  element.querySelectorAll('input.hear').forEach((b) => { b.checked = stems.includes(b.dataset.stem); });
  element.querySelectorAll('.lane').forEach((l) => { l.classList.toggle('off', !stems.includes(l.dataset.stem)); });
  if (!stems.length) { v.muted = true; box.dataset.heard = ''; say('Every stem muted.'); return; }
  v.muted = false;
  if (stems.length === 3 && box.dataset.original) {  // every stem: the film as it was first played
    swap(v, box.dataset.original);
    box.dataset.heard = stems.join(',');
    say("Hearing the film's mix.");
    return;
  }
  say('Mixing ' + stems.join(' + ') + '…');
  let got;
  try {
    got = await server.hear({ project: box.dataset.project, version: box.dataset.version, render: box.dataset.render, stems });
  } catch (e) {
    got = { error: 'the server did not answer: try again' };
  }
  if (!got || got.error) { say((got && got.error) || 'no answer'); return; }
  if (!box.dataset.original) box.dataset.original = v.currentSrc || v.src;
  swap(v, got.url);
  box.dataset.heard = stems.join(',');
  say(got.note);
}
function swap(v, url) {  // the same time in the film, playing if it played
  const t = v.currentTime, playing = !v.paused;
  v.addEventListener('loadedmetadata', () => { v.currentTime = t; if (playing) v.play().catch(() => {}); }, { once: true });
  v.src = url;
}
function mark(t) {
  element.querySelectorAll('.cell[data-t]').forEach((c) => {
    const on = t >= parseFloat(c.dataset.t) && t < parseFloat(c.dataset.end);
    c.classList.toggle('playing', on);
  });
  element.querySelectorAll('.lanes .cursor').forEach((c) => {
    c.setAttribute('x', String(t));
  });
}
document.addEventListener('timeupdate', (ev) => {
  if (ev.target === player()) mark(ev.target.currentTime);
}, true);
"""

DRAFT_BADGE = (
    "<b class='tier'>draft</b>"  # on a strip's cell whose clip is a draft (the storyboard's cards have one too)
)

STRIP_CSS = """
.strip { display: flex; width: 100%; height: 64px; margin-top: 4px; }
.strip::before { content: 'shots'; flex: 0 0 120px; font-size: 11px; align-self: center; }
.strip .cell { position: relative; min-width: 0; height: 100%; cursor: pointer; overflow: hidden; border-radius: 4px;
  background: #222 center / cover no-repeat; background-clip: padding-box; border: 2px solid transparent;
  box-sizing: border-box; }
.strip .cell.playing { border-color: var(--color-accent); }
.strip .cell span { position: absolute; left: 2px; bottom: 1px; font-size: 10px; color: #fff;
  text-shadow: 0 0 3px #000; white-space: nowrap; }
.strip .cell .tier { position: absolute; right: 2px; top: 1px; font-size: 9px; font-weight: 600; color: #1b1b1b;
  background: #f5c542; padding: 0 3px; border-radius: 2px; text-shadow: none; }
.strip .cell.draft { border-style: dashed; border-color: #f5c542; }
.strip .cell.draft.playing { border-style: solid; border-color: var(--color-accent); }
.strip .title-card { background: #000; color: #ddd; font-size: 10px; display: flex; align-items: center; justify-content: center; }
.lanes { margin-top: 3px; display: flex; flex-direction: column; gap: 2px; }
.lane { display: flex; height: 30px; position: relative; }
.lane svg { display: block; flex: 1; min-width: 0; height: 100%; background: var(--background-fill-secondary);
  border-radius: 3px; cursor: pointer; }
.lane.off svg { opacity: 0.25; }
.lane .wave { stroke: none; }
.lane.dialogue .wave { fill: #3b82f6; }
.lane.music .wave { fill: #a855f7; }
.lane.effects .wave { fill: #10b981; }
.lane .cursor { fill: var(--color-accent); }
.lane .name { flex: 0 0 120px; box-sizing: border-box; padding-right: 4px; font-size: 11px; display: flex; gap: 4px;
  align-items: center; flex-wrap: wrap; line-height: 1.1; }
.lane .name label { display: flex; gap: 3px; align-items: center; cursor: pointer; }
.lane .name button.solo { font-size: 10px; padding: 0 4px; border: 1px solid var(--border-color-primary);
  border-radius: 3px; background: var(--button-secondary-background-fill); cursor: pointer; }
.lanes .silent-lane { position: absolute; left: 126px; top: 8px; font-size: 10px; color: var(--body-text-color-subdued);
  pointer-events: none; }
.lanes .hearing, .no-sound { font-size: 0.8em; color: var(--body-text-color-subdued); min-height: 1.1em; margin: 2px 0 0 120px; }
"""


def _peaks(path: Path, columns: int) -> np.ndarray:
    """The largest |sample| of each of `columns` equal stretches of a 16-bit PCM WAV (0..1), read a stretch at a
    time: a 10-minute stem (58 MB) is never held whole. Fewer samples than columns: one column a sample."""
    with wave.open(str(path), "rb") as w:
        if w.getsampwidth() != 2:
            raise ValueError(f"{path.name}: not 16-bit PCM")
        n = w.getnframes()
        columns = max(1, min(columns, n))
        edges = np.linspace(0, n, columns + 1).round().astype(int)
        out = np.zeros(columns, np.float32)
        for i in range(columns):
            block = np.frombuffer(w.readframes(int(edges[i + 1] - edges[i])), "<i2")
            if block.size:
                out[i] = np.abs(block.astype(np.int32)).max() / 32767
    return out


@functools.lru_cache(maxsize=96)
def _cached_peaks(sha256: str, path: str, columns: int) -> np.ndarray:
    peaks = _peaks(Path(path), columns)
    peaks.setflags(write=False)
    return peaks


def peaks(sha256: str, path: Path, columns: int = LANE_COLUMNS) -> np.ndarray:
    """A stem's peaks (see `_peaks`), computed once per stem: kept by the stem's hash (stems are content-addressed,
    so a hash always names the same samples)."""
    return _cached_peaks(sha256, str(path), columns)


def lane_svg(values: np.ndarray, seconds: float, name: str) -> str:
    """One lane: the peaks as a filled envelope mirrored about the middle, on a dB scale (FLOOR_DB at the middle,
    0 dBFS at the edges) so a line at -25 dBFS and music ducked to -55 both show; x in seconds of film."""
    db = 20 * np.log10(np.maximum(values, 1e-6))
    h = np.clip((db - FLOOR_DB) / -FLOOR_DB, 0.0, 1.0) * 0.5
    xs = (np.arange(len(values)) + 0.5) * (seconds / len(values))  # each column at its middle
    top = [f"{x:.2f},{0.5 - y:.3f}" for x, y in zip(xs, h)]
    bottom = [f"{x:.2f},{0.5 + y:.3f}" for x, y in zip(xs, h)]
    points = " ".join(["0,0.5", *top, f"{seconds:.2f},0.5", *bottom[::-1]])
    return (
        f"<svg viewBox='0 0 {seconds:.3f} 1' preserveAspectRatio='none' data-seconds='{seconds:.3f}' "
        f"data-peak-db='{float(db.max()):.1f}' role='img' aria-label='{name} waveform'>"
        f"<polygon class='wave' points='{points}'/>"
        f"<rect class='cursor' x='0' y='0' width='{seconds / 400:.4f}' height='1'/></svg>"
    )


def lanes_html(studio, render, controls: bool, project: str = "") -> str:
    """The three lanes of `render`'s sound, or one line saying the film has none; `controls`: a checkbox (hear this
    stem) and a "solo" button on each lane (the Screening room)."""
    stems = {k: sha for k, sha in render.media.items() if k in STEMS}
    if render.audio is None or not stems:
        return f"<p class='no-sound' data-sound='none'>{NO_SOUND}</p>"
    paths = studio.media_paths(render)
    seconds = None
    lanes = []
    for name in STEMS:
        if name not in stems:
            continue
        path = paths[name]
        with wave.open(str(path), "rb") as w:
            seconds = seconds or w.getnframes() / w.getframerate()
        values = peaks(stems[name], path)
        label = f"<span>{name}</span>"
        if controls:
            label = (
                f"<label title='hear the {name}'><input type='checkbox' class='hear' data-stem='{name}' checked> "
                f"{name}</label><button type='button' class='solo' data-stem='{name}' "
                f"title='hear only the {name}'>solo</button>"
            )
        quiet = "" if values.max() > 0 else "<span class='silent-lane'>silent: nothing on this stem</span>"
        lanes.append(
            f"<div class='lane {name}' data-stem='{name}' data-t='0' data-end='{seconds:.3f}'>"
            f"<div class='name'>{label}</div>{lane_svg(values, seconds, name)}{quiet}</div>"
        )
    hint = "<p class='hearing'></p>" if controls else ""
    return (
        f"<div class='lanes' data-project='{esc(project)}' data-version='{render.version}' "
        f"data-render='{esc(render.id)}' data-heard='{','.join(stems)}'>{''.join(lanes)}{hint}</div>"
    )


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


def strip_html(studio, board, render, video: str, controls: bool = False, project: str = "") -> str:
    """The strip for `render` of `board` (cells in film time, so a title card and crossfades line up), with the
    sound's lanes under it; `controls` (and the render's `project`): the lanes can be soloed and muted."""
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
        draft = r.tier == "draft"  # a film of mixed tiers says which shots are drafts
        cells.append(
            f"<div class='cell{' draft' * draft}' data-t='{start:.3f}' data-end='{end:.3f}' "
            f"data-shot='{esc(r.shot_id)}' data-tier='{r.tier}' "
            f"title='{esc(r.shot_id)} · {n:.1f}s{' · a draft (fast render)' * draft}' style='flex: {n:.3f}; "
            f'background-image: url("{esc(urls[r.shot_id])}")\'><span>{esc(r.shot_id)}</span>'
            f"{DRAFT_BADGE * draft}</div>"
        )
    return f"<div class='strip' data-video='{esc(video)}'>{''.join(cells)}</div>" + lanes_html(
        studio, render, controls, project
    )


def drafts_note(render) -> str:
    """Which shots of `render`'s film are drafts, in words ("" when every shot is final)."""
    drafts = [r.shot_id for r in render.shots if r.tier == "draft"]
    if not drafts:
        return ""
    if len(drafts) == len(render.shots):
        return "every shot a draft"
    more = f" and {len(drafts) - 8} more" if len(drafts) > 8 else ""
    return f"{len(drafts)} of {len(render.shots)} shots drafts ({', '.join(drafts[:8])}{more})"


def strip(elem_id: str, hear=None) -> gr.HTML:
    """The strip's component; `hear(data) -> {"url", "note"} | {"error"}`: the server function a lane's checkbox
    and solo call (the Screening room)."""
    return gr.HTML(
        value="",
        elem_id=elem_id,
        js_on_load=STRIP_JS,
        css_template=STRIP_CSS,
        server_functions=[hear] if hear is not None else None,
    )
