"""The scene picker the Render, Screening and Revise screens share (render, critique or refine one scene), and how
a critique's coverage reads on a page."""

from __future__ import annotations

import gradio as gr

from app.ui.common import esc, need_project, notice, ver

WHOLE = ""  # the picker's value for the whole film


def _tc(t: float) -> str:
    return f"{int(t // 60)}:{int(t % 60):02d}"


def choices(board) -> list[tuple[str, str]]:
    """(label, scene id) for the picker: the whole film, then each scene with its shots and times."""
    out, t = [("whole film", WHOLE)], 0.0
    for sc in board.scenes:
        length = sum(s.duration for s in sc.shots)
        out.append(
            (
                f"{sc.scene_id} · {sc.title or 'untitled'} · {len(sc.shots)} shots · {_tc(t)}–{_tc(t + length)}",
                sc.scene_id,
            )
        )
        t += length
    return out


def picker(elem_id: str, label: str = "Scene") -> gr.Dropdown:
    return gr.Dropdown(
        label=label, choices=[("whole film", WHOLE)], value=WHOLE, elem_id=elem_id, allow_custom_value=True, scale=2
    )


def refresh(studio):
    """A handler: the picker's scenes for the open version (kept when the scene is still there)."""

    def update(pid, v, current):
        if not pid:
            return gr.Dropdown(choices=[("whole film", WHOLE)], value=WHOLE)
        opts = choices(studio.version(pid, ver(v)).storyboard)
        return gr.Dropdown(choices=opts, value=current if current in {c[1] for c in opts} else WHOLE)

    return update


def scope_of(studio, pid: str, number: int, scene: str | None):
    """The picked scene as a Scope of the version (None for the whole film); an unknown scene is refused."""
    if not scene:
        return None
    return studio.scope(pid, number, scene=scene)


def start(jobs, studio, kind: str, pid, v, scene: str | None, task, what: str):
    """The project's job of `kind` on the picked scene (or the one already running): `task(number, scope)`, the
    job's Task (app.server.jobs), labelled "`what` vN · scene sc03"."""
    pid = need_project(pid)
    number = studio.version(pid, ver(v)).number
    scope = scope_of(studio, pid, number, scene)
    job, started = jobs.start(
        kind,
        pid,
        task(number, scope),
        version=number,
        label=f"{what} v{number}" + (f" · {scope.label()}" if scope else ""),
    )
    if not started:
        notice(f"{job.label}: already running, following it")
    return pid, number, job


def coverage_html(item) -> str:
    """A critique's scope and coverage in a line, and the shots it could not see as meant (escaped)."""
    cov = item.coverage
    parts = []
    if not item.scope.whole:
        parts.append(f"watched {esc(item.scope.label())}")
    if cov is not None:
        parts.append(esc(cov.line()))
    html = (
        f"<div class='coverage' data-input='{esc(cov.input) if cov else ''}'>{' · '.join(parts)}</div>" if parts else ""
    )
    if cov is not None and cov.unseen:
        rows = "".join(f"<li>{esc(u.shot_id)}: {esc(u.why)}</li>" for u in cov.unseen[:12])
        more = f"<li>… and {len(cov.unseen) - 12} more</li>" if len(cov.unseen) > 12 else ""
        html += f"<ul class='unseen'>{rows}{more}</ul>"
    return html
