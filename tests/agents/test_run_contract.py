"""The run contract (storage/run.py): one stop flag and one Cancelled for renders, agents and jobs; typed progress;
every role takes a RunContext and honours it (the offline ones here, the LLM ones in their tests, Ray's in
tests/cluster)."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from agents.offline.critic import OfflineCritic
from agents.offline.planner import OfflinePlanner
from agents.offline.refiner import OfflineRefiner
from agents.personas import builtin_personas
from storage.run import Cancelled, CancelToken, RunContext, WatchProgress
from storage.schema import Note
from tests.agents.openai_server import ok

ROOT = Path(__file__).resolve().parents[2]


def test_one_stop_flag_and_one_cancelled_everywhere():
    import agents.base
    import agents.streaming
    import generation.base
    import storage.run

    assert generation.base.Cancelled is agents.base.Cancelled is storage.run.Cancelled
    assert generation.base.CancelToken is storage.run.CancelToken
    assert not issubclass(Cancelled, agents.base.AgentError)  # a Stop is an outcome, not an agent's failure
    token = CancelToken()
    assert not agents.streaming.is_cancelled(token)
    token.cancel()
    assert agents.streaming.is_cancelled(token)
    with pytest.raises(Cancelled, match="stopped here"):
        token.raise_if_cancelled("stopped here")


def test_a_child_token_stops_with_its_parent_and_alone():
    job = CancelToken()
    panel, other = CancelToken(parent=job), CancelToken(parent=job)
    panel.cancel()  # one critic failed: the panel stops, the job goes on
    assert panel.cancelled and not job.cancelled and not other.cancelled
    job.cancel()
    assert other.cancelled


@pytest.mark.parametrize("module", ["storage.run", "storage.fileio"])
def test_the_modules_generation_may_import_use_only_the_standard_library(module):
    code = (
        f"import sys, {module}; "
        "ours = sorted(m for m in sys.modules if m.split('.')[0] in ('storage', 'agents', 'generation', 'app', "
        "'pydantic', 'prompts')); print(ours)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.strip() == str(["storage", module])


def _imports(folder: Path) -> set[tuple[str, str]]:
    found = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            found |= {(str(path.relative_to(ROOT)), n) for n in names}
    return found


@pytest.mark.parametrize("layer", ["generation", "storage"])
def test_generation_and_storage_import_nothing_of_ours_but_the_contract(layer):
    ours = ("app", "agents", "prompts", "generation", "storage")
    wrong = sorted(
        (path, name)
        for path, name in _imports(ROOT / layer)
        if name.split(".")[0] in ours and name.split(".")[0] != layer and name not in ("storage.run", "storage.fileio")
    )
    assert wrong == []


def test_every_role_takes_the_run_context():
    from agents.critic import LLMCritic
    from agents.planner import LLMPlanner
    from agents.refiner import LLMRefiner
    from app.cluster import RemoteCritic, RemotePlanner, RemoteRefiner

    for cls, method in [
        (LLMPlanner, "plan"),
        (OfflinePlanner, "plan"),
        (RemotePlanner, "plan"),
        (LLMCritic, "critique"),
        (OfflineCritic, "critique"),
        (RemoteCritic, "critique"),
        (LLMRefiner, "refine"),
        (OfflineRefiner, "refine"),
        (RemoteRefiner, "refine"),
    ]:
        params = list(inspect.signature(getattr(cls, method)).parameters)
        assert params[-1] == "ctx", (cls.__name__, params)


def test_offline_roles_stop_on_a_cancelled_context(tmp_path):
    from tests.conftest import tiny_board

    stopped = CancelToken()
    stopped.cancel()
    ctx = RunContext(cancel=stopped)
    board = tiny_board(2)
    with pytest.raises(Cancelled):
        OfflinePlanner().plan("a keeper and a whale", 1, ctx)
    with pytest.raises(Cancelled):
        OfflineRefiner().refine(board, [Note(id="n_1", text="brighter", shot_id="s1")], [], ctx)
    with pytest.raises(Cancelled):
        OfflineCritic().critique(builtin_personas()["film_critic"], _film(board, tmp_path), ctx)


def test_the_offline_critic_reports_what_it_watches(tmp_path):
    from tests.conftest import tiny_board

    events = []
    res = OfflineCritic().critique(
        builtin_personas()["film_critic"], _film(tiny_board(2), tmp_path), RunContext(progress=events.append)
    )
    assert res.value.persona_id == "film_critic"
    assert events == [WatchProgress(persona="film_critic", chunk=1, chunks=1, status="watching")]


def _film(board, folder: Path):
    from PIL import Image

    from agents.base import FilmView, SampledFrame

    frames = []
    for k, (shot, start, _) in enumerate(board.timeline()):
        path = folder / f"{shot.shot_id}.png"
        Image.new("RGB", (64, 36), (40 + 80 * k, 60, 120)).save(path)
        frames.append(SampledFrame(shot.shot_id, 0, start + 0.5, str(path)))
    return FilmView(board, frames, intent="a keeper and a whale")


def test_an_llm_role_reports_typed_progress_and_ends_at_the_runs_deadline(server, client, storyboard):
    """The run's deadline bounds the role when it comes before the client's own action_timeout (here none)."""
    import time

    from agents.base import AgentError
    from agents.refiner import LLMRefiner
    from storage.run import RefineProgress

    answer = {"summary": "nothing to do", "edits": [], "not_changed": []}
    server.script(ok(answer, token_delay=0.25, stall_after=6))  # a few tokens, then silence on an open connection
    events = []
    ctx = RunContext(progress=events.append, deadline=time.monotonic() + 5)
    with pytest.raises(AgentError, match="this action's deadline of 4.* s passed; the connection was closed"):
        LLMRefiner(client).refine(storyboard, [], [], ctx)
    assert events and all(isinstance(e, RefineProgress) for e in events) and events[-1].tokens >= 2
