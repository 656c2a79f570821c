"""The creator's path under the status bar: plan → storyboard → render → screen → revise, each step a link to its
screen, the steps behind the open version ticked and the next one suggested from what the version has ("Next:
render v3"). Read from the version tree (`Studio.versions`: renders, critiques, notes, proposals per version) and
the latest render the version's film comes from."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape as esc  # not app.ui.common's: common builds the status bar from this module

import gradio as gr

# (step, screen it opens, its name on the bar)
STEPS = (
    ("plan", "projects", "Plan"),
    ("storyboard", "storyboard", "Storyboard"),
    ("render", "render", "Render"),
    ("screen", "screening", "Screen"),
    ("revise", "revise", "Revise"),
)
SCREEN_OF = {step: screen for step, screen, _ in STEPS}

# Event delegation: a step (or the "Next" button) sends 'go' with the screen it opens.
STEPS_JS = """
element.addEventListener('click', (ev) => {
  const b = ev.target.closest('[data-screen]');
  if (!b) return;
  ev.preventDefault();
  trigger('go', { screen: b.dataset.screen });
});
"""

CSS = """
.steps { display: flex; flex-wrap: wrap; align-items: center; gap: 4px; font-size: 0.9em; margin: 2px 0 4px; }
.steps button { font: inherit; border: 1px solid var(--border-color-primary); border-radius: 12px; padding: 1px 10px;
  background: var(--background-fill-primary); color: var(--body-text-color); cursor: pointer; }
.steps button.done { color: var(--body-text-color-subdued); }
.steps button.next { border-color: var(--color-accent); font-weight: 600; }
.steps .arrow { color: var(--body-text-color-subdued); }
.steps .go { margin-left: 10px; background: var(--button-primary-background-fill);
  color: var(--button-primary-text-color); border-color: transparent; font-weight: 600; }
"""


@dataclass(frozen=True)
class Next:
    step: str  # one of STEPS
    say: str  # "Next: render v3"
    why: str  # a tooltip: what the version has


def next_step(studio, pid: str | None, number: int | None) -> Next:
    """What the open version needs next: a plan without a project, a render without a film, a screening without
    critiques or notes, a revision once the critics or the creator have spoken, and reviewing a proposal made."""
    if not pid:
        return Next("plan", "Next: plan a film", "Write what your film is about on the Projects screen")
    v = studio.version(pid, number)
    node = next(n for n in studio.versions(pid) if n.number == v.number)
    n = v.number
    if studio.render_info(pid, n) is None:
        return Next("render", f"Next: render v{n}", f"v{n} has no film yet: check the storyboard, then render it")
    if node.proposals:
        return Next("revise", f"Next: review the changes proposed for v{n}", "Accept or reject each proposed change")
    if node.critiques or node.notes:
        return Next("revise", f"Next: revise v{n}", "Ask the refiner for changes from the critiques and your notes")
    return Next("screen", f"Next: screen v{n}", f"Watch v{n} with the critics and write your notes")


def steps_html(step: Next) -> str:
    """The path as buttons (the steps before the suggested one ticked) and the suggestion as its own button."""
    names = [s for s, _, _ in STEPS]
    at = names.index(step.step)
    parts = []
    for i, (name, screen, label) in enumerate(STEPS):
        cls = "done" if i < at else "next" if i == at else ""
        mark = "✓ " if i < at else ""
        parts.append(
            f"<button type='button' class='{cls}' data-step='{name}' data-screen='{screen}' "
            f"title='Open the {esc(label)} screen'>{mark}{esc(label)}</button>"
        )
    path = "<span class='arrow'>→</span>".join(parts)
    return (
        f"<nav class='steps' id='steps_path' aria-label='Your path' data-next='{step.step}'>{path}"
        f"<button type='button' class='go' id='next_step' data-screen='{SCREEN_OF[step.step]}' "
        f"title='{esc(step.why)}'>{esc(step.say)} →</button></nav>"
    )


def go(evt: gr.EventData):
    """A step of the path (or its "Next" button) opens its screen (anything else it sends: one line)."""
    data = getattr(evt, "_data", None)
    screen = data.get("screen") if isinstance(data, dict) else None
    if screen not in SCREEN_OF.values():
        raise gr.Error("the path bar sent something unreadable: reload the page")
    return gr.Tabs(selected=screen)
