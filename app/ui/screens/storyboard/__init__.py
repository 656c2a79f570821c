"""Storyboard screen: scenes of shot cards you can see (the approved keyframe, else the clip's thumbnail; prompt,
length, camera, characters, narration, lines (speaker, line, delivery, ▶ to hear it as the render voices it; a
line too long for its shot flagged), sounds, description, lock and continuity; each scene's music cue and track
button on its header), edited in place and dragged to reorder; per-shot actions (play the clip, render just that
shot); the image-first workflow on each card (draw, re-roll, upload, pick or clear its keyframe; render takes, watch
them side by side with the panel's votes, use one); keyframes for the whole board or the chosen scene and the
panel's keyframe screening; the film options (with a track for the whole film). Saving makes a new version, and so
does approving a keyframe or using a take: the page follows it. Unsaved edits are kept in the browser per project
and version (the JSON's `key`) and come back after a tab switch or a reload; Undo; find a shot; fold scenes.

`board.py` holds the values (the board as the editor's JSON), `handlers.py` what the controls do
(`StoryboardHandlers`), `screen.py` the layout and wiring; the cards are one client-side component
(`storyboard.js`, `storyboard.css`)."""

from app.ui.screens.storyboard.board import Finalize, board_json, json_to_board, playing
from app.ui.screens.storyboard.handlers import StoryboardHandlers
from app.ui.screens.storyboard.screen import build

__all__ = ["Finalize", "StoryboardHandlers", "board_json", "build", "json_to_board", "playing"]
