"""Settings: what is making the film (in words), the picture (size or aspect, frame rate: per project, a new
version), how shots are rendered (steps, guidance, seeds: for everyone on this server), the model folders, the
LLM endpoint and its limits (for everyone on this server; local model servers found by `discovered.py`), the
critics' panel and custom personas.

The API key lives only in this process's memory: it is never echoed back to the page, written to the database
or logged. Who may change the endpoint and where the key may go is decided in app/agent_settings.py; this
screen only says whether the request came from the app's own page. These settings are the server's, and
the screen says so. `values.py` holds the words and the persona form, `handlers.py` what the controls do
(`SettingsHandlers`), `screen.py` the layout and wiring."""

from app.ui.screens.settings.handlers import SettingsHandlers
from app.ui.screens.settings.screen import build
from app.ui.screens.settings.values import models_text, status_md

__all__ = ["SettingsHandlers", "build", "models_text", "status_md"]
