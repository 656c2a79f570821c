"""`kill -9` of a chief process in the middle of render, critique and accept. After a restart the project
opens, no version is lost or half-written, finished clips are reused, and the action runs again."""

from __future__ import annotations

import json
import os
import random
import signal

from tests.agents.openai_server import FakeOpenAI, Reply, ok
from tests.fault.conftest import (
    assert_sound,
    board,
    chief,
    count,
    make_studio,
    media_files,
    popen_chief,
    popen_python,
    query,
    wait_for,
)
from tests.fault.test_llm_failures import critique_answer


def kill9(proc) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def reopens(home, pid) -> dict:
    """`chief show` in a fresh process: the project opens."""
    res = chief(home, "show", pid, "--json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_kill_during_render(home):
    n = 10
    studio = make_studio(home)
    pid = studio.create_from_storyboard(board(n)).project_id

    proc = popen_chief(home, "render", pid, "--json")
    wait_for(lambda: count(home, "clips") >= 2, what="two clips to land", proc=proc)
    kill9(proc)
    landed = count(home, "clips")
    assert landed < n, "the render finished before the kill: use more shots"

    versions = assert_sound(home, pid)
    assert len(versions) == 1
    shown = reopens(home, pid)
    assert shown["render"] is None and count(home, "renders") == 0  # no film from a killed render

    res = chief(home, "render", pid, "--json")  # the interrupted action runs again
    assert res.returncode == 0, res.stderr
    info = json.loads(res.stdout)
    assert (info["reused"], info["rendered"]) == (landed, n - landed)  # finished clips are reused
    assert os.path.getsize(info["film"]) > 0
    assert_sound(home, pid)


def test_kill_during_critique(home):
    studio = make_studio(home)
    pid = studio.create_from_storyboard(board(3), panel=["film_critic", "teen_scroller"]).project_id
    studio.render(pid)
    with FakeOpenAI(responder=lambda body: Reply(body=ok(critique_answer()).body, delay=30)) as server:
        env = {"CHIEF_AGENTS": "llm", "CHIEF_LLM_BASE_URL": server.base_url, "CHIEF_LLM_TIMEOUT": "60"}
        proc = popen_chief(home, "critique", pid, "--json", **env)
        wait_for(lambda: server.in_flight >= 2, what="both critics' requests in flight", proc=proc)
        kill9(proc)
        assert count(home, "critiques") == 0 and count(home, "agent_calls") == 0
        assert_sound(home, pid)
        assert reopens(home, pid)["scores"] == {}

        server.responder = lambda body: ok(critique_answer())
        res = chief(home, "critique", pid, "--json", **env)
    assert res.returncode == 0, res.stderr
    assert sorted(c["persona_id"] for c in json.loads(res.stdout)["critiques"]) == ["film_critic", "teen_scroller"]
    assert count(home, "critiques") == 2
    assert_sound(home, pid)


ACCEPT_LOOP = """
import os
from app.config import load_config
from app.studio import Studio
st = Studio(load_config({{"home": {home!r}, "narration": False, "agents": "offline"}}, environ={{}}))
print("ready", flush=True)
for i in range(10000):  # each accept edits the text by hand: accepting the very same edits twice is refused
    r = st.accept({pid!r}, {prop!r}, edits={{1: f"shot 1 brighter, take {{os.getpid()}}.{{i}}"}})
    print(r.version.number, flush=True)  # printed only after the transaction committed
"""


def test_kill_during_accept(home):
    """Accept in a tight loop and kill at random moments: every version reported as made exists and is whole."""
    studio = make_studio(home)
    pid = studio.create_from_storyboard(board(3)).project_id
    studio.add_note(pid, "make shot 1 brighter", "s1")
    prop = studio.refine(pid).id
    rng = random.Random(7)
    made: list[int] = []
    for _ in range(3):
        proc = popen_python(home, ACCEPT_LOOP.format(home=str(home), pid=pid, prop=prop))
        assert proc.stdout.readline().strip() == "ready"
        first = proc.stdout.readline().strip()
        assert first.isdigit(), proc.stderr.read()
        made.append(int(first))
        wait_for(lambda: count(home, "versions") >= made[-1] + rng.randint(1, 12), what="more accepts", proc=proc)
        os.kill(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate(timeout=30)
        made += [int(x) for x in out.split() if x.isdigit()]

        versions = assert_sound(home, pid)
        numbers = {v[0] for v in versions}
        assert set(made) <= numbers  # no committed accept was lost
        parents = {v[2] for v in versions if v[0] > 1}
        assert parents == {versions[0][1]}  # every accept is a whole child of v1
        rows = query(home, "SELECT accepted_version_id FROM proposals WHERE id=?", prop)
        assert rows[0][0] in {v[1] for v in versions}

    reopens(home, pid)
    res = chief(home, "accept", pid, "--proposal", prop, "--json", "--version", "1")
    assert res.returncode == 0, res.stderr
    after = assert_sound(home, pid)
    assert json.loads(res.stdout)["version"]["number"] == len(after)
    assert media_files(home) == []  # accept writes no media
