"""The History screen's values: the version tree as an SVG graph, the panel's scores across versions as an SVG plot,
two versions' differences as a table; every text escaped."""

from __future__ import annotations

from app.ui.common import esc
from app.ui.widgets import word_diff

OVERALL = "overall"
COLORS = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#9a6324", "#808000", "#000075"]

GRAPH_JS = """
element.addEventListener('click', (ev) => {
  const node = ev.target.closest('[data-version]');
  if (!node) return;
  element.querySelectorAll('.node.picked').forEach((n) => n.classList.remove('picked'));
  node.classList.add('picked');
  trigger('pick', { version: parseInt(node.dataset.version, 10) });
});
// Side-by-side players play in sync: play, pause and seeking on one is mirrored on the other.
const pair = () => [document.querySelector('#cmp_film_a video'), document.querySelector('#cmp_film_b video')];
let mirroring = false;
for (const kind of ['play', 'pause', 'seeked']) {
  document.addEventListener(kind, (ev) => {
    const [a, b] = pair();
    if (mirroring || !a || !b || (ev.target !== a && ev.target !== b)) return;
    const other = ev.target === a ? b : a;
    mirroring = true;
    if (Math.abs(other.currentTime - ev.target.currentTime) > 0.05) other.currentTime = ev.target.currentTime;
    const done = () => { mirroring = false; };
    if (kind === 'play') other.play().then(done, done);
    else { if (kind === 'pause') other.pause(); setTimeout(done, 0); }
  }, true);
}
"""

GRAPH_CSS = """
.vgraph { overflow-x: auto; }
.vgraph .node { cursor: pointer; }
.vgraph .node circle { fill: var(--block-background-fill); stroke: var(--body-text-color-subdued); stroke-width: 2; }
.vgraph .node.current circle { stroke: var(--color-accent); stroke-width: 4; }
.vgraph .node.picked circle { fill: var(--color-accent-soft); }
.vgraph .node.draft circle { stroke-dasharray: 4 3; }
.vgraph .node text { font-size: 12px; fill: var(--body-text-color); }
.vgraph .node text.kind { font-size: 10px; fill: var(--body-text-color-subdued); }
.vgraph path { stroke: var(--border-color-primary); stroke-width: 2; fill: none; }
"""

PLOT_CSS = """
.plot text { font-size: 11px; fill: var(--body-text-color); }
.plot .grid { stroke: var(--border-color-primary); stroke-width: 1; }
.plot .mean { stroke-width: 4; }
"""


def layout(rows) -> dict[int, tuple[int, int]]:
    """version -> (depth, row): children right of their parent, each branch on its own row (depth-first)."""
    children: dict[int | None, list] = {}
    for r in rows:
        children.setdefault(r.parent, []).append(r)
    pos: dict[int, tuple[int, int]] = {}
    next_row = [0]

    def walk(r, depth):
        pos[r.number] = (depth, next_row[0])
        kids = children.get(r.number, [])
        if not kids:
            next_row[0] += 1
        for k in kids:
            walk(k, depth + 1)

    for root in children.get(None, []):
        walk(root, 0)
    return pos


def graph_svg(rows, words: dict[int, str] | None = None) -> str:
    """The version tree as SVG: a node per version (current ringed, the working draft dashed and labelled "draft"),
    an edge per parent, each labelled with its kind, or for an edit with what it changed (`words`: "lines", "sounds
    & music"); hover for the message (a draft's: every small action folded into it)."""
    words = words or {}
    if not rows:
        return ""
    pos = layout(rows)
    dx, dy, pad = 96, 56, 28
    xy = {n: (pad + d * dx, pad + r * dy) for n, (d, r) in pos.items()}
    w = max(x for x, _ in xy.values()) + pad + 60
    h = max(y for _, y in xy.values()) + pad + 16
    edges = "".join(
        f"<path d='M{xy[r.parent][0]},{xy[r.parent][1]} C{xy[r.parent][0] + dx / 2},{xy[r.parent][1]} "
        f"{xy[r.number][0] - dx / 2},{xy[r.number][1]} {xy[r.number][0]},{xy[r.number][1]}'/>"
        for r in rows
        if r.parent in xy
    )
    nodes = []
    for r in rows:
        x, y = xy[r.number]
        label = "draft" if r.draft else words.get(r.number) or r.kind
        marks = " · ".join(
            t
            for t, k in (
                (f"{r.renders} film", r.renders),
                (f"{r.critiques} critiques", r.critiques),
                (f"{r.notes} notes", r.notes),
            )
            if k
        )
        nodes.append(
            f"<g class='node{' current' if r.current else ''}{' draft' if r.draft else ''}' data-version='{r.number}' "
            f"id='vnode_{r.number}'>"
            f"<title>v{r.number} {'draft' if r.draft else esc(r.kind)}: {esc(r.message)}"
            f"{(' (' + marks + ')') if marks else ''}</title>"
            f"<circle cx='{x}' cy='{y}' r='15'/><text x='{x}' y='{y + 4}' text-anchor='middle'>v{r.number}</text>"
            f"<text class='kind' x='{x}' y='{y + 28}' text-anchor='middle'>{esc(label)}"
            f"{' ▶' if r.renders else ''}</text></g>"
        )
    return (
        f"<div class='vgraph'><svg width='{w}' height='{h}' role='img' aria-label='version tree'>"
        f"{edges}{''.join(nodes)}</svg></div>"
    )


