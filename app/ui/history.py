"""History screen: the version tree, two versions side by side, panel scores across versions, restore/fork."""

from __future__ import annotations

import gradio as gr

from app.ui.common import Ctx, esc, guard, need_project

OVERALL = "overall"


def tree_text(rows: list[dict]) -> str:
    """The version tree as indented text, depth-first, oldest child first (* = current)."""
    children: dict[int | None, list[dict]] = {}
    for r in rows:
        children.setdefault(r.parent, []).append(r)
    lines: list[str] = []

    def walk(parent, depth):
        for r in children.get(parent, []):
            mark = "*" if r.current else " "
            extra = f"{r.renders}R {r.critiques}C {r.notes}N"
            lines.append(f"{mark} {'  ' * depth}{'└ ' if depth else ''}v{r.number} {r.kind}: {r.message}  [{extra}]")
            walk(r.number, depth + 1)
    walk(None, 0)
    return "\n".join(lines)


def score_frame(studio, pid: str, rows: list[dict], dimension: str = OVERALL):
    """A DataFrame (version, score, persona) of each persona's latest score per version, for a LinePlot."""
    import pandas as pd

    data = []
    for r in rows:
        if not r.critiques:
            continue
        for item in studio.critiques(pid, r.number):
            c = item.critique
            score = c.overall if dimension == OVERALL else c.scores.get(dimension)
            data.append({"version": r.number, "score": float(score), "persona": item.persona_name})
    return pd.DataFrame(data, columns=["version", "score", "persona"])


def diff_html(d: dict) -> str:
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
        rows.append(f"<tr class='{ch.status}'><td>{esc(ch.status)}</td><td>{esc(ch.shot_id)}</td><td>{detail}</td></tr>")
    if not rows:
        return f"<p>v{d.from_version} and v{d.to_version} have the same storyboard.</p>"
    return (f"<p>v{d.from_version} → v{d.to_version}</p><table class='cmp'><tr><th>change</th><th>what</th><th>diff</th></tr>"
            + "".join(rows) + "</table>")


CSS = "del { background: #fdd; } ins { background: #dfd; text-decoration: none; } td { vertical-align: top; }"


def build(ctx: Ctx) -> None:
    from storage.schema import DIMENSIONS

    studio = ctx.studio
    with gr.Row():
        with gr.Column(scale=3):
            tree = gr.Code(label="Version tree (* = current; R renders, C critiques, N notes)", language=None,
                           interactive=False, elem_id="version_tree", max_lines=24)
        with gr.Column(scale=2):
            target = gr.Number(label="Version", precision=0, minimum=1, elem_id="restore_version")
            with gr.Row():
                checkout_btn = gr.Button("Restore (make current)", elem_id="checkout_btn")
                fork_btn = gr.Button("Fork a branch from it", elem_id="fork_btn")
            message = gr.Markdown(elem_id="history_message")
    gr.Markdown("### Compare two versions")
    with gr.Row():
        a = gr.Number(label="A", precision=0, minimum=1, elem_id="cmp_a")
        b = gr.Number(label="B", precision=0, minimum=1, elem_id="cmp_b")
        compare_btn = gr.Button("Compare", variant="primary", elem_id="compare_btn")
    with gr.Row():
        film_a = gr.Video(label="A", elem_id="cmp_film_a", interactive=False)
        film_b = gr.Video(label="B", elem_id="cmp_film_b", interactive=False)
    cmp_diff = gr.HTML(elem_id="cmp_diff", css_template=CSS, js_on_load=None)
    cmp_scores = gr.Dataframe(headers=["score", "A", "B", "change"], value=[], interactive=False,
                              label="Panel score changes", elem_id="cmp_scores")
    gr.Markdown("### Panel scores across versions")
    dim = gr.Dropdown([OVERALL, *DIMENSIONS], value=OVERALL, label="Dimension", elem_id="plot_dim")
    plot = gr.LinePlot(x="version", y="score", color="persona", y_lim=[0, 10], elem_id="score_plot",
                       label="Scores per persona", height=320)

    @guard
    def load(pid, v, dimension):
        if not pid:
            return "", None, None, None, None
        rows = studio.versions(pid)
        current = next(r for r in rows if r.current)
        parent = current.parent or current.number
        return (tree_text(rows), current.number, parent, current.number,
                score_frame(studio, pid, rows, dimension or OVERALL))

    @guard
    def replot(pid, dimension):
        if not pid:
            return None
        return score_frame(studio, pid, studio.versions(pid), dimension or OVERALL)

    @guard
    def compare(pid, va, vb):
        pid = need_project(pid)
        if va in (None, "") or vb in (None, ""):
            raise gr.Error("choose two versions to compare")
        d = studio.diff(pid, int(va), int(vb))
        films = []
        for n in (int(va), int(vb)):
            info = studio.render_info(pid, n)
            films.append(str(studio.film_path(info)) if info else None)
        scores = [[k, x, y, (round(y - x, 2) if x is not None and y is not None else None)]
                  for k, (x, y) in d.scores.items()]
        return films[0], films[1], diff_html(d), scores

    @guard
    def checkout(pid, n):
        pid = need_project(pid)
        if n in (None, ""):
            raise gr.Error("choose a version")
        v = studio.checkout(pid, int(n))
        return v.number, f"v{v.number} is now current.", tree_text(studio.versions(pid))

    @guard
    def fork(pid, n):
        pid = need_project(pid)
        if n in (None, ""):
            raise gr.Error("choose a version")
        v = studio.fork(pid, int(n))
        return v.number, f"v{v.number} forked from v{v.parent_number}; it is now current.", tree_text(studio.versions(pid))

    ctx.tabs["history"].select(load, [ctx.pid, ctx.version, dim], [tree, target, a, b, plot], api_name="history")
    dim.change(replot, [ctx.pid, dim], plot, api_visibility="private")
    compare_btn.click(compare, [ctx.pid, a, b], [film_a, film_b, cmp_diff, cmp_scores], api_name="compare")
    checkout_btn.click(checkout, [ctx.pid, target], [ctx.version, message, tree], api_name="checkout")
    fork_btn.click(fork, [ctx.pid, target], [ctx.version, message, tree], api_name="fork")
