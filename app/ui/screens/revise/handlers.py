"""The Revise screen's handlers: one class whose methods the page's events call with the components' values (a test
calls them the same way, no browser). The refiner runs as a job the method follows; Commit makes one version."""

from __future__ import annotations

import json

import gradio as gr

from app.server.jobs import Task
from app.ui import scenes
from app.ui.common import follow, md, need_project, progress_html, thumbs, ver
from app.ui.screens.revise.values import decisions, review_json


class ReviseHandlers:
    """What the Revise screen's controls (and its two API routes) do, over the Studio and the server's jobs."""

    def __init__(self, studio, jobs):
        self.studio, self.jobs = studio, jobs

    def review_value(self, pid, record) -> str:
        v = self.studio.version(pid, record.version)
        notes = {n.id: n.text for n in self.studio.notes(pid, record.version)}
        personas = {pid_: p.name for pid_, p in self.studio.personas_of(v).items()}
        return review_json(
            record, notes, personas, thumbs(self.studio, self.studio.render_info(pid, record.version)), v.storyboard
        )

    def outcome(self, record) -> str:
        if record.accepted_as:
            return f"This proposal on v{record.version} was committed as v{record.accepted_as}."
        return (
            f"Proposal on v{record.version} ({md(record.mode)}), scope {md(record.scope.label())}: "
            f"{len(record.proposal.edits)} edit(s) to review."
        )

    def final(self, pid):
        def show(j):
            if j.state == "done":
                return self.review_value(pid, j.result), self.outcome(j.result), ""
            return gr.skip(), gr.skip(), progress_html(j)

        return show

    def load_proposal(self, pid, v):
        """The version's latest proposal; while the refiner is writing one (a reloaded page), its progress."""
        from storage.repository import NotFound

        if not pid:
            yield None, "", ""
            return
        job = self.jobs.active(pid, "refine")
        if job is not None:
            yield from follow(self.jobs, job, lambda j: (gr.skip(), gr.skip(), progress_html(j)), self.final(pid))
            return
        try:
            record = self.studio.proposal(pid, ref=ver(v))
        except NotFound:
            yield None, "", ""
            return
        yield self.review_value(pid, record), self.outcome(record), ""

    def ask_refiner(self, pid, v, scene_id=scenes.WHOLE):
        pid, _, job = scenes.start(
            self.jobs,
            self.studio,
            "refine",
            pid,
            v,
            scene_id,
            lambda n, scope: Task("refine", (pid, n), {"scope": scope}),
            "refiner on",
        )
        yield from follow(self.jobs, job, lambda j: (gr.skip(), gr.skip(), progress_html(j)), self.final(pid))

    def commit(self, pid, value):
        from app.errors import StudioError, one_line

        pid = need_project(pid)
        proposal_id, only, texts = decisions(value)
        try:
            if not only:
                raise StudioError("accept at least one edit (or leave the proposal as it is)")
            res = self.studio.accept(pid, proposal_id, only=only, edits=texts, once=True)
        except StudioError as e:  # one message; the review shows the proposal as it now stands
            data = json.loads(self.review_value(pid, self.studio.proposal(pid, proposal_id)))
            if data["accepted_as"] is None:
                data["edits"] = json.loads(value)["edits"]  # keep the creator's decisions for another try
            return gr.skip(), json.dumps(data), f"Nothing committed: {md(one_line(e))}"
        nv = res.version
        msg = (
            f"Committed v{nv.number} from v{nv.parent_number}: accepted edit(s) {', '.join(map(str, res.applied))}"
            + (f", {len(texts)} edited by hand" if texts else "")
            + "."
        )
        if res.branched:
            msg += f" **Branched:** v{nv.parent_number} already had a newer version, so this is a new branch."
        return nv.number, self.review_value(pid, self.studio.proposal(pid, proposal_id)), msg

    def accept_api(self, pid: str, proposal_id: str, accept: list, edits: dict) -> dict:
        """API: accept edit numbers `accept` (1-based), with `edits` {number: new text}; returns the new version."""
        res = self.studio.accept(
            need_project(pid),
            proposal_id or None,
            only=[int(x) for x in accept] or None,
            edits={int(k): str(t) for k, t in (edits or {}).items()},
        )
        return res.model_dump(mode="json")

    def refine_api(self, pid: str, version: float | None, scene: str = "") -> dict:
        """API: the refiner's proposal for a version (JSON), for one scene when `scene` names one."""
        pid = need_project(pid)
        number = self.studio.version(pid, ver(version)).number
        return self.studio.refine(pid, number, scenes.scope_of(self.studio, pid, number, scene)).model_dump(mode="json")
