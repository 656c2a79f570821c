"""The web app's screens, one package each (`app/ui/screens/<name>/`): its layout and wiring (`build(ctx)`), a
handler class whose methods the events call (tested without a browser), its JS and CSS. A screen imports the shared
parts of `app/ui` (common, widgets, player, timeline, scenes, board_media), never another screen."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.ui.common import Ctx


def builders() -> dict[str, Callable[[Ctx], object]]:
    """Each screen's name (its tab's id) -> its `build(ctx)`."""
    from app.ui.screens import history, projects, render, revise, screening, settings, story, storyboard

    return {
        "projects": projects.build,
        "story": story.build,
        "storyboard": storyboard.build,
        "render": render.build,
        "screening": screening.build,
        "revise": revise.build,
        "history": history.build,
        "settings": settings.build,
    }
