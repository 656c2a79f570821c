"""The Projects screen's values: example ideas and lengths, the recent films as posters (a frame of the latest
render, else the first keyframe, else a titled card), the finder's and the trash's lists."""

from __future__ import annotations

from datetime import UTC, datetime

import gradio as gr

from app.ui.common import esc, media_url, named

# A short name on the button, the idea it fills in.
EXAMPLES = (
    ("The keeper and the whale", "A lighthouse keeper befriends a lost whale during the last storm of autumn."),
    (
        "The clock tower",
        "A retired clockmaker and her clumsy brass robot apprentice must repair the frozen clock tower before an "
        "ice storm.",
    ),
    ("The rematch", "The tortoise and the hare race again, forty years later, through a city at night."),
    ("The umbrella", "A girl who collects lost umbrellas finds one that opens onto another city."),
)
LENGTHS = ((" 30 s", 0.5), ("1 min", 1), ("3 min", 3), ("5 min", 5), ("10 min", 10))
MAX_POSTERS = 24  # the most recent films as posters; every film can be found by name below them

# Event delegation: a poster sends 'open' with its project.
POSTERS_JS = """
element.addEventListener('click', (ev) => {
  const b = ev.target.closest('button.poster');
  if (!b) return;
  trigger('open', { pid: b.dataset.pid });
});
"""

POSTERS_CSS = """
.posters { display: grid; grid-template-columns: repeat(auto-fill, minmax(190px, 1fr)); gap: 12px; }
.posters button.poster { font: inherit; text-align: left; padding: 0; cursor: pointer; overflow: hidden;
  border: 1px solid var(--border-color-primary); border-radius: 8px; background: var(--background-fill-secondary);
  color: var(--body-text-color); }
.posters button.poster:hover { border-color: var(--color-accent); }
.posters .frame { aspect-ratio: 16 / 9; width: 100%; object-fit: cover; display: block; background: #222; }
.posters .card { aspect-ratio: 16 / 9; display: flex; align-items: center; justify-content: center; padding: 8px;
  text-align: center; font-weight: 600; color: #f5f0e6; background: linear-gradient(135deg, #2f3b52, #6b4f3a); }
.posters .title { display: block; font-weight: 600; padding: 6px 8px 0; white-space: nowrap; overflow: hidden;
  text-overflow: ellipsis; }
.posters .meta { display: block; font-size: 0.85em; color: var(--body-text-color-subdued); padding: 0 8px 6px; }
.posters .open { outline: 2px solid var(--color-accent); }
.no-posters { color: var(--body-text-color-subdued); }
"""


def ago(when: datetime, now: datetime | None = None) -> str:
    """How long ago, in words a person reads at a glance: "just now", "5 min ago", "2 h ago", "3 days ago"."""
    now = now or datetime.now(UTC)
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    s = max(0.0, (now - when).total_seconds())
    if s < 60:
        return "just now"
    if s < 3600:
        return f"{int(s // 60)} min ago"
    if s < 86400:
        return f"{int(s // 3600)} h ago"
    days = int(s // 86400)
    return "yesterday" if days == 1 else f"{days} days ago"


def length(seconds: float) -> str:
    return f"{int(seconds // 60)}:{int(round(seconds % 60)):02d}" if seconds >= 60 else f"{seconds:.0f} s"


def poster(studio, project) -> dict:
    """One film on the start screen: its title, length, current version, when it was last rendered (or changed),
    and a picture: a frame of its latest render, else its first keyframe, else none (a titled card). A film that
    is another version's than the current one says whose ("v3 (draft) · v2's film, rendered 5 min ago")."""
    v = studio.version(project.id)
    nodes = studio.versions(project.id)
    rendered = [n for n in nodes if n.renders]
    image, meta, info = "", named(v), None
    if rendered:
        info = studio.render_info(project.id, max(rendered, key=lambda n: n.created_at).number)
        if info is not None and info.shots:
            image = media_url(studio.thumbnail(info.shots[len(info.shots) // 3].sha256))
            whose = "" if info.version == v.number else f"v{info.version}'s film, "
            meta += f" · {whose}rendered {ago(info.created_at)}"
    if not image:
        frames = [s.keyframe for s in v.storyboard.shots() if s.keyframe]
        image = media_url(studio.image_path(frames[0])) if frames else ""
        meta += f" · not rendered yet · changed {ago(max(n.created_at for n in nodes))}"
    last = max([n.created_at for n in nodes] + ([info.created_at] if info else []))
    return {
        "pid": project.id,
        "title": project.title,
        "length": length(v.storyboard.duration()),
        "meta": meta,
        "image": image,
        "last": last if last.tzinfo else last.replace(tzinfo=UTC),
    }


def posters_html(studio, current: str | None = None) -> str:
    """The most recent films as a grid of posters (escaped: titles come from people, files and LLMs)."""
    films = sorted((poster(studio, p) for p in studio.projects()), key=lambda f: f["last"], reverse=True)
    if not films:
        return "<p class='no-posters' id='no_posters'>No films yet: your first one starts above.</p>"
    cards = []
    for f in films[:MAX_POSTERS]:
        picture = (
            f"<img class='frame' src='{esc(f['image'])}' alt=''>"
            if f["image"]
            else f"<span class='card'>{esc(f['title'])}</span>"
        )
        cards.append(
            f"<button type='button' class='poster{' open' if f['pid'] == current else ''}' data-pid='{esc(f['pid'])}' "
            f"title='Open “{esc(f['title'])}”'>{picture}<span class='title'>{esc(f['title'])}</span>"
            f"<span class='meta'>{esc(f['length'])} · {esc(f['meta'])}</span></button>"
        )
    more = (
        f"<p class='no-posters'>{len(films) - MAX_POSTERS} older films: find them by name below.</p>"
        if len(films) > MAX_POSTERS
        else ""
    )
    return f"<div class='posters' id='poster_grid'>{''.join(cards)}</div>{more}"


def project_choices(studio) -> list[tuple[str, str]]:
    """(what a person reads, the project) for the film finder: its title, version and when it was made."""
    return [(f"{p.title} · v{p.current_version} · {p.created_at:%b %d}", p.id) for p in studio.projects()]


def listing(studio, selected: str | None = None):
    """The posters, the finder (`selected` chosen when it is there) and the trash, as the screen shows them."""
    choices = project_choices(studio)
    trashed = [
        (f"{p.title} · moved to the trash {ago(p.trashed_at)}", p.id)
        for p in studio.projects(include_trashed=True)
        if p.trashed and p.trashed_at is not None
    ]
    return (
        posters_html(studio, selected),
        gr.Dropdown(choices=choices, value=selected if selected in {v for _, v in choices} else None),
        gr.Dropdown(choices=trashed, value=None),
    )
