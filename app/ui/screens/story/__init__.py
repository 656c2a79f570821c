"""Story screen: title, logline and style guide (saving makes a new version); below them the character bible as
cards — each character's name and description edited in place, what they are, their reference images, their voice
with its controls and a preview; a card to add a character; each location's references — and the consistency
table (how alike each character looks across the shots, worst shots first; "not measured" without an
image-embedding model). The API's `save_story` still takes the bible as a table (name, description).

The cards are one client-side component (`references.js`) over JSON (`references.py` `refs_json`); references are
uploaded as a PNG, JPEG or WebP, generated from the description (a job: progress, Stop, a reloaded page follows
it) or cleared; a voice is tried with ▶ (the component's `preview_voice` server function: nothing is stored) and
kept with "Use this voice". Each change makes a new version, which the page follows. `handlers.py` holds what the
controls do (`StoryHandlers`, `ReferencesHandlers`), `screen.py` the layout and wiring."""

from app.ui.screens.story.handlers import ReferencesHandlers, StoryHandlers
from app.ui.screens.story.references import (
    RefAction,
    consistency_html,
    edited_bible,
    voice_words,
    what_they_are,
)
from app.ui.screens.story.screen import build

__all__ = [
    "RefAction",
    "ReferencesHandlers",
    "StoryHandlers",
    "build",
    "consistency_html",
    "edited_bible",
    "voice_words",
    "what_they_are",
]
