"""Projects, the start screen: "What is your film about?" (an idea, a length, example ideas a click fills in; the
plan is a job the server tracks and lands on the Storyboard screen), the recent films as posters (a frame of the
latest render, else the first keyframe, else a titled card) and a finder by title; storyboard files, archives,
fork, export and the trash under "More". A failed creation is one message; the list stays as it was. Films are
named by their titles, never by their ids. `values.py` holds the posters and lists, `handlers.py` what the controls
do (`ProjectsHandlers`), `screen.py` the layout and wiring."""

from app.ui.screens.projects.handlers import ProjectsHandlers
from app.ui.screens.projects.screen import build
from app.ui.screens.projects.values import EXAMPLES, poster

__all__ = ["EXAMPLES", "ProjectsHandlers", "build", "poster"]
