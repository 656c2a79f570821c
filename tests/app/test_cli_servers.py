"""Issue 26, item 7: the CLI keeps to the settings it names, says only what can be done, and counts what failed."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from app.cli import main
from app.cli.loop import format_proposal
from storage.records import ProposalRecord
from storage.schema import Proposal, Unchanged, utcnow
from tests.agents.openai_server import FakeOpenAI, error, ok


def chief(home, *args, env=None):
    return CliRunner().invoke(main, ["--home", str(home), *args], env={"CHIEF_NARRATION": "0", **(env or {})})


def test_new_takes_as_many_minutes_as_max_film_minutes_allows(tmp_path):
    made = chief(tmp_path / "home", "--json", "new", "A keeper and a gull wait out a winter", "--minutes", "20")
    assert made.exit_code == 0, made.output
    board = json.loads(made.stdout)["version"]["storyboard"]
    assert sum(s["duration"] for sc in board["scenes"] for s in sc["shots"]) == pytest.approx(1200, abs=1)
    over = chief(tmp_path / "home", "new", "A keeper", "--minutes", "21")
    assert over.exit_code == 1 and "over the max_film_minutes setting (20)" in over.output
    assert "Traceback" not in over.output and over.output.count("max_film_minutes") == 1
    listed = json.loads(chief(tmp_path / "home", "--json", "projects").stdout)
    assert len(listed) == 1  # the refused plan wrote nothing


def test_a_proposal_with_no_edits_does_not_say_accept():
    record = ProposalRecord(
        id="pr_1",
        version=1,
        created_at=utcnow(),
        mode="offline",
        proposal=Proposal(summary="nothing to change", edits=[], not_changed=[Unchanged(what="x", why="y")]),
    )
    text = format_proposal(record)
    assert "accept with" not in text and "no edits to accept" in text


def test_the_summary_counts_the_edits_that_survive_the_checks(make_studio):
    """The refiner wrote '3 edits'; one is on an unknown shot and one outside the scope: the proposal says 1 of 3."""
    from tests.conftest import tiny_board

    def edit(shot):
        return {
            "op": "set",
            "shot_id": shot,
            "field": "prompt",
            "character": None,
            "old": None,
            "new": "a storm",
            "rationale": "r",
            "sources": [],
        }

    answer = {"summary": "3 edits", "edits": [edit("s1"), edit("s4"), edit("s99")], "not_changed": []}
    with FakeOpenAI(lambda body: ok(answer)) as server:
        st = make_studio(llm_base_url=server.base_url, api_key="sk-x", refiner_model="m", llm_max_retries=0)
        pid = st.create_from_storyboard(tiny_board(4)).project_id
        board = st.version(pid).storyboard
        first = board.scenes[0]
        st.add_note(pid, "darker", shot_id=first.shots[0].shot_id)
        prop = st.refine(pid, scope=st.scope(pid, None, first.scene_id, None))
    kept = len(prop.proposal.edits)
    assert kept < 3 and prop.proposal.summary.startswith(f"3 edits — {kept} of the 3 edit(s) proposed are kept")


def test_a_failed_proposal_still_counts_its_requests(make_studio):
    from tests.conftest import tiny_board

    with FakeOpenAI(lambda body: error(500, "boom")) as server:
        st = make_studio(llm_base_url=server.base_url, api_key="sk-x", refiner_model="m", llm_max_retries=1)
        pid = st.create_from_storyboard(tiny_board(2)).project_id
        st.add_note(pid, "darker")
        with pytest.raises(Exception, match="boom"):
            st.refine(pid)
        assert st.usage(pid).roles["refiner"].calls == len(server.requests) == 2
