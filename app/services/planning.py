"""Planning: an idea becomes v1 of a new project (the planner agent writes the storyboard), or a
hand-written storyboard does. Nothing is written until the whole plan is there: v1 is one transaction."""

from __future__ import annotations

from app.context import Context, ProgressFn, no_progress
from app.errors import StudioError
from app.services.projects import Projects
from storage.records import UsageRecord, Version
from storage.run import CancelToken, RunContext
from storage.schema import Storyboard

IDEA_LIMIT = 20_000  # characters; storage.records.Project.idea holds this many


KINDS = {"person": "a person", "animal": "an animal", "creature": "a creature", "machine": "a machine"}


def what_they_are(description: str) -> str:
    """ "a machine", "an animal", … as the embedded planner reads a character's description ("" when it cannot tell):
    the bible's cards say it, so a creator sees how the description will be drawn."""
    from agents.offline.idea import phrase_kind

    return KINDS.get(phrase_kind(description), "")


class Planning:
    def __init__(self, ctx: Context, projects: Projects) -> None:
        self.ctx, self.projects = ctx, projects

    def create_project(
        self,
        idea: str,
        minutes: float = 1.0,
        title: str | None = None,
        panel: list[str] | None = None,
        *,
        overrides: dict | None = None,
        tag: str = "",
        cancel: CancelToken | None = None,
        progress: ProgressFn | None = None,
    ) -> Version:
        """Plan a storyboard from the idea and make it v1 of a new project, in one transaction.

        `overrides` set storyboard fields after planning (e.g. width, height, fps); `tag` is kept in v1's
        message so the plan can be found again (`Projects.find_tagged`), e.g. by a batch resuming after a kill."""
        if len(idea) > IDEA_LIMIT:
            raise StudioError(
                f"the idea is {len(idea):,} characters long; it can be at most {IDEA_LIMIT:,} "
                "(about 3,000 words): shorten it or put the details in a storyboard file"
            )
        most = self.ctx.config.limits.max_film_minutes
        if minutes > most:
            raise StudioError(
                f"a {minutes:g}-minute film is over the max_film_minutes setting ({most:g}): ask for less, or raise "
                "CHIEF_MAX_FILM_MINUTES"
            )
        planner = self.ctx.agents.planner
        run = RunContext(cancel=cancel or CancelToken(), progress=progress or no_progress)
        # an LLM planner reports each scene (and its streamed tokens) and stops on `cancel`
        result = planner.plan(idea, minutes, run)
        run.cancel.raise_if_cancelled()  # stopped while planning: nothing is written
        changes = {**(overrides or {}), **({"title": title} if title else {})}
        board = Storyboard.model_validate({**result.value.model_dump(mode="json"), **changes})
        message = f"planned by {planner.mode}" + (f" ({tag})" if tag else "")
        usage = UsageRecord(role="planner", mode=planner.mode, **result.usage.model_dump())
        return self.projects.create(board, idea=idea, kind="plan", message=message, panel=panel, usage=usage)

    def create_from_storyboard(self, board: Storyboard, panel: list[str] | None = None, idea: str = "") -> Version:
        return self.projects.create(
            board, idea=idea or board.logline, kind="import", message="hand-written storyboard", panel=panel
        )
