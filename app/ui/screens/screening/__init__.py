"""Screening room: the film with its timeline strip; the panel's score at a glance and per persona; each critique
in one line (open it for the rest: how it watched, its scores, shot notes and issues; a shot link seeks the
player); your notes on this version (on the film, a shot or a scene), editable and deletable; earlier versions'
notes with whether this version answers them. The critics run as a job, on the film or on one scene.
`values.py` holds the cards and the strip's server function, `handlers.py` what the controls do
(`ScreeningHandlers`), `screen.py` the layout and wiring."""

from app.ui.screens.screening.handlers import ScreeningHandlers
from app.ui.screens.screening.screen import build
from app.ui.screens.screening.values import cards_html, earlier_html

__all__ = ["ScreeningHandlers", "build", "cards_html", "earlier_html"]
