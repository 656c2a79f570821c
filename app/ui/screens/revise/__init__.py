"""Revise screen: the refiner's proposal as a review. First each request of your notes and its answer (the edits
made, or why none); then one compact row per edit, your notes' edits first and ticked, the critics' after and
unticked unless they agree with a note, a warning on one that takes the idea's key thing out. One row per edit (the
shot's thumbnail, a word diff, why, and its sources by name: your notes' words, the personas' names; a sound edit
in words, "Scene 3 “The storm”: music −6 dB", "Keeper's voice: lower, slower"), accept or reject each or all, edit
a new value in place, and commit once: Commit is disabled while nothing is accepted and after committing, and the
server refuses a proposal already committed, so a second click never makes a second version. The refiner runs as
a job (its answer streams in: tokens so far), on the scenes the notes and critiques are about or on one scene.

The review is one client-side component (`revise.js`) over the proposal as JSON (`values.py` `review_json`);
`handlers.py` holds what the controls do (`ReviseHandlers`), `screen.py` the layout and wiring."""

from app.ui.screens.revise.handlers import ReviseHandlers
from app.ui.screens.revise.screen import HERE, build
from app.ui.screens.revise.values import decisions, review_json

__all__ = ["HERE", "ReviseHandlers", "build", "decisions", "review_json"]
