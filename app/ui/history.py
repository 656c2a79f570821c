"""History screen: the version tree drawn as a graph (click a version to compare it with its parent, then open
or fork it), two versions side by side with players that play in sync, and the panel's scores across versions
(a line per persona, with a legend, at whole version numbers). Graph and plot are SVG built here, every text
escaped."""

from __future__ import annotations

import gradio as gr

from app.ui.common import Ctx, esc, guard, need_project
from app.ui.player import cc_toggle, film_video

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
    from app.ui.revise import word_diff

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


def build(ctx: Ctx) -> None:
    from storage.schema import DIMENSIONS

    studio = ctx.studio
    gr.Markdown("Click a version to compare it with its parent; the ringed one is current.")
    graph = gr.HTML(elem_id="version_graph", js_on_load=GRAPH_JS, css_template=GRAPH_CSS)
    with gr.Row(equal_height=True):
        target = gr.Number(label="Selected version", precision=0, minimum=1, elem_id="restore_version", scale=1)
        checkout_btn = gr.Button("Open it (make current)", elem_id="checkout_btn", scale=2)
        fork_btn = gr.Button("Fork a branch from it", elem_id="fork_btn", scale=2)
    message = gr.Markdown(elem_id="history_message")
    gr.Markdown("### Compare two versions")
    with gr.Row(equal_height=True):
        a = gr.Number(label="A", precision=0, minimum=1, elem_id="cmp_a")
        b = gr.Number(label="B", precision=0, minimum=1, elem_id="cmp_b")
        compare_btn = gr.Button("Compare", variant="primary", elem_id="compare_btn")
    with gr.Row():
        with gr.Column():
            film_a = gr.Video(label="A", elem_id="cmp_film_a", interactive=False, elem_classes=["film-player"])
            cc_toggle("cmp_film_a")
        with gr.Column():
            film_b = gr.Video(label="B", elem_id="cmp_film_b", interactive=False, elem_classes=["film-player"])
            cc_toggle("cmp_film_b")
    cmp_diff = gr.HTML(elem_id="cmp_diff", css_template=CSS, js_on_load=None)
    cmp_scores = gr.Dataframe(
        headers=["score", "A", "B", "change"],
        value=[],
        interactive=False,
        label="Panel score changes",
        elem_id="cmp_scores",
    )
    gr.Markdown("### Panel scores across versions")
    dim = gr.Dropdown(
        [(d.replace("_", " "), d) for d in (OVERALL, *DIMENSIONS)], value=OVERALL, label="Score", elem_id="plot_dim"
    )
    plot = gr.HTML(elem_id="score_plot", css_template=PLOT_CSS, js_on_load=None)

    known: dict[str, str] = {}  # version id -> what it changed (a saved version never changes; a draft is "draft")

    def tree(pid) -> str:
        """The version graph, edits labelled with what they changed."""
        rows = studio.versions(pid)
        todo = [r for r in rows if r.kind == "edit" and not r.draft and r.id not in known]
        if todo:
            words = studio.change_words(pid, [r.number for r in todo])
            known.update({r.id: words[r.number] for r in todo})
        return graph_svg(rows, {r.number: known[r.id] for r in rows if r.id in known})

    def plot_for(pid, dimension):
        return plot_svg(*score_series(studio, pid, studio.versions(pid), dimension or OVERALL), dimension or OVERALL)

    @guard
    def load(pid, v, dimension):
        if not pid:
            return "", None, None, None, ""
        rows = studio.versions(pid)
        current = next(r for r in rows if r.current)
        parent = current.parent or current.number
        return tree(pid), current.number, parent, current.number, plot_for(pid, dimension)

    @guard
    def compare(pid, va, vb):
        pid = need_project(pid)
        if va in (None, "") or vb in (None, ""):
            raise gr.Error("choose two versions to compare")
        d = studio.diff(pid, int(va), int(vb))
        films = [film_video(studio, pid, studio.render_info(pid, n), n) for n in (int(va), int(vb))]
        scores = [
            [k.replace("_", " "), x, y, (round(y - x, 2) if x is not None and y is not None else None)]
            for k, (x, y) in d.scores.items()  # score names in words ("story clarity")
        ]
        return films[0], films[1], diff_html(d), scores

    @guard
    def pick(pid, evt: gr.EventData):
        pid = need_project(pid)
        n = int(evt.version)
        parent = studio.version(pid, n).parent_number or n
        return (
            n,
            parent,
            n,
            *compare(pid, parent, n),
            f"v{n} selected: compared with v{parent}. Open it or fork a branch from it.",
        )

    @guard
    def checkout(pid, n):
        pid = need_project(pid)
        if n in (None, ""):
            raise gr.Error("choose a version")
        v = studio.checkout(pid, int(n))
        return v.number, f"v{v.number} is now current.", tree(pid)

    @guard
    def fork(pid, n):
        pid = need_project(pid)
        if n in (None, ""):
            raise gr.Error("choose a version")
        v = studio.fork(pid, int(n))
        return (
            v.number,
            f"v{v.number} forked from v{v.parent_number}; it is now current.",
            tree(pid),
        )

    ctx.tabs["history"].select(load, [ctx.pid, ctx.version, dim], [graph, target, a, b, plot], api_name="history")
    dim.change(guard(lambda pid, d: plot_for(pid, d) if pid else ""), [ctx.pid, dim], plot, api_visibility="private")
    compare_btn.click(compare, [ctx.pid, a, b], [film_a, film_b, cmp_diff, cmp_scores], api_name="compare")
    graph.pick(pick, ctx.pid, [target, a, b, film_a, film_b, cmp_diff, cmp_scores, message], api_visibility="private")
    checkout_btn.click(checkout, [ctx.pid, target], [ctx.version, message, graph], api_name="checkout")
    fork_btn.click(fork, [ctx.pid, target], [ctx.version, message, graph], api_name="fork")
