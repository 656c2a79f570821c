"""The Revise screen's handlers without a browser: `ReviseHandlers` over a real Studio (the embedded refiner) and the
server's real jobs: a note, the refiner's proposal as the review's JSON, Commit once."""

from __future__ import annotations

import json

import pytest

from app.server.jobs import Jobs, in_process
from app.ui.screens.revise import ReviseHandlers
from tests.conftest import tiny_board


@pytest.fixture
def revise(studio):
    pid = studio.create_from_storyboard(tiny_board(4)).project_id
    return ReviseHandlers(studio, Jobs(runner=in_process(studio))), pid


def test_a_proposal_is_reviewed_and_committed_once(revise, studio):
    h, pid = revise
    assert next(h.load_proposal(pid, 1)) == (None, "", "")  # no proposal yet
    studio.add_note(pid, "Make shot s3 a slow push in", "s3", 1)
    value, message, progress = list(h.ask_refiner(pid, 1, ""))[-1]
    data = json.loads(value)
    assert data["version"] == 1 and data["edits"] and "edit(s) to review" in message and progress == ""
    assert any("your note “Make shot s3 a slow push in”" in e["sources"] for e in data["edits"])

    none = json.dumps({**data, "edits": [{**e, "accept": False} for e in data["edits"]]})
    number, kept, said = h.commit(pid, none)
    assert said.startswith("Nothing committed: accept at least one edit")
    assert [e["accept"] for e in json.loads(kept)["edits"]] == [False] * len(data["edits"])  # decisions kept

    first = json.dumps({**data, "edits": [{**e, "accept": e["n"] == 1} for e in data["edits"]]})
    number, shown, said = h.commit(pid, first)
    assert number == 2 and said.startswith("Committed v2 from v1: accepted edit(s) 1")
    assert json.loads(shown)["accepted_as"] == 2
    again = h.commit(pid, first)  # a second click
    assert again[2].startswith("Nothing committed") and [v.number for v in studio.versions(pid)] == [1, 2]
    assert next(h.load_proposal(pid, 1))[1] == "This proposal on v1 was committed as v2."
