"""Render screen: render a version (or one scene of it) as a job the server tracks (progress per shot and step,
Stop that works in every stage), the film with its timeline strip, each shot's clip and render time, and the
hand-off to an editor. A scene renders alone; the film is assembled from the latest clip of every shot. A reloaded
page or a second tab that opens this screen while a render runs follows that render. `values.py` holds the summary
and the shot table, `handlers.py` what the controls do (`RenderHandlers`), `screen.py` the layout and wiring."""

from app.ui.screens.render.handlers import RenderHandlers
from app.ui.screens.render.screen import build
from app.ui.screens.render.values import STOP_NOTE, summary

__all__ = ["STOP_NOTE", "RenderHandlers", "build", "summary"]
