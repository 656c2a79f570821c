"""Widgets and wording more than one screen uses: the Draft/Final switch and its note, a save's message, a word diff.

A screen (app/ui/screens/<name>/) imports these, never another screen."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Literal, TypedDict

import gradio as gr

from app.ui.common import esc, md, ver


class EventOptions(TypedDict, total=False):
    """Options of an event listener the screens repeat (typed, so `**` of them is checked)."""

    api_visibility: Literal["public", "private", "undocumented"]
    show_progress: Literal["full", "minimal", "hidden"]


PRIVATE: EventOptions = {"api_visibility": "private"}  # an event of the page only, not an API route
QUIET: EventOptions = {"api_visibility": "private", "show_progress": "hidden"}  # ... that shows no spinner


def kit_head() -> str:
    """`kit.js` as a component's `head`: what the storyboard cards and the references panel share (`window.chiefKit`:
    an element with text set as text, an empty component's line, a picture's file input). Gradio puts a `head` script
    into the page once (it skips one whose text is there already) and runs it before the component's `js_on_load`."""
    return f"<script>{(Path(__file__).parent / 'kit.js').read_text()}</script>"


def llm_offer_md(config) -> str:
    """The first-run offer (the start screen and Settings) while no LLM is configured; empty once one is."""
    from app.factory import llm_offer

    offer = llm_offer(config)
    if offer is None:
        return ""
    return (
        f"**The critics, refiner and planner are the embedded heuristic agents.** {md(offer[0].upper() + offer[1:])}."
        " Whoever runs the server sets it: the CHIEF_LOCAL_LLM setting, or an address in Settings."
    )


TIERS = [("Draft (fast)", "draft"), ("Final (full quality)", "final")]


def tier_note(studio, default: str) -> str:
    """Under the Draft/Final switch: what each tier renders with on this backend, the project's default tier (the
    film options', `chief film P --tier`) and what a finalised shot keeps."""
    r = studio.tier_recipes()
    return (
        f"{md(r['draft'])} · {md(r['final'])}  \nThis project renders **{default}** unless switched "
        f"(its default: the Storyboard's film options). A finalised shot keeps {md(r['keeps'])}."
    )


def tier_switch(elem_id: str) -> gr.Radio:
    """The Draft/Final switch by a Render button (set to the version's default by `default_tier`)."""
    return gr.Radio(TIERS, value=None, label="Tier", elem_id=elem_id, scale=2)


def default_tier(studio, pid, v):
    """The switch set to the version's default tier, and its note (nothing while no project is open)."""
    if not pid:
        return gr.skip(), ""
    tier = studio.version(pid, ver(v)).storyboard.film.tier
    return gr.Radio(value=tier), tier_note(studio, tier)


def saved_message(v, branched: bool) -> str:
    """What a save says: the version it made, and a branch when another tab or user saved first."""
    msg = f"Saved as v{v.number} (child of v{v.parent_number})."
    if branched:
        msg += (
            f" **Branched:** v{v.parent_number} already had a newer version (another tab or user saved first), "
            "so your change is a new branch; nothing was lost."
        )
    return msg


def word_diff(old: str | None, new: str | None) -> str:
    """Old vs new as HTML with <del>/<ins> per word (escaped)."""
    out = []
    for op, text in diff_segments(old, new):
        out.append({"-": f"<del>{esc(text)}</del>", "+": f"<ins>{esc(text)}</ins>"}.get(op, esc(text)))
    return " ".join(out)


def diff_segments(old: str | None, new: str | None) -> list[tuple[str, str]]:
    """Old vs new as word runs: ("=", kept), ("-", removed), ("+", added)."""
    a, b = (old or "").split(), (new or "").split()
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("=", " ".join(a[i1:i2])))
        if op in ("delete", "replace"):
            out.append(("-", " ".join(a[i1:i2])))
        if op in ("insert", "replace"):
            out.append(("+", " ".join(b[j1:j2])))
    return out