def score_series(studio, pid: str, rows, dimension: str = OVERALL) -> tuple[list[int], dict[str, dict[int, float]]]:
    """(versions with critiques, persona name -> {version: score}) from each version's latest panel run."""
    versions, series = [], {}
    for r in rows:
        if not r.critiques:
            continue
        versions.append(r.number)
        for item in studio.critiques(pid, r.number):
            c = item.critique
            score = c.overall if dimension == OVERALL else c.scores.get(dimension)
            if score is not None:  # `sound` is not scored on a silent film or by critiques older than it
                series.setdefault(item.persona_name, {})[r.number] = float(score)
    return versions, series


def plot_svg(versions: list[int], series: dict[str, dict[int, float]], dimension: str) -> str:
    """A line per persona and the panel mean (thick), versions as whole numbers on x, 0-10 on y, a legend."""
    if not versions:
        return "<p>No critiques yet: run the critics in the Screening room to see scores here.</p>"
    w, h, left, top, plot_w, plot_h = 1060, 300, 40, 16, 560, 240
    step = plot_w / max(len(versions) - 1, 1)
    x = {v: left + (i * step if len(versions) > 1 else plot_w / 2) for i, v in enumerate(versions)}

    def y(s: float) -> float:
        return top + plot_h * (1 - s / 10)

    parts = [
        f"<line class='grid' x1='{left}' x2='{left + plot_w}' y1='{y(s)}' y2='{y(s)}'/>"
        f"<text x='{left - 6}' y='{y(s) + 4}' text-anchor='end'>{s}</text>"
        for s in range(0, 11, 2)
    ]
    parts += [f"<text x='{x[v]}' y='{top + plot_h + 16}' text-anchor='middle'>v{v}</text>" for v in versions]
    mean = {  # over the personas who scored that version (a version nobody scored on this dimension has no point)
        v: sum(s[v] for s in series.values() if v in s) / sum(v in s for s in series.values())
        for v in versions
        if any(v in s for s in series.values())
    }
    legend = []
    lines = list(series.items()) + [("panel mean", mean)]
    for i, (name, pts) in enumerate(lines):
        color = "var(--body-text-color)" if name == "panel mean" else COLORS[i % len(COLORS)]
        cls = " class='mean'" if name == "panel mean" else ""
        coords = " ".join(f"{x[v]:.1f},{y(s):.1f}" for v, s in sorted(pts.items()))
        parts.append(
            f"<polyline{cls} points='{coords}' fill='none' stroke='{color}' stroke-width='2'>"
            f"<title>{esc(name)}</title></polyline>"
        )
        parts += [
            f"<circle cx='{x[v]:.1f}' cy='{y(s):.1f}' r='3' fill='{color}'><title>{esc(name)} v{v}: {s:.1f}"
            f"</title></circle>"
            for v, s in pts.items()
        ]
        ly = top + 8 + i * 18
        legend.append(
            f"<g class='legend-item'><line x1='{left + plot_w + 24}' x2='{left + plot_w + 44}' y1='{ly}' y2='{ly}' "
            f"stroke='{color}' stroke-width='{4 if cls else 2}'/><text x='{left + plot_w + 50}' y='{ly + 4}'>"
            f"{esc(name)}</text></g>"
        )
    label = esc(dimension.replace("_", " "))
    return (
        f"<svg class='plot' width='{w}' height='{max(h, top + 18 * len(lines) + 20)}' role='img' "
        f"aria-label='{label} per persona across versions'>{''.join(parts)}<g class='legend'>{''.join(legend)}</g></svg>"
    )


def diff_html(d) -> str:
    """Shot-by-shot differences (studio.diff) as an HTML table."""
    rows = []
    for f, (a, b) in d.story.items():
        rows.append(f"<tr><td>story</td><td>{esc(f)}</td><td>{word_diff(str(a), str(b))}</td></tr>")
    for name, (a, b) in d.characters.items():
        rows.append(f"<tr><td>character</td><td>{esc(name)}</td><td>{word_diff(a, b)}</td></tr>")
    for ch in d.shots:
        if ch.status == "same":
            continue
        detail = "<br>".join(f"<b>{esc(f)}</b>: {word_diff(str(a), str(b))}" for f, (a, b) in ch.fields.items())
        rows.append(
            f"<tr class='{ch.status}'><td>{esc(ch.status)}</td><td>{esc(ch.shot_id)}</td><td>{detail}</td></tr>"
        )
    if not rows:
        return f"<p>v{d.from_version} and v{d.to_version} have the same storyboard.</p>"
    return (
        f"<p>v{d.from_version} → v{d.to_version}</p><table class='cmp'><tr><th>change</th><th>what</th><th>diff</th></tr>"
        + "".join(rows)
        + "</table>"
    )


CSS = "del { background: #fdd; } ins { background: #dfd; text-decoration: none; } td { vertical-align: top; }"
