"""The film player of the Render tab, the Screening room and History's comparison, and what a page downloads.

- The film under a name a download keeps: its title and version ("Tiny-Lighthouse-v2.mp4", a hard link in the data
  folder's `exports/`, which the server serves), never its hash.
- Its captions as the player's track: the render's WebVTT, shown by default; a CC button under the player turns
  them off and on (the choice holds for every film this page plays).
- The player's label sits above the picture, not over it (the animatic draws its own label in the frame's top band;
  `app.ui.CSS`).
- The hand-off zip is written to `exports/` too: the page offers it for download from there.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import gradio as gr

EXPORTS = "exports"  # the data folder's folder of what pages download (an allowed path of the server)

# Event delegation: the button flips the page's choice and applies it to the player's tracks; a film that loads
# later (Gradio replaces the <video> when the film changes, and a lane's solo swaps its source) gets the same
# choice. Media events do not bubble: they are caught on the document in the capture phase.
CC_JS = """
const sel = element.querySelector('.cc')?.dataset.video || '#none';
const box = () => document.querySelector(sel.replace(/ video$/, ''));
if (window.chiefCaptions === undefined) window.chiefCaptions = true;
const apply = () => {
  const v = document.querySelector(sel);
  const b = element.querySelector('.cc');
  if (!b) return;
  for (const t of v ? v.textTracks : []) {
    const mode = window.chiefCaptions ? 'showing' : 'hidden';
    if (t.mode !== mode) t.mode = mode;
  }
  const has = !!(v && v.querySelector('track[src]'));
  const text = !has ? 'CC · no captions' : window.chiefCaptions ? 'CC · captions on' : 'CC · captions off';
  if (b.textContent !== text) b.textContent = text;  // written only when it changes: the observer sees writes
  b.disabled = !has;
  b.setAttribute('aria-pressed', String(has && window.chiefCaptions));
};
element.addEventListener('click', (ev) => {
  if (!ev.target.closest('button.cc')) return;
  window.chiefCaptions = !window.chiefCaptions;
  apply();
});
for (const kind of ['loadedmetadata', 'load', 'emptied']) {
  document.addEventListener(kind, (ev) => {
    if (ev.target instanceof Element && box()?.contains(ev.target)) apply();
  }, true);
}
if (box()) new MutationObserver(apply).observe(box(), { childList: true, subtree: true, attributes: true,
  attributeFilter: ['src'] });
apply();
"""

CC_CSS = """
.cc { font: inherit; font-size: 0.85em; border: 1px solid var(--border-color-primary); border-radius: 6px;
  padding: 1px 8px; background: var(--background-fill-primary); color: var(--body-text-color); cursor: pointer; }
.cc[aria-pressed=true] { border-color: var(--color-accent); font-weight: 600; }
.cc:disabled { cursor: default; color: var(--body-text-color-subdued); }
"""


def cc_toggle(video_id: str) -> gr.HTML:
    """The CC button for the player whose elem_id is `video_id` (placed under it)."""
    button = (
        f"<button type='button' class='cc' data-video='#{video_id} video' aria-pressed='false' "
        "title='Captions on the picture: on or off'>CC</button>"
    )
    return gr.HTML(value=button, elem_id=f"{video_id}_cc", js_on_load=CC_JS, css_template=CC_CSS)


def file_stem(title: str, number: int) -> str:
    """A film's name for a file: its title's letters and digits joined by "-", then its version ("Tiny-Lighthouse-v2")."""
    slug = re.sub(r"[\W_]+", "-", title).strip("-")[:60].strip("-") or "film"
    return f"{slug}-v{number}"


def exports_dir(home, pid: str) -> Path:
    """The project's folder of downloads in the data folder (`exports/<project>`)."""
    folder = Path(home) / EXPORTS / pid
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def named_film(studio, pid: str, render, number: int | None = None) -> Path:
    """`render`'s film under the title and number of version `number` (default: the render's; a version that
    changes no pixels shares its parent's film and names it its own) in the project's exports: a hard link to the
    media store's file (no second copy), made again only when the film changed."""
    number = render.version if number is None else number
    film = studio.film_path(render)
    title = studio.version(pid, number).storyboard.title
    out = exports_dir(studio.config.home, pid) / f"{file_stem(title, number)}.mp4"
    if out.is_file() and os.path.samefile(out, film):
        return out
    fd, part = tempfile.mkstemp(prefix=".film-", suffix=".mp4", dir=out.parent)
    os.close(fd)
    os.unlink(part)
    try:
        os.link(film, part)
    except OSError:  # a file system without hard links: a copy
        shutil.copyfile(film, part)
    os.replace(part, out)
    return out


def film_video(studio, pid: str, render, number: int | None = None, **kwargs) -> gr.Video:
    """The player's value for `render` (None: no film) as version `number`'s film (see named_film): the named film
    and its captions track (or none)."""
    if render is None:
        return gr.Video(value=None, subtitles=None, **kwargs)
    vtt = studio.media_paths(render).get("vtt")
    return gr.Video(
        value=str(named_film(studio, pid, render, number)),
        subtitles=str(vtt) if vtt is not None and vtt.is_file() else None,
        **kwargs,
    )


def handoff_path(studio, pid: str, number: int) -> Path:
    """Where the hand-off zip of version `number` is written: the project's exports, named for the film."""
    title = studio.version(pid, number).storyboard.title
    return exports_dir(studio.config.home, pid) / f"{file_stem(title, number)}-for-an-editor.zip"
